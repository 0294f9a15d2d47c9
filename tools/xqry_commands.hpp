// What xqry's main (xqry.cpp) and its commands share: the exit codes, the
// configuration and the log, the connection to the server and the commands.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "ipc/ipc.hpp"
#include "log.hpp"
#include "xqry.hpp"

namespace xqry {

// Exit codes (docs/live.md, "Exit codes of xqry").
constexpr int kExitOk = 0;
constexpr int kExitNoCommand = 1;
constexpr int kExitNotFound = 2;  // unknown stream, detail not found, ad hoc or remove rejected
constexpr int kExitInternal = 4;
constexpr int kExitNoServer = 10;
constexpr int kExitTooManyClients = 16;   // EBUSY
constexpr int kExitArgs = 22;             // EINVAL
constexpr int kExitStreamRemoved = 43;    // EIDRM
constexpr int kExitNoData = 61;           // ENODATA
constexpr int kExitNoQueue = 63;          // ENOSR
constexpr int kExitBadHello = 71;         // EPROTO
constexpr int kExitOutcomeUnknown = 104;  // ECONNRESET: a change was sent, the engine was gone before its answer
constexpr int kExitTimeout = 110;         // ETIMEDOUT

extern tools::Config gConfig;
// Diagnostics: the text alone on stderr, with a timestamp in <tmp>/xqry.log (set in main).
extern tools::LogSink gLog;

// ---------------------------------------------------------------- the connection (xqry_session.cpp)
// The server refused the connection: it serves ipc.max_clients already.
struct TooManyClients : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Session {
 public:
  explicit Session(const Options& o) : o_(o) {}

  // 0, or the exit code after a diagnostic.
  int connect();
  // One request; on a timeout or a broken connection the reply is an empty tree
  // (as the reference's map lookup), with "server not found" logged.
  ipc::Client::Status ask(const std::string& message, const std::string& arg, ipc::Tree& reply);
  // A change to the running plan (adhoc, remove, reset): its answer is waited
  // for as long as the engine works on it (ipc::kNoDeadline); Lost when the
  // connection or the engine's process ended first. Throws TooManyClients.
  ipc::Client::Status change(const std::string& message, const std::string& arg, ipc::Tree& reply, std::string* err);
  // One request; throws TooManyClients when the server refused the connection.
  ipc::Client::Status request(const std::string& message, const std::string& arg, ipc::Tree& reply, std::string* err,
                              const std::vector<std::pair<std::string, std::string>>& extra = {});

  ipc::Client& client() { return *c_; }
  static int replyMs();

 private:
  const Options& o_;
  std::unique_ptr<ipc::Client> c_;
};

// ---------------------------------------------------------------- the commands
// Each returns xqry's exit code.
using Command = int (*)(Session&, const Options&);

// xqry_streams.cpp: the stream list and one stream's detail.
int cmdDir(Session& s, const Options& o);      // -d: table (JSON lines: a `streams` event)
int cmdDirYaml(Session& s, const Options& o);  // -y
int cmdDetail(Session& s, const Options& o);   // -t
// Field names and types from a `detail` reply.
Schema schemaOf(const ipc::Tree& detail);

// xqry_subscribe.cpp: -s, a subscription's records rendered until it ends.
int cmdSelect(Session& s, const Options& o);

// xqry_control.cpp: the server's state and changes to its running plan.
int cmdHello(Session& s, const Options& o);
int cmdKill(Session& s, const Options& o);
int cmdStats(Session& s, const Options& o);
int cmdAdhoc(Session& s, const Options& o);
int cmdRemove(Session& s, const Options& o);
int cmdReset(Session& s, const Options& o);

}  // namespace xqry
