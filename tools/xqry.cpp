// xqry: the client of a running xretractor (tools.md §2): stream list, detail,
// hello, kill, ad hoc queries and subscriptions printed as raw, graphite,
// influxdb, gnuplot, CSV or JSON lines.
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
#include <ctime>
#include <deque>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config.hpp"
#include "ipc/ipc.hpp"

namespace {

tools::Config gConfig;
std::string gLogPath;
std::atomic<bool> gStop{false};
void onSignal(int) { gStop.store(true); }

// Diagnostics: the text alone on stderr, with a timestamp in <tmp>/xqry.log.
void logLine(const std::string& m) {
  fprintf(stderr, "%s\n", m.c_str());
  if (gLogPath.empty()) return;
  if (FILE* f = fopen(gLogPath.c_str(), "a")) {
    char ts[32];
    time_t now = time(nullptr);
    tm t{};
    localtime_r(&now, &t);
    strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &t);
    fprintf(f, "[%s] [%d] %s\n", ts, int(getpid()), m.c_str());
    fclose(f);
  }
}

// stdout is unbuffered: one write per rendered record or table.
void out(const std::string& s) { fwrite(s.data(), 1, s.size(), stdout); }

std::string jsonString(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) o += fmt::format("\\u{:04x}", c);
        else o += char(c);
    }
  }
  return o + "\"";
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

void jsonError(const std::string& code, const std::string& message) {
  out(fmt::format("{{\"version\":1,\"event\":\"error\",\"code\":{},\"message\":{}}}\n", jsonString(code),
                  jsonString(message)));
}

enum class Format { Raw, Graphite, Influx, Gnuplot, Csv, Jsonl };

struct Options {
  std::string select = "none", detail, adhoc, gnuplot, config, server, remove;
  int64_t limit = 0;
  bool skipNull = false, hello = false, kill = false, dir = false, diryaml = false, raw = false, graphite = false,
       influx = false, rtl = false, needCtrlC = false, waitServer = false, csv = false, jsonl = false, stats = false;
  Format format = Format::Raw;
  int gx = 0, gymin = 0, gymax = 0;  // gnuplot window
};

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
constexpr int kExitTooManyClients = 16;  // EBUSY
constexpr int kExitStreamRemoved = 43;   // EIDRM

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
        logLine(fmt::format("server not available after {} seconds", gConfig.serverStartupWaitS));
        if (o_.format == Format::Jsonl) jsonError("server_unavailable", "server not available");
        return 10;
      }
      return 0;
    }
    c_ = ipc::Client::connect(path, err);
    if (!c_) {
      logLine("IPC: " + err);
      if (o_.format == Format::Jsonl) jsonError("server_unavailable", err);
      return 10;
    }
    return 0;
  }

  // One request; on a timeout or a broken connection the reply is an empty tree
  // (as the reference's map lookup), with "server not found" logged.
  ipc::Client::Status ask(const std::string& message, const std::string& arg, ipc::Tree& reply) {
    reply = ipc::Tree();
    std::string err;
    auto st = request(message, arg, reply, &err);
    if (st == ipc::Client::Status::Timeout) logLine("server not found");
    else if (st != ipc::Client::Status::Ok) logLine("IPC: " + err);
    return st;
  }

  // One request; throws TooManyClients when the server refused the connection.
  ipc::Client::Status request(const std::string& message, const std::string& arg, ipc::Tree& reply,
                              std::string* err) {
    auto st = c_->request(message, arg, reply, replyMs(), err);
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
  if (!s) throw std::runtime_error("No such node (db.stream)");
  return *s;
}

std::string idOf(const std::pair<std::string, ipc::Tree>& e) { return e.second.value.empty() ? e.first : e.second.value; }

// Field names and types from a `detail` reply, expanded to one name per flat element.
struct Schema {
  std::string delta, query;
  std::vector<std::pair<std::string, std::string>> fields;  // name, TYPE
  std::vector<std::string> elements;
};

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

int elementCount(const std::string& type) {
  size_t b = type.find('[');
  return b == std::string::npos ? 1 : std::max(1, atoi(type.c_str() + b + 1));
}

std::string schemaJson(const std::string& stream, const Schema& s) {
  std::string f;
  for (auto& [name, type] : s.fields) {
    if (!f.empty()) f += ',';
    std::string base = type.substr(0, type.find('['));
    f += fmt::format("{{\"name\":{},\"type\":{},\"count\":{}}}", jsonString(name), jsonString(base), elementCount(type));
  }
  return fmt::format("{{\"version\":1,\"event\":\"schema\",\"stream\":{},\"delta\":{},\"query\":{},\"fields\":[{}]}}\n",
                     jsonString(stream), jsonString(s.delta), jsonString(s.query), f);
}

// ---------------------------------------------------------------- commands
int cmdHello(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("hello", "", r);
  const std::string v = r.get("db");
  if (v == "world") {
    if (o.format == Format::Jsonl) out("{\"version\":1,\"event\":\"pong\"}\n");
    return 0;
  }
  logLine("bad rcv: " + v);
  if (o.format == Format::Jsonl) jsonError("bad_reply", v);
  return 71;
}

int cmdKill(Session& s) {
  ipc::Tree r;
  s.ask("kill", "", r);
  return 0;
}

int cmdStats(Session& s) {
  ipc::Tree r;
  s.ask("status", "", r);
  const ipc::Tree* db = r.child("db");
  if (!db) throw std::runtime_error("No such node (db)");
  std::string text = "---\napiVersion: xqry/v1\nstatus:\n";
  for (auto& [k, v] : db->children) text += fmt::format("  {}: {}\n", k, v.value);
  out(text);
  return 0;
}

int cmdDir(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("get", "", r);
  const ipc::Tree& streams = streamsOf(r);
  if (o.format == Format::Jsonl) {
    std::string list;
    for (auto& e : streams.children) {
      if (!list.empty()) list += ',';
      list += fmt::format("{{\"name\":{},\"delta\":{}}}", jsonString(idOf(e)), jsonString(e.second.get("duration")));
    }
    out(fmt::format("{{\"version\":1,\"event\":\"streams\",\"streams\":[{}]}}\n", list));
    return 0;
  }
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
  return 0;
}

int cmdDirYaml(Session& s) {
  ipc::Tree r;
  s.ask("get", "", r);
  const ipc::Tree& streams = streamsOf(r);
  std::string text = "---\napiVersion: xqry/v1\nstreams:\n";
  for (auto& e : streams.children) {
    text += "  - name: " + idOf(e) + "\n";
    text += "    delta: " + e.second.get("duration") + "\n";
    if (const std::string size = e.second.get("size"); size != "-1") text += "    size: " + size + "\n";
    text += "    count: " + e.second.get("count") + "\n";
    if (const std::string loc = e.second.get("location"); !loc.empty()) text += "    location: " + loc + "\n";
  }
  out(text);
  return 0;
}

int cmdDetail(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("get", "", r);
  const ipc::Tree& streams = streamsOf(r);
  if (!streams.child(o.detail)) {
    logLine("not found");
    if (o.format == Format::Jsonl) jsonError("unknown_stream", o.detail);
    return 2;
  }
  ipc::Tree d;
  s.ask("detail", o.detail, d);
  if (!d.path("db.stream")) {
    logLine("not found");
    if (o.format == Format::Jsonl) jsonError("unknown_stream", o.detail);
    return 2;
  }
  const Schema sc = schemaOf(d);
  if (o.format == Format::Jsonl) {
    out(schemaJson(o.detail, sc));
    return 0;
  }
  std::string text = "---\napiVersion: xqry/v1\nstream:\n";
  text += "  name: " + d.get("db.stream") + "\n";
  text += "  delta: " + sc.delta + "\n";
  // RATIONAL results rounded to the nearest representable fraction (shown when any were).
  if (const std::string r = d.get("db.rounded"); !r.empty() && r != "0") text += "  rounded: " + r + "\n";
  text += "query: " + sc.query + "\n";
  text += "fields:\n";
  for (auto& [name, type] : sc.fields) text += "  " + o.detail + "." + name + ":\n    type: " + type + "\n";
  out(text);
  return 0;
}

// A command whose reply is "OK" or the reason it was refused (exit 2).
int cmdExpectOk(Session& s, const Options& o, const char* message, const std::string& argument) {
  ipc::Tree r;
  s.ask(message, argument, r);
  const std::string v = r.get("db");
  if (v == "OK") return 0;
  logLine("bad rcv: " + v);
  if (o.format == Format::Jsonl) jsonError("rejected", v);
  return 2;
}

int cmdRemove(Session& s, const Options& o) { return cmdExpectOk(s, o, "remove", o.remove); }
int cmdAdhoc(Session& s, const Options& o) { return cmdExpectOk(s, o, "adhoc", o.adhoc); }

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

// Renders the records of one subscription in the chosen format.
class Renderer {
 public:
  Renderer(const Options& o, std::string stream, Schema schema)
      : o_(o), stream_(std::move(stream)), schema_(std::move(schema)) {}

  void start() {
    switch (o_.format) {
      case Format::Gnuplot:
        out(fmt::format("set term qt noraise\n"
                        "set style fill transparent solid 0.5\n"
                        "set xrange [{}]\n"
                        "set yrange [{}:{}]\n"
                        "set ticslevel 0\n"
                        "set hidden3d\n"
                        "set view 60,30\n",
                        o_.rtl ? fmt::format("{}:0", o_.gx) : fmt::format("0:{}", o_.gx), o_.gymin, o_.gymax));
        break;
      case Format::Csv: {
        std::string h;
        for (size_t k = 0; k < schema_.elements.size(); ++k) h += (k ? "," : "") + csvField(schema_.elements[k]);
        out(h + "\n");
        break;
      }
      case Format::Jsonl: out(schemaJson(stream_, schema_)); break;
      default: break;
    }
  }

  void record(const std::vector<std::string>& v, const std::vector<bool>& null) {
    std::string text;
    switch (o_.format) {
      case Format::Raw: {
        bool allNull = !v.empty();
        for (bool n : null) allNull = allNull && n;
        if (o_.skipNull && allNull) return;
        for (size_t k = 0; k < v.size(); ++k) text += (null[k] ? std::string("null") : v[k]) + ' ';
        text += "\r\n";
        break;
      }
      case Format::Graphite: {
        const auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
        for (size_t k = 0; k < v.size(); ++k)
          if (!null[k]) text += fmt::format("{}.{} {} {}\n", stream_, name(k), v[k], secs);
        break;
      }
      case Format::Influx: {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
        std::string f;
        for (size_t k = 0; k < v.size(); ++k)
          if (!null[k]) f += fmt::format("{}{}={}", f.empty() ? "" : ",", name(k), v[k]);
        if (!f.empty()) text = fmt::format("{} {} {}\n", stream_, f, ns);
        break;
      }
      case Format::Gnuplot: {
        static const char* colors[] = {"red",   "blue", "green",  "orange", "purple",
                                       "brown", "pink", "yellow", "cyan",   "magenta"};
        if (history_.size() < v.size()) history_.resize(v.size());
        for (size_t k = 0; k < v.size(); ++k) {
          history_[k].push_front(null[k] ? "NaN" : v[k]);
          while (history_[k].size() > size_t(o_.gx)) history_[k].pop_back();
        }
        text = "plot";
        for (size_t k = 0; k < v.size(); ++k) {
          std::string n = name(k);
          std::replace(n.begin(), n.end(), '_', '-');
          text += fmt::format("{} '-' u 1:2 t '[{}]' w lines lc rgb '{}'", k ? "," : "", n, colors[k % 10]);
        }
        text += "\r\n";
        for (size_t k = 0; k < v.size(); ++k) {
          for (size_t j = 0; j < history_[k].size(); ++j) text += fmt::format("{} {}\r\n", j, history_[k][j]);
          text += "e\r\n";
        }
        break;
      }
      case Format::Csv:
        for (size_t k = 0; k < v.size(); ++k) text += (k ? "," : "") + (null[k] ? std::string() : csvField(v[k]));
        text += "\n";
        break;
      case Format::Jsonl: {
        std::string vals;
        for (size_t k = 0; k < v.size(); ++k) vals += (k ? "," : "") + (null[k] ? std::string("null") : jsonString(v[k]));
        text = fmt::format("{{\"version\":1,\"event\":\"record\",\"stream\":{},\"values\":[{}]}}\n", jsonString(stream_),
                           vals);
        break;
      }
    }
    out(text);
  }

  void end(const std::string& reason) {
    if (o_.format == Format::Jsonl)
      out(fmt::format("{{\"version\":1,\"event\":\"end\",\"reason\":{}}}\n", jsonString(reason)));
  }

 private:
  std::string name(size_t k) const { return k < schema_.elements.size() ? schema_.elements[k] : fmt::format("f{}", k); }

  const Options& o_;
  std::string stream_;
  Schema schema_;
  std::vector<std::deque<std::string>> history_;  // gnuplot: newest first
};

int cmdSelect(Session& s, const Options& o) {
  const std::string& name = o.select;
  const bool json = o.format == Format::Jsonl;
  ipc::Tree r;
  std::string err;
  auto st = s.request("get", "", r, &err);
  if (st != ipc::Client::Status::Ok) {
    logLine(fmt::format("xqry: {}: server did not answer in time{}", name, err.empty() ? "" : " (" + err + ")"));
    if (json) jsonError("timeout", "server did not answer in time");
    return 110;
  }
  const ipc::Tree* streams = r.path("db.stream");
  if (!streams || !streams->child(name)) {
    logLine(fmt::format("xqry: {}: stream unknown to the server", name));
    if (json) jsonError("unknown_stream", name);
    return 2;
  }
  Schema schema;
  if (o.format != Format::Raw) {  // field names, asked before `show` so no data interleaves
    ipc::Tree d;
    if (s.request("detail", name, d, &err) == ipc::Client::Status::Ok)
      schema = schemaOf(d);
  }
  st = s.request("show", name, r, &err);
  const std::string reply = r.get("db");
  if (st != ipc::Client::Status::Ok || !reply.empty()) {
    if (reply.rfind("error: unknown stream", 0) == 0) {
      logLine(fmt::format("xqry: {}: stream unknown to the server", name));
      if (json) jsonError("unknown_stream", name);
      return 2;
    }
    logLine(fmt::format("xqry: {}: server did not create the client's response queue{}", name,
                        reply.empty() ? (err.empty() ? "" : " (" + err + ")") : " (" + reply + ")"));
    if (json) jsonError("no_queue", "server did not create the client's response queue");
    return 63;
  }

  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGHUP, onSignal);
  KeyWatch keys(!o.needCtrlC);
  Renderer view(o, name, schema);
  view.start();
  using clock = std::chrono::steady_clock;
  const int noDataMs = gConfig.queryNoDataTimeoutMs;
  auto lastData = clock::now();
  int64_t rendered = 0;
  std::string reason;
  std::vector<std::string> values;
  std::vector<bool> nulls;
  for (;;) {
    if (gStop.load() || keys.pressed()) {
      reason = "interrupted";
      break;
    }
    ipc::Tree m;
    st = s.client().receive(m, 50, &err);
    if (st == ipc::Client::Status::Timeout) {
      if (clock::now() - lastData >= std::chrono::milliseconds(noDataMs)) {
        logLine(fmt::format("No data received for {} ms, assuming server is dead.", noDataMs));
        reason = "idle_timeout";
        break;
      }
      continue;
    }
    if (st != ipc::Client::Status::Ok) {
      logLine(fmt::format("xqry: {}: {}", name, err));
      reason = "server_stopped_or_reloaded";
      break;
    }
    lastData = clock::now();
    const std::string sname = m.get("stream");
    if (sname == ipc::kEndMarker) {
      reason = m.get("reason") == "removed" ? "stream_removed" : "server_stopped_or_reloaded";
      break;
    }
    if (sname != name) continue;
    const size_t n = size_t(std::max(0L, atol(m.get("count").c_str())));
    const std::string map = m.get("nullmap");
    values.assign(n, std::string());
    nulls.assign(n, false);
    for (size_t k = 0; k < n; ++k) {
      values[k] = m.get(std::to_string(k));
      nulls[k] = k < map.size() && map[k] == '1';
    }
    view.record(values, nulls);
    ++rendered;
    if (o.limit > 0 && rendered >= o.limit) {
      reason = "limit";
      if (o.kill) {
        ipc::Tree kr;
        s.client().request("kill", "", kr, Session::replyMs(), &err);
      }
      break;
    }
  }
  if (reason == "stream_removed") {
    logLine(fmt::format("xqry: {}: the stream was removed from the running plan", name));
    if (json) jsonError("stream_removed", "the stream was removed from the running plan");
    return kExitStreamRemoved;
  }
  if (rendered == 0) {
    logLine(fmt::format("xqry: {}: no data in stream", name));
    if (json) jsonError("no_data", "no data in stream");
    return 61;
  }
  if (json && reason == "idle_timeout") jsonError("idle_timeout", "no data received");
  else view.end(reason);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {  // scripts written on other systems: one trailing CR
    size_t n = strlen(argv[i]);
    if (n && argv[i][n - 1] == '\r') argv[i][n - 1] = 0;
  }
  setvbuf(stdout, nullptr, _IONBF, 0);
  try {
    gLogPath = (std::filesystem::temp_directory_path() / "xqry.log").string();
  } catch (...) {
  }

  Options o;
  CLI::App app{"xqry: query a running xretractor"};
  app.add_option("-s,--select,select", o.select, "subscribe to a stream and print its records");
  app.add_option("-t,--detail", o.detail, "describe one stream (YAML)");
  app.add_option("-a,--adhoc", o.adhoc, "send one SELECT statement to the running plan");
  app.add_option("--remove", o.remove, "remove a stream imported ad hoc from the running plan");
  app.add_option("-m,--elimitqry", o.limit, "stop after N records (0 = unlimited)");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    gConfig = tools::loadConfig(o.config.empty() ? std::nullopt : std::optional<std::string>(o.config));

    const bool gnuplot = !o.gnuplot.empty();
    if (int(o.raw) + int(o.graphite) + int(o.influx) + int(gnuplot) + int(o.csv) + int(o.jsonl) > 1) {
      out("Only one output format could be selected.\n");
      return 22;
    }
    if (gnuplot) {
      if (!parseGnuplot(o.gnuplot, o.gx, o.gymin, o.gymax)) {
        fprintf(stderr, "gnuplot mode need {x,y} or {x,ymin,ymax} parameters.");
        return 22;
      }
      if (o.gx <= 0) {
        out("gnuplot mode need x > 0.\n");
        return 22;
      }
      if (o.gymin >= o.gymax) {
        out("gnuplot mode need ymin < ymax.");
        return 22;
      }
    }
    if (o.rtl && !gnuplot) {
      fprintf(stderr, "--gnuplot-rtl requires --gnuplot/-p mode.\n");
      return 22;
    }
    o.format = o.graphite ? Format::Graphite
               : o.influx ? Format::Influx
               : gnuplot  ? Format::Gnuplot
               : o.csv    ? Format::Csv
               : o.jsonl  ? Format::Jsonl
                          : Format::Raw;
    if (o.limit < 0) o.limit = 0;

    enum class Cmd { None, Hello, Stats, Kill, Dir, DirYaml, Adhoc, Remove, Detail, Select } cmd = Cmd::None;
    if (o.hello) cmd = Cmd::Hello;
    else if (o.stats) cmd = Cmd::Stats;
    else if (o.kill && o.limit == 0) cmd = Cmd::Kill;
    else if (o.dir) cmd = Cmd::Dir;
    else if (o.diryaml) cmd = Cmd::DirYaml;
    else if (!o.adhoc.empty()) cmd = Cmd::Adhoc;
    else if (!o.remove.empty()) cmd = Cmd::Remove;
    else if (!o.detail.empty()) cmd = Cmd::Detail;
    else if (!o.select.empty() && o.select != "none") cmd = Cmd::Select;
    if (cmd == Cmd::None) {
      logLine("no argument.");
      return 1;
    }

    Session s(o);
    if (int rc = s.connect()) return rc;
    switch (cmd) {
      case Cmd::Hello: return cmdHello(s, o);
      case Cmd::Stats: return cmdStats(s);
      case Cmd::Kill: return cmdKill(s);
      case Cmd::Dir: return cmdDir(s, o);
      case Cmd::DirYaml: return cmdDirYaml(s);
      case Cmd::Adhoc: return cmdAdhoc(s, o);
      case Cmd::Remove: return cmdRemove(s, o);
      case Cmd::Detail: return cmdDetail(s, o);
      case Cmd::Select: return cmdSelect(s, o);
      case Cmd::None: break;
    }
    return 1;
  } catch (const TooManyClients&) {
    logLine("xqry: the server refused the connection: too many clients (ipc.max_clients); try again later");
    if (o.jsonl) jsonError("too_many_clients", "too many clients");
    return kExitTooManyClients;
  } catch (const std::exception& e) {
    logLine(std::string("Std: ") + e.what());
    if (o.jsonl) jsonError("internal", e.what());
    return 4;
  }
}
