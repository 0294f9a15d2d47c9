// xqry: the client of a running xretractor (tools.md §2): stream list, detail,
// hello, kill, ad hoc queries and subscriptions printed as raw, graphite,
// influxdb, gnuplot, CSV or JSON lines. This file: options, commands and the
// connection; the output side (formats, JSON lines, YAML) is xqry_render.cpp.
#include <fmt/format.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config.hpp"
#include "ipc/ipc.hpp"
#include "log.hpp"
#include "tools/version.hpp"
#include "xqry.hpp"

namespace {

using namespace xqry;

// Exit codes (docs/live.md, "Exit codes of xqry").
constexpr int kExitOk = 0;
constexpr int kExitNoCommand = 1;
constexpr int kExitNotFound = 2;  // unknown stream, detail not found, ad hoc or remove rejected
constexpr int kExitInternal = 4;
constexpr int kExitNoServer = 10;
constexpr int kExitTooManyClients = 16;  // EBUSY
constexpr int kExitArgs = 22;            // EINVAL
constexpr int kExitStreamRemoved = 43;   // EIDRM
constexpr int kExitNoData = 61;          // ENODATA
constexpr int kExitNoQueue = 63;         // ENOSR
constexpr int kExitBadHello = 71;        // EPROTO
constexpr int kExitTimeout = 110;        // ETIMEDOUT

tools::Config gConfig;
// Diagnostics: the text alone on stderr, with a timestamp in <tmp>/xqry.log (set in main).
tools::LogSink gLog{.stamp = true};
std::atomic<bool> gStop{false};
void onSignal(int) { gStop.store(true); }

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

// ---------------------------------------------------------------- the connection
// The server refused the connection: it serves ipc.max_clients already.
struct TooManyClients : std::runtime_error {
  using std::runtime_error::runtime_error;
};
class Session {
 public:
  explicit Session(const Options& o) : o_(o) {}

  // 0, or the exit code after a diagnostic.
  int connect() {
    const std::string path = ipc::socketPath(gConfig.lockDir, o_.server);
    std::string err;
    if (o_.waitServer) {
      const int poll = gConfig.serverStartupPollMs;
      const int attempts = std::max(1, int(int64_t(gConfig.serverStartupWaitS) * 1000 / poll));
      for (int i = 0; i < attempts && !c_; ++i) {
        c_ = ipc::Client::connect(path, err);
        if (!c_ && i + 1 < attempts) std::this_thread::sleep_for(std::chrono::milliseconds(poll));
      }
      if (!c_) {
        gLog(fmt::format("server not available after {} seconds", gConfig.serverStartupWaitS));
        if (o_.format == Format::Jsonl) jsonError("server_unavailable", "server not available");
        return kExitNoServer;
      }
      return kExitOk;
    }
    c_ = ipc::Client::connect(path, err);
    if (!c_) {
      gLog("IPC: " + err);
      if (o_.format == Format::Jsonl) jsonError("server_unavailable", err);
      return kExitNoServer;
    }
    return kExitOk;
  }

  // One request; on a timeout or a broken connection the reply is an empty tree
  // (as the reference's map lookup), with "server not found" logged.
  ipc::Client::Status ask(const std::string& message, const std::string& arg, ipc::Tree& reply) {
    reply = ipc::Tree();
    std::string err;
    auto st = request(message, arg, reply, &err);
    if (st == ipc::Client::Status::Timeout) gLog("server not found");
    else if (st != ipc::Client::Status::Ok) gLog("IPC: " + err);
    return st;
  }

  // One request; throws TooManyClients when the server refused the connection.
  ipc::Client::Status request(const std::string& message, const std::string& arg, ipc::Tree& reply, std::string* err,
                              const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    auto st = c_->request(message, arg, reply, replyMs(), err, extra);
    if (st == ipc::Client::Status::Error && err->find("too many clients") != std::string::npos)
      throw TooManyClients(*err);
    return st;
  }

  ipc::Client& client() { return *c_; }
  static int replyMs() { return int(std::min<int64_t>(int64_t(gConfig.clientResponseMaxFails) * 10, INT32_MAX)); }

 private:
  const Options& o_;
  std::unique_ptr<ipc::Client> c_;
};

const ipc::Tree& streamsOf(const ipc::Tree& get) {
  const ipc::Tree* s = get.path("db.stream");
  if (!s) throw std::runtime_error("No such node (db.stream)");  // also an idle instance's reply (the reference's)
  return *s;
}

std::string idOf(const std::pair<std::string, ipc::Tree>& e) {
  return e.second.value.empty() ? e.first : e.second.value;
}

Schema schemaOf(const ipc::Tree& d) {
  Schema s;
  s.delta = d.get("db.duration");
  s.query = d.get("db.processed_line");
  const ipc::Tree* f = d.path("db.field");
  const ipc::Tree* ft = d.path("db.field_type");
  if (f)
    for (auto& [name, t] : f->children) {
      const ipc::Tree* ty = ft ? ft->child(name) : nullptr;
      s.fields.emplace_back(name, ty ? ty->value : "");
    }
  for (auto& [name, type] : s.fields) {
    int n = 1;
    size_t b = type.find('[');
    if (b != std::string::npos && type.compare(0, 6, "STRING") != 0) n = std::max(1, atoi(type.c_str() + b + 1));
    if (n == 1) s.elements.push_back(name);
    else
      for (int k = 0; k < n; ++k) s.elements.push_back(fmt::format("{}[{}]", name, k));
  }
  return s;
}

Json yamlDocument() {
  Json doc;
  doc["apiVersion"] = "xqry/v1";
  return doc;
}

// ---------------------------------------------------------------- commands
int cmdHello(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("hello", "", r);
  const std::string v = r.get("db");
  if (v == "world") {
    if (o.format == Format::Jsonl) outJson(event("pong"));
    return kExitOk;
  }
  gLog("bad rcv: " + v);
  if (o.format == Format::Jsonl) jsonError("bad_reply", v);
  return kExitBadHello;
}

int cmdKill(Session& s, const Options&) {
  ipc::Tree r;
  s.ask("kill", "", r);
  return kExitOk;
}

int cmdStats(Session& s, const Options&) {
  ipc::Tree r;
  s.ask("status", "", r);
  const ipc::Tree* db = r.child("db");
  if (!db) throw std::runtime_error("No such node (db)");
  Json status = Json::object();
  for (auto& [k, v] : db->children) appendEntry(status, k, v.value);
  Json doc = yamlDocument();
  doc["status"] = std::move(status);
  outYaml(doc);
  return kExitOk;
}

int cmdDirJson(const ipc::Tree& streams) {
  Json list = Json::array();
  for (auto& e : streams.children) {
    Json i;
    i["name"] = idOf(e);
    i["delta"] = e.second.get("duration");
    list.push_back(std::move(i));
  }
  Json j = event("streams");
  j["streams"] = std::move(list);
  outJson(j);
  return kExitOk;
}

int cmdDir(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("get", "", r);
  const ipc::Tree& streams = streamsOf(r);
  if (o.format == Format::Jsonl) return cmdDirJson(streams);
  std::vector<std::array<std::string, 6>> rows;
  for (auto& e : streams.children)
    rows.push_back({idOf(e), e.second.get("duration"), e.second.get("size"), e.second.get("count"),
                    e.second.get("location"), e.second.get("cap")});
  size_t w[6] = {};
  for (auto& row : rows)
    for (int k = 0; k < 6; ++k) w[k] = std::max(w[k], row[size_t(k)].size());
  std::string text;
  for (auto& row : rows) {
    text += '|';
    for (int k = 0; k < 6; ++k) text += fmt::format("{:>{}}|", row[size_t(k)], w[k]);
    text += '\n';
  }
  out(text);
  return kExitOk;
}

int cmdDirYaml(Session& s, const Options&) {
  ipc::Tree r;
  s.ask("get", "", r);
  Json list = Json::array();
  for (auto& e : streamsOf(r).children) {
    Json i;
    i["name"] = idOf(e);
    i["delta"] = e.second.get("duration");
    if (const std::string size = e.second.get("size"); size != "-1") i["size"] = size;
    i["count"] = e.second.get("count");
    if (const std::string loc = e.second.get("location"); !loc.empty()) i["location"] = loc;
    list.push_back(std::move(i));
  }
  Json doc = yamlDocument();
  doc["streams"] = std::move(list);
  outYaml(doc);
  return kExitOk;
}

int notFound(const Options& o) {
  gLog("not found");
  if (o.format == Format::Jsonl) jsonError("unknown_stream", o.detail);
  return kExitNotFound;
}

int cmdDetail(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("get", "", r);
  if (!streamsOf(r).child(o.detail)) return notFound(o);
  ipc::Tree d;
  s.ask("detail", o.detail, d);
  if (!d.path("db.stream")) return notFound(o);
  const Schema sc = schemaOf(d);
  if (o.format == Format::Jsonl) {
    outJson(schemaEvent(o.detail, sc));
    return kExitOk;
  }
  Json stream;
  stream["name"] = d.get("db.stream");
  stream["delta"] = sc.delta;
  // RATIONAL results rounded to the nearest representable fraction (shown when any were).
  if (const std::string rounded = d.get("db.rounded"); !rounded.empty() && rounded != "0") stream["rounded"] = rounded;
  // DEVICE sources: records read and records NULL for want of data by the deadline.
  if (d.path("db.misses")) {
    stream["reads"] = d.get("db.reads");
    stream["misses"] = d.get("db.misses");
  }
  // Values out of their type's range (stored NULL), MQTT sources and PUBLISH sinks (docs/connectors.md).
  for (const char* key :
       {"out_of_range", "connected", "received", "malformed", "dropped", "published", "publish_dropped",
        "publish_queued"})
    if (d.path(std::string("db.") + key)) stream[key] = d.get(std::string("db.") + key);
  Json fields = Json::object();
  for (auto& [name, type] : sc.fields) {
    Json field;
    field["type"] = type;
    appendEntry(fields, o.detail + "." + name, std::move(field));
  }
  Json doc = yamlDocument();
  doc["stream"] = std::move(stream);
  doc["query"] = sc.query;
  doc["fields"] = std::move(fields);
  outYaml(doc);
  return kExitOk;
}

// A command whose reply is "OK" or the reason it was refused (exit 2).
int cmdExpectOk(Session& s, const Options& o, const char* message, const std::string& argument) {
  ipc::Tree r;
  s.ask(message, argument, r);
  const std::string v = r.get("db");
  if (v == "OK") return kExitOk;
  gLog("bad rcv: " + v);
  if (o.format == Format::Jsonl) jsonError("rejected", v);
  return kExitNotFound;
}

int cmdRemove(Session& s, const Options& o) { return cmdExpectOk(s, o, "remove", o.remove); }
int cmdAdhoc(Session& s, const Options& o) { return cmdExpectOk(s, o, "adhoc", o.adhoc); }
// The whole file goes to the server, which compiles it and swaps plans at a
// slot boundary (an empty file makes the instance idle).
int cmdReset(Session& s, const Options& o) {
  std::ifstream in(o.reset, std::ios::binary);
  if (!in) {
    gLog("xqry: cannot read " + o.reset);
    return kExitNotFound;
  }
  std::stringstream text;
  text << in.rdbuf();
  return cmdExpectOk(s, o, "reset", text.str());
}

// The terminal in non-canonical mode while a subscription runs, so one key stops it.
class KeyWatch {
 public:
  explicit KeyWatch(bool on) {
    if (!on || !isatty(0) || tcgetattr(0, &saved_) != 0) return;
    termios t = saved_;
    t.c_lflag &= tcflag_t(~(ICANON | ECHO));
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    active_ = tcsetattr(0, TCSANOW, &t) == 0;
  }
  ~KeyWatch() {
    if (active_) tcsetattr(0, TCSANOW, &saved_);
  }
  bool pressed() const {
    if (!active_) return false;
    pollfd p{0, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

int unknownStream(const Options& o) {
  gLog(fmt::format("xqry: {}: stream unknown to the server", o.select));
  if (o.format == Format::Jsonl) jsonError("unknown_stream", o.select);
  return kExitNotFound;
}

// Asks for the stream list, the field names (all formats but raw) and the
// subscription; 0, or the exit code after a diagnostic.
int subscribe(Session& s, const Options& o, Schema& schema) {
  const std::string& name = o.select;
  const bool json = o.format == Format::Jsonl;
  ipc::Tree r;
  std::string err;
  auto st = s.request("get", "", r, &err);
  if (st != ipc::Client::Status::Ok) {
    gLog(fmt::format("xqry: {}: server did not answer in time{}", name, err.empty() ? "" : " (" + err + ")"));
    if (json) jsonError("timeout", "server did not answer in time");
    return kExitTimeout;
  }
  const ipc::Tree* streams = r.path("db.stream");
  if (!streams || !streams->child(name)) return unknownStream(o);
  if (o.format != Format::Raw) {  // field names, asked before `show` so no data interleaves
    ipc::Tree d;
    if (s.request("detail", name, d, &err) == ipc::Client::Status::Ok) schema = schemaOf(d);
  }
  std::vector<std::pair<std::string, std::string>> extra;
  if (o.from >= 0) extra.push_back({"from", std::to_string(o.from)});
  st = s.request("show", name, r, &err, extra);
  const std::string reply = r.get("db");
  if (st == ipc::Client::Status::Ok && reply.empty()) return kExitOk;
  if (reply.rfind("error: unknown stream", 0) == 0) return unknownStream(o);
  gLog(fmt::format("xqry: {}: server did not create the client's response queue{}", name,
                   reply.empty() ? (err.empty() ? "" : " (" + err + ")") : " (" + reply + ")"));
  if (json) jsonError("no_queue", "server did not create the client's response queue");
  return kExitNoQueue;
}

// Renders the subscription's records until it ends; the reason it ended.
std::string receive(Session& s, const Options& o, const KeyWatch& keys, Renderer& view, int64_t& rendered) {
  using clock = std::chrono::steady_clock;
  const int noDataMs = gConfig.queryNoDataTimeoutMs;
  auto lastData = clock::now();
  std::string err;
  std::vector<std::string> values;
  std::vector<bool> nulls;
  for (;;) {
    if (gStop.load() || keys.pressed()) return "interrupted";
    ipc::Tree m;
    const auto st = s.client().receive(m, 50, &err);
    if (st == ipc::Client::Status::Timeout) {
      if (clock::now() - lastData < std::chrono::milliseconds(noDataMs)) continue;
      gLog(fmt::format("No data received for {} ms, assuming server is dead.", noDataMs));
      return "idle_timeout";
    }
    if (st != ipc::Client::Status::Ok) {
      gLog(fmt::format("xqry: {}: {}", o.select, err));
      return "server_stopped_or_reloaded";
    }
    lastData = clock::now();
    const std::string sname = m.get("stream");
    if (sname == ipc::kEndMarker) return m.get("reason") == "removed" ? "stream_removed" : "server_stopped_or_reloaded";
    if (sname != o.select) continue;
    if (const ipc::Tree* lost = m.path("lost")) {  // records the server could not send (or no longer holds)
      gLog(fmt::format("xqry: lost {} records of {}", lost->value, o.select));
      view.lost(lost->value);
      continue;
    }
    ipc::recordOf(m, values, nulls);
    const ipc::Tree* n = m.path("n");
    const ipc::Tree* t = m.path("t");
    view.record(values, nulls, n ? n->value : "", t ? t->value : "");
    ++rendered;
    if (o.limit > 0 && rendered >= o.limit) {
      if (o.kill) {
        ipc::Tree kr;
        s.client().request("kill", "", kr, Session::replyMs(), &err);
      }
      return "limit";
    }
  }
}

int cmdSelect(Session& s, const Options& o) {
  Schema schema;
  if (int rc = subscribe(s, o, schema)) return rc;
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGHUP, onSignal);
  KeyWatch keys(!o.needCtrlC);
  Renderer view(o, o.select, schema);
  view.start();
  int64_t rendered = 0;
  const std::string reason = receive(s, o, keys, view, rendered);
  const bool json = o.format == Format::Jsonl;
  if (reason == "stream_removed") {
    gLog(fmt::format("xqry: {}: the stream was removed from the running plan", o.select));
    if (json) jsonError("stream_removed", "the stream was removed from the running plan");
    return kExitStreamRemoved;
  }
  if (rendered == 0) {
    gLog(fmt::format("xqry: {}: no data in stream", o.select));
    if (json) jsonError("no_data", "no data in stream");
    return kExitNoData;
  }
  if (json && reason == "idle_timeout") jsonError("idle_timeout", "no data received");
  else view.end(reason);
  return kExitOk;
}

void addOptions(CLI::App& app, Options& o) {
  app.add_option("-s,--select,select", o.select, "subscribe to a stream and print its records");
  app.add_option("-t,--detail", o.detail, "describe one stream (YAML)");
  app.add_option("-a,--adhoc", o.adhoc, "send one SELECT, DECLARE or RULE ... DO DUMP to the running plan");
  app.add_option("--remove", o.remove, "remove a stream or rule imported ad hoc from the running plan");
  app.add_option("-q,--reset", o.reset,
                 "replace the whole plan with this RQL file at a slot boundary (an empty file: idle)");
  app.add_option("-m,--elimitqry", o.limit, "stop after N records (0 = unlimited)");
  app.add_option("--from", o.from, "with -s: replay the stored records from logical index N, then continue live")
      ->check(CLI::NonNegativeNumber);
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

using Command = int (*)(Session&, const Options&);

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
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
