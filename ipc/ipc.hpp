// The engine <-> xqry protocol (tools.md §5) over a Unix domain stream socket.
//
// Transport. One socket per instance, `<dir>/xretractor_service.sock` (beside the
// lock file; `socketPath()`), mode 0600, peers of another uid refused. Every
// message is one frame:
//
//   offset 0  4 bytes  magic "RDBQ"
//          4  1 byte   version (kVersion)
//          5  1 byte   kind: 1 request, 2 reply, 3 data, 4 error
//          6  2 bytes  reserved, zero
//          8  4 bytes  payload length, big-endian, at most kMaxPayload
//         12  payload  a Tree in text form (below)
//
// A frame that breaks these rules (or whose payload does not parse) gets one
// error frame back and the connection is closed.
//
// Payload. The reference's property-tree INFO text: one `key value` entry per
// line, children in `key value {` ... `}`; a token that is empty or holds
// blanks, quotes, braces, backslashes or control characters is written in
// double quotes with C escapes. Requests are `db { message M; id PID; argument A }`;
// the replies and data messages are exactly the trees of tools.md §5.3/§5.4.
//
// Threading. Server::poll() runs the command side (accept, read, hooks,
// replies) on the caller's thread; publish(), subscribed(), stats(),
// anyCommandSeen() and shutdown() may be called from any other thread. publish()
// never blocks: a send that would block leaves the bytes in the client's bounded
// queue, and a client whose queue is full is disconnected and counted.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.hpp"
#include "storage/element_text.hpp"  // the value texts publish() sends

namespace ipc {

// ---------------------------------------------------------------- tree text
struct Tree {
  std::string value;
  std::vector<std::pair<std::string, Tree>> children;

  Tree() = default;
  explicit Tree(std::string v) : value(std::move(v)) {}
  Tree& add(const std::string& key, const std::string& value = "");  // appends; returns the child
  const Tree* child(const std::string& key) const;                   // first child named `key`
  const Tree* path(const std::string& dotted) const;                 // "db.stream": child by child
  std::string get(const std::string& dotted, const std::string& def = "") const;
  bool empty() const { return value.empty() && children.empty(); }

  std::string text() const;  // the INFO text of the children (the root value is not written)
  // Parses text(); nullopt and `error` on malformed input (nesting deeper than 64 included).
  static std::optional<Tree> parse(const std::string& text, std::string* error = nullptr);
};

// ---------------------------------------------------------------- framing
inline constexpr char kMagic[4] = {'R', 'D', 'B', 'Q'};
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderSize = 12;
inline constexpr uint32_t kMaxPayload = 64 * 1024;
enum class Kind : uint8_t { Request = 1, Reply = 2, Data = 3, Error = 4 };

struct Frame {
  Kind kind = Kind::Reply;
  std::string payload;
};

// Header + payload. Throws std::length_error above kMaxPayload.
std::string encodeFrame(Kind kind, const std::string& payload);

// Cuts frames out of a byte stream.
class FrameReader {
 public:
  enum class Result { Frame, NeedMore, Bad };
  void feed(const char* data, size_t n);
  // Bad: `error` says why; the stream cannot be resynchronised after that.
  Result next(Frame& out, std::string& error);
  size_t buffered() const { return buf_.size() - off_; }

 private:
  std::string buf_;
  size_t off_ = 0;
};

// ---------------------------------------------------------------- names, values
// `<dir>/xretractor_service.sock`, or `<dir>/xretractor_<name>_service.sock` for a
// named instance; an empty dir is the temp directory (${TMPDIR:-/tmp}).
std::string socketPath(const std::string& dir = "", const std::string& name = "");

// Stream name of the data message that ends a subscription: `stream OUT_OF_BUSSINESS`,
// `reason shutdown` when the server stops, or `reason removed` and `id <stream>`
// when the subscribed stream was removed from the running plan (the connection
// then closes).
inline constexpr const char* kEndMarker = "OUT_OF_BUSSINESS";
// A data message's values and NULL flags (its `count`, `0`..`count-1` and `nullmap`).
void recordOf(const Tree& m, std::vector<std::string>& values, std::vector<bool>& nulls);

// ---------------------------------------------------------------- server
struct StreamInfo {
  std::string id;
  std::string duration;  // "n/d" (a "/1" denominator is dropped on the wire)
  int64_t size = 0;      // bytes stored; -1 for declared sources
  int64_t count = 0;     // records stored / read
  std::string location;  // FILE literal or empty
  int64_t cap = 0;       // history capacity
};

struct StreamDetail {
  StreamInfo info;
  std::vector<std::pair<std::string, std::string>> fields;  // name, TYPE
  bool isDeclaration = false, isGenerated = false;
  int queryTokens = 0;
  std::string processedLine;  // statement text or "{not found}"
  int64_t countRecords = 0;
  uint64_t rounded = 0;  // RATIONAL results that had to round
  // DEVICE sources only (sent only for them): records read and records missed.
  bool isDevice = false;
  uint64_t reads = 0, misses = 0;
  // Connector counters (MQTT sources and PUBLISH sinks), sent by name when present.
  std::vector<std::pair<std::string, uint64_t>> counters;
};

// Called from Server::poll on the caller's thread. An empty function behaves as an
// idle server: `get` answers an empty tree, `detail` nothing, `adhoc` an empty tree.
// A hook must not call Server::shutdown() (kill should only set a flag).
// One record as sent to subscribers: value texts (storage::elementText), NULL
// flags, its logical index and slot time ("p/q" seconds; both optional).
struct RecordText {
  std::vector<std::string> values;
  std::vector<bool> nulls;
  int64_t n = -1;
  std::string t;
};

// What a `show` with `from` replays (ServerHooks::replay).
struct Replay {
  std::vector<RecordText> records;  // oldest first
  int64_t unavailable = 0;          // records from `from` on that are no longer held
  int64_t newest = -1;              // the stream's newest logical index; -1: none written yet
};

struct ServerHooks {
  std::function<std::vector<StreamInfo>()> list;
  std::function<std::optional<StreamDetail>(const std::string&)> detail;
  std::function<bool(const std::string&)> exists;        // for show
  std::function<std::string(const std::string&)> adhoc;  // "OK" or the error text (tools.md §2.7)
  std::function<void()> kill;
  std::function<std::string(const std::string&)> remove;  // removes an ad hoc stream: "OK" or the reason
  // Replaces the whole plan with the text of a query file: "OK" or the located
  // error; `ended` gets the streams removed or redefined (their subscribers are ended).
  std::function<std::string(const std::string&, std::vector<std::string>& ended)> reset;
  // `show` with `from`: the stored records of the stream from logical index
  // `from` on (0 to INT64_MAX), oldest first, up to the newest. Called between
  // slots, so the live records that follow continue exactly after the last
  // one. A `from` past the newest replays nothing: the subscription then
  // waits, live records before `from` are not sent.
  std::function<Replay(const std::string&, int64_t from)> replay;
};

struct ServerOptions {
  // Per-subscriber queue bound in messages: max(floor(1/delta) * queueBufferSeconds,
  // minQueueElements), delta taken from hooks.list() at `show` (ipc.* in tools.md §7).
  int queueBufferSeconds = 10;
  int minQueueElements = 100;
  size_t maxQueueBytes = 16u << 20;  // per client, whatever the message count
  int maxClients = 128;              // more connections are refused ("error: too many clients")
  // A connection without a subscription that sends no request for this long is
  // closed (0 = never), so idle connections cannot keep the clients out.
  int idleTimeoutMs = 5000;
  int shutdownFlushMs = 1000;                   // how long shutdown() keeps sending queued data and end markers
  std::function<void(const std::string&)> log;  // diagnostics (overflow, refused peers); may be empty
};

class Server {
 public:
  // Binds `socketPath` (mode 0600; a stale socket nobody listens on is replaced;
  // a live one is an error). nullptr and `error` on failure.
  static std::unique_ptr<Server> open(const std::string& socketPath, std::string& error,
                                      const ServerOptions& opt = ServerOptions());
  ~Server();  // = shutdown()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Accepts, reads and answers commands; waits at most timeoutMs for activity
  // (0 = just look). One thread at a time.
  void poll(const ServerHooks& h, int timeoutMs = 0);
  bool anyCommandSeen() const;                       // for xretractor -x
  bool subscribed(const std::string& stream) const;  // one atomic load when nobody subscribes
  bool anySubscriber() const;                        // one atomic load
  // One record of a due stream: value texts (storage::elementText) and null flags. Never blocks.
  void publish(const std::string& stream, const std::vector<std::string>& values, const std::vector<bool>& nulls,
               int64_t n = -1, const std::string& t = "");
  // End marker (reason "removed") to the subscribers of every stream; the
  // connections are closed once it is sent. The server goes on serving.
  void endSubscriptions();
  // End marker to every subscriber, queued bytes sent for up to shutdownFlushMs,
  // connections closed, socket unlinked. Idempotent; waits for a running poll().
  void shutdown();

  struct Stats {
    uint64_t dropped = 0;       // messages not delivered because a queue was full (or too large)
    uint64_t disconnected = 0;  // clients cut off because they stayed behind
    uint64_t idleClosed = 0;    // connections closed because they sent nothing (idleTimeoutMs)
    uint64_t published = 0;     // messages queued to subscribers
    uint64_t clients = 0;       // connections open now
    uint64_t subscribers = 0;   // subscriptions now
  };
  Stats stats() const;

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- client
// request()'s timeout for a command that changes the server's state: no
// deadline. The reply is awaited as long as the connection is open and the
// server's process (the one that listens, SO_PEERCRED) is alive, however long
// the server works on it; a client that gave up earlier could not tell whether
// the command took effect.
inline constexpr int kNoDeadline = -1;

class Client {
 public:
  // Lost: the request went out whole, then the connection ended (or the
  // server's process did) before the reply: whether the server carried it out
  // is unknown.
  enum class Status { Ok, Timeout, Closed, Error, Lost };

  // nullptr on failure: `error` = strerror text, `err` = errno (ENOENT, ECONNREFUSED, ...).
  static std::unique_ptr<Client> connect(const std::string& socketPath, std::string& error, int* err = nullptr);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `db { message; id <pid>; argument }` and waits for the reply tree,
  // at most timeoutMs, or with kNoDeadline until it comes or the server is gone.
  // Data messages arriving meanwhile are kept for receive().
  // `extra`: more fields of the request (db.<key>), e.g. `from` of a replaying `show`.
  Status request(const std::string& message, const std::string& argument, Tree& reply, int timeoutMs,
                 std::string* error = nullptr, const std::vector<std::pair<std::string, std::string>>& extra = {});
  // Next data message (after `show`).
  Status receive(Tree& data, int timeoutMs, std::string* error = nullptr);
  // Low level, for tests: raw bytes out, one frame in.
  bool sendRaw(const std::string& bytes);
  Status receiveFrame(Frame& f, int timeoutMs, std::string* error = nullptr);
  int fd() const { return fd_; }

 private:
  explicit Client(int fd, pid_t server) : fd_(fd), serverPid_(server) {}
  bool serverGone() const;
  // The next frame before `deadline`, its payload parsed; `what` starts the
  // error when the payload is malformed.
  Status nextTree(std::chrono::steady_clock::time_point deadline, Kind& kind, Tree& t, const char* what,
                  std::string* error);
  int fd_ = -1;
  pid_t serverPid_ = 0;  // the listening process; 0 when unknown (another pid namespace)
  FrameReader in_;
  std::deque<Tree> pending_;  // data messages that arrived while waiting for a reply
};

}  // namespace ipc
