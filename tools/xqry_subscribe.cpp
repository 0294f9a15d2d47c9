// xqry's subscription (-s, xqry_commands.hpp): the stream's schema and the
// subscription asked for, its records rendered until a limit, a key, a signal or the server ends it.
#include <fmt/format.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xqry_commands.hpp"

namespace xqry {

namespace {

std::atomic<bool> gStop{false};
void onSignal(int) { gStop.store(true); }

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
// subscription; 0, or the exit code after a diagnostic. `waiting`: --from
// names a record still to come, and the server holds the subscription until it is written.
int subscribe(Session& s, const Options& o, Schema& schema, bool& waiting) {
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
  if (st == ipc::Client::Status::Ok && reply.empty()) {
    if (const ipc::Tree* w = r.path("db.waiting")) {
      waiting = true;
      const ipc::Tree* newest = r.path("db.newest");
      gLog(fmt::format("xqry: {}: waiting for record {} ({})", name, w->value,
                       newest ? "the newest is " + newest->value : "none written yet"));
    }
    return kExitOk;
  }
  if (reply.rfind("error: unknown stream", 0) == 0) return unknownStream(o);
  gLog(fmt::format("xqry: {}: server did not create the client's response queue{}", name,
                   reply.empty() ? (err.empty() ? "" : " (" + err + ")") : " (" + reply + ")"));
  if (json) jsonError("no_queue", "server did not create the client's response queue");
  return kExitNoQueue;
}

// Renders the subscription's records until it ends; the reason it ended.
// While `waiting` (for a record --from names) the no-data timeout does not
// apply: the first message ends the wait.
std::string receive(Session& s, const Options& o, const KeyWatch& keys, Renderer& view, int64_t& rendered,
                    bool waiting) {
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
      if (waiting || clock::now() - lastData < std::chrono::milliseconds(noDataMs)) continue;
      gLog(fmt::format("No data received for {} ms, assuming server is dead.", noDataMs));
      return "idle_timeout";
    }
    if (st != ipc::Client::Status::Ok) {
      gLog(fmt::format("xqry: {}: {}", o.select, err));
      return "server_stopped_or_reloaded";
    }
    lastData = clock::now();
    waiting = false;
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

}  // namespace

int cmdSelect(Session& s, const Options& o) {
  Schema schema;
  bool waiting = false;
  if (int rc = subscribe(s, o, schema, waiting)) return rc;
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGHUP, onSignal);
  KeyWatch keys(!o.needCtrlC);
  Renderer view(o, o.select, schema);
  view.start();
  int64_t rendered = 0;
  const std::string reason = receive(s, o, keys, view, rendered, waiting);
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

}  // namespace xqry
