// xqry: the client of a running xretractor (tools.md §2): stream list, detail,
// hello, kill, ad hoc queries and subscriptions printed as raw, graphite,
// influxdb, gnuplot, CSV or JSON lines. This file: the options, the choice of
// format and command, and main; the commands are in xqry_streams.cpp,
// xqry_subscribe.cpp and xqry_control.cpp, the connection in xqry_session.cpp,
// the output side (formats, JSON lines, YAML) in xqry_render.cpp.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "tools/version.hpp"
#include "xqry_commands.hpp"

namespace xqry {

tools::Config gConfig;
tools::LogSink gLog{.stamp = true};

}  // namespace xqry

namespace {

using namespace xqry;

// `x,y` / `x:y` (ymin 0) or `x,ymin,ymax` / `x:ymin:ymax`, integers, nothing after.
bool parseGnuplot(const std::string& s, int& x, int& ymin, int& ymax) {
  std::vector<long> v;
  const char* p = s.c_str();
  for (;;) {
    char* end = nullptr;
    errno = 0;
    long n = strtol(p, &end, 10);
    if (end == p || errno == ERANGE || n < INT32_MIN || n > INT32_MAX) return false;
    v.push_back(n);
    p = end;
    if (*p == 0) break;
    if (*p != ',' && *p != ':') return false;
    ++p;
  }
  if (v.size() == 2) {
    x = int(v[0]), ymin = 0, ymax = int(v[1]);
  } else if (v.size() == 3) {
    x = int(v[0]), ymin = int(v[1]), ymax = int(v[2]);
  } else {
    return false;
  }
  return true;
}

void addOptions(CLI::App& app, Options& o) {
  app.add_option("-s,--select,select", o.select, "subscribe to a stream and print its records");
  app.add_option("-t,--detail", o.detail, "describe one stream (YAML)");
  app.add_option("-a,--adhoc", o.adhoc, "send one SELECT, DECLARE or RULE ... DO DUMP to the running plan");
  app.add_option("--remove", o.remove, "remove a stream or rule imported ad hoc from the running plan");
  app.add_option("-q,--reset", o.reset,
                 "replace the whole plan with this RQL file at a slot boundary (an empty file: idle)");
  app.add_option("-m,--elimitqry", o.limit, "stop after N records (0 = unlimited)");
  app.add_option("--from", o.fromText,
                 "with -s: replay the stored records from logical index N (0 to 2^63-1), then continue live; "
                 "an N still to come waits for record N")
      ->type_name("N");
  app.add_flag("-n,--null", o.skipNull, "skip records whose fields are all NULL (raw)");
  app.add_flag("-l,--hello", o.hello, "diagnostic round trip");
  app.add_flag("-k,--kill", o.kill, "stop the server (with -s and -m N: after N records)");
  app.add_flag("-d,--dir", o.dir, "table of streams");
  app.add_flag("-y,--diryaml", o.diryaml, "stream list as YAML");
  app.add_flag("-r,--raw", o.raw, "raw output (default)");
  app.add_flag("-g,--graphite", o.graphite, "graphite output");
  app.add_flag("-f,--influxdb", o.influx, "influxdb line protocol output");
  app.add_option("-p,--gnuplot", o.gnuplot, "gnuplot output: x,y or x,ymin,ymax");
  app.add_flag("-z,--gnuplot-rtl", o.rtl, "gnuplot x axis reversed");
  app.add_flag("--csv", o.csv, "CSV output with a header line");
  app.add_flag("-j,--jsonl", o.jsonl, "JSON lines output (one event per line)");
  app.add_option("-e,--config", o.config, "TOML configuration file");
  app.add_flag("-c,--needctrlc", o.needCtrlC, "ignore key presses; only Ctrl+C stops");
  app.add_flag("-w,--wait-server", o.waitServer, "wait for the server to come up");
  app.add_option("-x,--server", o.server, "name of the server instance (xretractor --name)");
  app.add_flag("--stats", o.stats, "server IPC counters (clients, subscribers, dropped, disconnected)");
}

// --from N: digits only, 0 to 2^63-1 (INT64_MAX), into o.from; 0, or kExitArgs
// after a one-line message naming the option, the range and the value.
int fromIndex(Options& o) {
  if (!o.fromGiven) return kExitOk;
  const std::string& t = o.fromText;
  const bool digits = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (!digits || ec != std::errc() || end != t.data() + t.size()) {
    std::string shown;  // the value on the same line: control characters as '?'
    for (char c : t) shown += (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
    gLog(fmt::format("xqry: --from: a record index is a whole number from 0 to {} (2^63-1), digits only; got '{}'",
                     INT64_MAX, shown));
    return kExitArgs;
  }
  o.from = v;
  return kExitOk;
}

// Sets o.format (and the gnuplot window) from the flags; 0, or kExitArgs after the
// reference's message.
int chooseFormat(Options& o) {
  const bool gnuplot = !o.gnuplot.empty();
  if (int(o.raw) + int(o.graphite) + int(o.influx) + int(gnuplot) + int(o.csv) + int(o.jsonl) > 1) {
    out("Only one output format could be selected.\n");
    return kExitArgs;
  }
  if (gnuplot) {
    if (!parseGnuplot(o.gnuplot, o.gx, o.gymin, o.gymax)) {
      fprintf(stderr, "gnuplot mode need {x,y} or {x,ymin,ymax} parameters.");
      return kExitArgs;
    }
    if (o.gx <= 0) {
      out("gnuplot mode need x > 0.\n");
      return kExitArgs;
    }
    if (o.gymin >= o.gymax) {
      out("gnuplot mode need ymin < ymax.");
      return kExitArgs;
    }
  }
  if (o.rtl && !gnuplot) {
    fprintf(stderr, "--gnuplot-rtl requires --gnuplot/-p mode.\n");
    return kExitArgs;
  }
  o.format = o.graphite ? Format::Graphite
             : o.influx ? Format::Influx
             : gnuplot  ? Format::Gnuplot
             : o.csv    ? Format::Csv
             : o.jsonl  ? Format::Jsonl
                        : Format::Raw;
  return kExitOk;
}

// The one command the flags ask for, in the reference's order of precedence.
Command chooseCommand(const Options& o) {
  if (o.hello) return cmdHello;
  if (o.stats) return cmdStats;
  if (o.kill && o.limit == 0) return cmdKill;
  if (o.dir) return cmdDir;
  if (o.diryaml) return cmdDirYaml;
  if (!o.adhoc.empty()) return cmdAdhoc;
  if (!o.remove.empty()) return cmdRemove;
  if (!o.reset.empty()) return cmdReset;
  if (!o.detail.empty()) return cmdDetail;
  if (!o.select.empty() && o.select != "none") return cmdSelect;
  return nullptr;
}

int run(Options& o) {
  gConfig = tools::loadConfig(o.config.empty() ? std::nullopt : std::optional<std::string>(o.config));
  if (int rc = chooseFormat(o)) return rc;
  if (int rc = fromIndex(o)) return rc;
  if (o.limit < 0) o.limit = 0;
  const Command cmd = chooseCommand(o);
  if (!cmd) {
    gLog("no argument.");
    return kExitNoCommand;
  }
  Session s(o);
  if (int rc = s.connect()) return rc;
  return cmd(s, o);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {  // scripts written on other systems: one trailing CR
    size_t n = strlen(argv[i]);
    if (n && argv[i][n - 1] == '\r') argv[i][n - 1] = 0;
  }
  setvbuf(stdout, nullptr, _IONBF, 0);
  gLog.path = tools::tempPath("xqry.log");

  Options o;
  CLI::App app{"xqry: query a running xretractor"};
  addOptions(app, o);
  app.set_version_flag("--version", tools::versionText("xqry"));
  // A usage error is one line, as the checks of run() print theirs.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("xqry: ") + e.what() + " (xqry --help lists the options)\n";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error (an unknown option, a
    // missing or malformed value) is kExitArgs, as the checks in run() are.
    return app.exit(e) == 0 ? kExitOk : kExitArgs;
  }
  o.fromGiven = app.get_option("--from")->count() > 0;
  try {
    return run(o);
  } catch (const TooManyClients&) {
    gLog("xqry: the server refused the connection: too many clients (ipc.max_clients); try again later");
    if (o.jsonl) jsonError("too_many_clients", "too many clients");
    return kExitTooManyClients;
  } catch (const std::exception& e) {
    gLog(std::string("Std: ") + e.what());
    if (o.jsonl) jsonError("internal", e.what());
    return kExitInternal;
  }
}
