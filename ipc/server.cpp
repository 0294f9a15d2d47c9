// The server side: a listening socket, one connection per client, bounded
// outgoing queues. poll() is the only place that reads and the only place that
// calls the hooks; publish() only appends to queues and tries a non-blocking send.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "ipc.hpp"

namespace ipc {

namespace {

struct Conn {
  int fd = -1;
  FrameReader in;
  std::deque<std::string> out;  // frames not yet (fully) sent
  size_t outOff = 0;            // sent bytes of out.front()
  size_t outBytes = 0;
  std::string stream;  // subscription; empty = none
  size_t cap = 0;      // message bound while subscribed
  bool closeAfterFlush = false;
  bool dead = false;
  std::chrono::steady_clock::time_point lastRequest;  // or the moment it connected
  ~Conn() {
    if (fd >= 0) ::close(fd);
  }
};
using ConnPtr = std::shared_ptr<Conn>;

std::string normalizeDuration(const std::string& d) {
  if (d.size() > 2 && d.compare(d.size() - 2, 2, "/1") == 0) return d.substr(0, d.size() - 2);
  return d;
}

// floor(1/delta) of an "n/d" or decimal text; 0 when unknown.
int64_t perSecond(const std::string& d) {
  try {
    size_t slash = d.find('/');
    double v = slash == std::string::npos ? std::stod(d) : std::stod(d.substr(0, slash)) / std::stod(d.substr(slash + 1));
    if (!(v > 0)) return 0;
    double r = std::floor(1.0 / v);
    return r > 1e7 ? int64_t(1e7) : int64_t(r);
  } catch (...) {
    return 0;
  }
}

Tree errorTree(const std::string& text) {
  Tree t;
  t.add("db", text);
  return t;
}

// The data message that ends a subscription (ipc.hpp, kEndMarker).
std::string endFrame(const char* reason, const std::string& stream = "") {
  Tree t;
  t.add("stream", kEndMarker);
  t.add("reason", reason);
  if (!stream.empty()) t.add("id", stream);
  return encodeFrame(Kind::Data, t.text());
}

}  // namespace

struct Server::Impl {
  ServerOptions opt;
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
  int listenFd = -1;
  int wakeR = -1, wakeW = -1;

  std::mutex pollMu;  // held by poll() for its whole run, and by shutdown()
  mutable std::mutex mu;  // everything below
  std::vector<ConnPtr> conns;
  std::unordered_map<std::string, int> subs;
  Stats st;
  bool closed = false;
  std::atomic<int> subscriberCount{0};
  std::atomic<bool> commandSeen{false};

  ~Impl() {
    if (listenFd >= 0) ::close(listenFd);
    if (wakeR >= 0) ::close(wakeR);
    if (wakeW >= 0) ::close(wakeW);
  }

  void log(const std::string& m) {
    if (opt.log) opt.log(m);
  }

  void wake() {
    if (wakeW >= 0) {
      char c = 1;
      [[maybe_unused]] ssize_t r = ::write(wakeW, &c, 1);
    }
  }

  // --- all below with `mu` held
  void unsubscribe(Conn& c) {
    if (c.stream.empty()) return;
    auto it = subs.find(c.stream);
    if (it != subs.end() && --it->second <= 0) subs.erase(it);
    c.stream.clear();
    subscriberCount.fetch_sub(1, std::memory_order_relaxed);
  }
  void drop(Conn& c) {
    if (c.dead) return;
    unsubscribe(c);
    c.dead = true;
    ::shutdown(c.fd, SHUT_RDWR);  // the descriptor closes with the last reference
  }
  void enqueue(Conn& c, std::string frame) {
    c.outBytes += frame.size();
    c.out.push_back(std::move(frame));
  }
  // Sends what the socket takes now.
  void flush(Conn& c) {
    while (!c.dead && !c.out.empty()) {
      const std::string& f = c.out.front();
      ssize_t n = ::send(c.fd, f.data() + c.outOff, f.size() - c.outOff, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        drop(c);  // the peer went away
        return;
      }
      c.outOff += size_t(n);
      if (c.outOff == f.size()) {
        c.outBytes -= f.size();
        c.out.pop_front();
        c.outOff = 0;
      }
    }
    if (!c.dead && c.out.empty() && c.closeAfterFlush) drop(c);
  }
  void reap() {
    std::erase_if(conns, [](const ConnPtr& c) { return c->dead; });
  }
  // Closes connections that hold no subscription and sent no request for
  // opt.idleTimeoutMs: a connection that only sits there must not keep others out.
  void expireIdle() {
    if (opt.idleTimeoutMs <= 0) return;
    const auto now = std::chrono::steady_clock::now();
    const auto limit = std::chrono::milliseconds(opt.idleTimeoutMs);
    for (auto& cp : conns) {
      Conn& c = *cp;
      if (c.dead || !c.stream.empty() || now - c.lastRequest < limit) continue;
      if (c.out.empty()) {  // a word on why, if the socket takes it now
        const std::string f = encodeFrame(
            Kind::Error, errorTree("error: idle for " + std::to_string(opt.idleTimeoutMs) + " ms; closed").text());
        [[maybe_unused]] ssize_t r = ::send(c.fd, f.data(), f.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      ++st.idleClosed;
      drop(c);
    }
  }
  // Ends the subscriptions to `stream`: end marker (reason "removed"), then the
  // connection closes once it is sent.
  void endStream(const std::string& stream) {
    for (auto& cp : conns) {
      Conn& c = *cp;
      if (c.dead || c.stream != stream) continue;
      enqueue(c, endFrame("removed", stream));
      unsubscribe(c);
      c.closeAfterFlush = true;
    }
  }

  void accept() {
    for (;;) {
      int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        return;  // EAGAIN, or a transient error: try at the next poll
      }
      ucred cred{};
      socklen_t len = sizeof cred;
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid != geteuid() && cred.uid != 0) {
        log("ipc: refused a client of uid " + std::to_string(cred.uid));
        ::close(fd);
        continue;
      }
      auto c = std::make_shared<Conn>();
      c->fd = fd;
      c->lastRequest = std::chrono::steady_clock::now();
      std::lock_guard lk(mu);
      if (int(conns.size()) >= opt.maxClients) {
        std::string f = encodeFrame(Kind::Error, errorTree("error: too many clients").text());
        [[maybe_unused]] ssize_t r = ::send(fd, f.data(), f.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        log("ipc: refused a client: too many clients");
        continue;  // closes with c
      }
      conns.push_back(std::move(c));
    }
  }

  // Reads what has arrived from one client and cuts its requests out. A malformed
  // message queues one error frame and closes the connection once that is sent.
  void readRequests(const ConnPtr& cp, std::vector<std::pair<ConnPtr, Tree>>& requests) {
    Conn& c = *cp;
    {
      std::lock_guard lk(mu);  // publish() may drop the client meanwhile
      if (c.dead || c.closeAfterFlush) return;
    }
    bool eof = false;
    char buf[16384];
    for (int rounds = 0; rounds < 16; ++rounds) {  // bounded work per client per poll
      ssize_t r = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (r > 0) {
        c.in.feed(buf, size_t(r));
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) eof = true;
      break;
    }
    Frame f;
    std::string why;
    for (;;) {
      auto res = c.in.next(f, why);
      if (res == FrameReader::Result::NeedMore) break;
      std::optional<Tree> t;
      if (res == FrameReader::Result::Frame) {
        if (f.kind != Kind::Request) why = "a client may only send requests";
        else if (!(t = Tree::parse(f.payload, &why))) why = "malformed payload: " + why;
      }
      if (!t) {
        std::lock_guard lk(mu);
        if (!c.dead) {
          enqueue(c, encodeFrame(Kind::Error, errorTree("error: " + why).text()));
          unsubscribe(c);
          c.closeAfterFlush = true;
        }
        log("ipc: malformed message from a client: " + why);
        break;
      }
      c.lastRequest = std::chrono::steady_clock::now();
      requests.emplace_back(cp, std::move(*t));
    }
    if (eof) {
      std::lock_guard lk(mu);
      if (c.closeAfterFlush) flush(c);
      drop(c);
    }
  }

  size_t queueBound(const ServerHooks& h, const std::string& stream) const {
    int64_t perSec = 0;
    if (h.list)
      for (auto& s : h.list())
        if (s.id == stream) perSec = perSecond(s.duration);
    int64_t n = std::max<int64_t>(perSec * opt.queueBufferSeconds, opt.minQueueElements);
    return size_t(std::max<int64_t>(n, 1));
  }
};

namespace {

struct Answer {
  Tree reply;
  std::string subscribe;  // `show`: the stream to register
  size_t cap = 0;
  std::vector<std::string> ended;  // `remove`: subscribed streams that are gone now
};

Answer answer(Server::Impl& s, const ServerHooks& h, const Tree& req) {
  Answer a;
  const std::string msg = req.get("db.message");
  const Tree* argNode = req.path("db.argument");
  const std::string arg = argNode ? argNode->value : "";
  if (msg == "hello") {
    a.reply.add("db", "world");
  } else if (msg == "get") {
    if (h.list) {
      auto list = h.list();
      if (!list.empty()) {
        Tree& streams = a.reply.add("db").add("stream");
        for (auto& i : list) {
          Tree& t = streams.add(i.id, i.id);
          t.add("duration", normalizeDuration(i.duration));
          t.add("size", std::to_string(i.size));
          t.add("count", std::to_string(i.count));
          t.add("location", i.location);
          t.add("cap", std::to_string(i.cap));
        }
      }
    }
  } else if (msg == "detail") {
    if (arg.empty()) {
      a.reply = errorTree("error: missing stream name");
    } else if (auto d = h.detail ? h.detail(arg) : std::nullopt) {
      Tree& db = a.reply.add("db");
      Tree& f = db.add("field");
      for (auto& [name, type] : d->fields) f.add(name, name);
      Tree& ft = db.add("field_type");
      for (auto& [name, type] : d->fields) ft.add(name, type);
      db.add("stream", d->info.id);
      db.add("count", std::to_string(d->fields.size()));
      db.add("duration", normalizeDuration(d->info.duration));
      db.add("location", d->info.location);
      db.add("cap", std::to_string(d->info.cap));
      db.add("size", std::to_string(d->info.size));
      db.add("count_records", std::to_string(d->countRecords));
      db.add("is_declaration", d->isDeclaration ? "true" : "false");
      db.add("is_generated", d->isGenerated ? "true" : "false");
      db.add("query", std::to_string(d->queryTokens) + " tokens");
      db.add("processed_line", d->processedLine);
      db.add("rounded", std::to_string(d->rounded));
    } else if (h.detail) {
      a.reply = errorTree("error: stream not found: " + arg);
    }
  } else if (msg == "show") {
    if (!req.path("db.id") || req.get("db.id").empty()) {
      a.reply = errorTree("error: missing db.id");
    } else if (arg.empty()) {
      a.reply = errorTree("error: missing stream name");
    } else if (h.exists && !h.exists(arg)) {
      a.reply = errorTree("error: unknown stream: " + arg);
    } else {
      a.subscribe = arg;
      a.cap = s.queueBound(h, arg);
    }
  } else if (msg == "adhoc") {
    if (arg.empty()) a.reply = errorTree("error: missing stream name");
    else if (h.adhoc) a.reply.add("db", h.adhoc(arg));
  } else if (msg == "remove") {
    if (arg.empty()) a.reply = errorTree("error: missing stream name");
    else if (h.remove) {
      const std::string r = h.remove(arg);
      a.reply.add("db", r);
      if (r == "OK") {  // the stream, and substrates that went with it
        std::vector<std::string> subscribed;
        {
          std::lock_guard lk(s.mu);
          for (auto& [name, n] : s.subs) subscribed.push_back(name);
        }
        for (auto& name : subscribed)
          if (name == arg || (h.exists && !h.exists(name))) a.ended.push_back(name);
      }
    }
  } else if (msg == "kill") {
    if (h.kill) h.kill();
  } else if (msg == "status") {
    Server::Stats st;
    {
      std::lock_guard lk(s.mu);
      st = s.st;
      st.clients = s.conns.size();
      st.subscribers = uint64_t(s.subscriberCount.load());
    }
    Tree& db = a.reply.add("db");
    db.add("clients", std::to_string(st.clients));
    db.add("subscribers", std::to_string(st.subscribers));
    db.add("published", std::to_string(st.published));
    db.add("dropped", std::to_string(st.dropped));
    db.add("disconnected", std::to_string(st.disconnected));
    db.add("idle_closed", std::to_string(st.idleClosed));
  } else {
    a.reply = errorTree("error: unknown command: " + msg);
  }
  return a;
}

}  // namespace

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { shutdown(); }

std::unique_ptr<Server> Server::open(const std::string& socketPath, std::string& error, const ServerOptions& opt) {
  sockaddr_un addr{};
  if (socketPath.empty() || socketPath.size() >= sizeof addr.sun_path) {
    error = "socket path too long: " + socketPath;
    return nullptr;
  }
  addr.sun_family = AF_UNIX;
  // A live server on the path is an error; a stale socket is replaced below.
  {
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memcpy(addr.sun_path, socketPath.c_str(), socketPath.size() + 1);
    if (probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      ::close(probe);
      error = "another server listens on " + socketPath;
      return nullptr;
    }
    if (probe >= 0) ::close(probe);
  }
  // Bind a private temporary name, restrict it, listen, then rename it into place:
  // the final path never exists with wider permissions, and replacement is atomic.
  std::string tmp = socketPath + "." + std::to_string(getpid()) + ".tmp";
  if (tmp.size() >= sizeof addr.sun_path) tmp = socketPath;  // no room: bind in place (after unlink)
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + strerror(errno);
    return nullptr;
  }
  auto fail = [&](const std::string& what) {
    error = what + ": " + strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return nullptr;
  };
  ::unlink(tmp.c_str());
  memset(addr.sun_path, 0, sizeof addr.sun_path);
  memcpy(addr.sun_path, tmp.c_str(), tmp.size() + 1);
  // Until listen() nobody can connect, so the moment before chmod() is harmless.
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return fail("bind " + tmp);
  if (::chmod(tmp.c_str(), 0600) != 0) return fail("chmod " + tmp);
  if (::listen(fd, 64) != 0) return fail("listen " + tmp);
  if (tmp != socketPath && ::rename(tmp.c_str(), socketPath.c_str()) != 0) return fail("rename to " + socketPath);
  struct stat sb {};
  if (::stat(socketPath.c_str(), &sb) != 0) return fail("stat " + socketPath);

  auto impl = std::make_unique<Impl>();
  impl->opt = opt;
  impl->path = socketPath;
  impl->dev = sb.st_dev;
  impl->ino = sb.st_ino;
  impl->listenFd = fd;
  int p[2];
  if (::pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + strerror(errno);
    ::close(fd);
    ::unlink(socketPath.c_str());
    return nullptr;
  }
  impl->wakeR = p[0];
  impl->wakeW = p[1];
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::poll(const ServerHooks& h, int timeoutMs) {
  Impl& s = *impl_;
  std::lock_guard pl(s.pollMu);
  std::vector<ConnPtr> snap;
  std::vector<pollfd> fds;
  {
    std::lock_guard lk(s.mu);
    if (s.closed) return;
    s.expireIdle();
    s.reap();
    fds.push_back({s.listenFd, POLLIN, 0});
    fds.push_back({s.wakeR, POLLIN, 0});
    for (auto& c : s.conns) {
      short ev = c->closeAfterFlush ? 0 : POLLIN;
      if (!c->out.empty()) ev |= POLLOUT;
      fds.push_back({c->fd, ev, 0});
      snap.push_back(c);
    }
  }
  int n = ::poll(fds.data(), fds.size(), timeoutMs < 0 ? 0 : timeoutMs);
  if (n <= 0) return;
  if (fds[1].revents & POLLIN) {
    char buf[256];
    while (::read(s.wakeR, buf, sizeof buf) > 0) {
    }
  }
  if (fds[0].revents & POLLIN) s.accept();

  // Read; cut frames. Only this thread touches Conn::in.
  std::vector<std::pair<ConnPtr, Tree>> requests;
  for (size_t k = 0; k < snap.size(); ++k)
    if (fds[k + 2].revents & (POLLIN | POLLHUP | POLLERR)) s.readRequests(snap[k], requests);

  // Answer, in arrival order, without the lock (hooks may take their time).
  for (auto& [cp, req] : requests) {
    s.commandSeen.store(true);
    Answer a = answer(s, h, req);
    std::lock_guard lk(s.mu);
    for (auto& gone : a.ended) s.endStream(gone);
    Conn& c = *cp;
    if (c.dead || c.closeAfterFlush) continue;
    std::string frame;
    try {
      frame = encodeFrame(Kind::Reply, a.reply.text());
    } catch (const std::length_error&) {
      frame = encodeFrame(Kind::Reply, errorTree("error: reply too large").text());
    }
    s.enqueue(c, std::move(frame));
    if (!a.subscribe.empty()) {  // the reply goes first; data follows it on the same connection
      s.unsubscribe(c);
      c.stream = a.subscribe;
      c.cap = a.cap;
      ++s.subs[c.stream];
      s.subscriberCount.fetch_add(1, std::memory_order_relaxed);
    }
  }

  std::lock_guard lk(s.mu);
  for (auto& c : s.conns) s.flush(*c);
  s.reap();
}

bool Server::anyCommandSeen() const { return impl_->commandSeen.load(); }

bool Server::anySubscriber() const { return impl_->subscriberCount.load(std::memory_order_relaxed) != 0; }

bool Server::subscribed(const std::string& stream) const {
  Impl& s = *impl_;
  if (s.subscriberCount.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lk(s.mu);
  return s.subs.count(stream) > 0;
}

void Server::publish(const std::string& stream, const std::vector<std::string>& values, const std::vector<bool>& nulls) {
  Impl& s = *impl_;
  if (s.subscriberCount.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lk(s.mu);
  if (s.closed) return;
  auto it = s.subs.find(stream);
  if (it == s.subs.end()) return;
  // Formatted once, sent to every subscriber of the stream.
  Tree t;
  t.add("stream", stream);
  t.add("count", std::to_string(values.size()));
  std::string map;
  for (size_t k = 0; k < values.size(); ++k) {
    const bool null = k < nulls.size() && nulls[k];
    t.add(std::to_string(k), values[k]);
    map += null ? '1' : '0';
  }
  t.add("nullmap", map);
  std::string frame;
  try {
    frame = encodeFrame(Kind::Data, t.text());
  } catch (const std::length_error&) {
    s.st.dropped += uint64_t(it->second);
    s.log("ipc: record of " + stream + " too large to send");
    return;
  }
  bool pending = false;
  for (auto& cp : s.conns) {
    Conn& c = *cp;
    if (c.dead || c.stream != stream) continue;
    if (c.out.size() >= c.cap || c.outBytes + frame.size() > s.opt.maxQueueBytes) {
      ++s.st.dropped;
      ++s.st.disconnected;
      s.log("ipc: a client of " + stream + " stayed behind (" + std::to_string(c.out.size()) +
            " messages queued); disconnected");
      s.drop(c);
      continue;
    }
    s.enqueue(c, frame);
    ++s.st.published;
    if (c.out.size() == 1) s.flush(c);
    if (!c.dead && !c.out.empty()) pending = true;
  }
  if (pending) s.wake();  // poll() then waits for POLLOUT on it
}

void Server::shutdown() {
  Impl& s = *impl_;
  s.wake();  // a poll() in progress returns at once
  std::lock_guard pl(s.pollMu);
  {
    std::lock_guard lk(s.mu);
    if (s.closed) return;
  }
  // Requests nobody answered yet (the engine stopped before serving them).
  s.accept();
  std::vector<ConnPtr> all;
  {
    std::lock_guard lk(s.mu);
    all = s.conns;
  }
  std::vector<std::pair<ConnPtr, Tree>> pending;
  for (auto& c : all) s.readRequests(c, pending);
  {
    std::lock_guard lk(s.mu);
    for (auto& [c, req] : pending)
      if (!c->dead && !c->closeAfterFlush) s.enqueue(*c, encodeFrame(Kind::Reply, errorTree("server stopping").text()));
    s.closed = true;
    const std::string frame = endFrame("shutdown");
    for (auto& c : s.conns)
      if (!c->dead && !c->stream.empty()) {
        s.enqueue(*c, frame);
        s.unsubscribe(*c);
      }
    ::close(s.listenFd);
    s.listenFd = -1;
    struct stat sb {};
    if (::stat(s.path.c_str(), &sb) == 0 && sb.st_dev == s.dev && sb.st_ino == s.ino) ::unlink(s.path.c_str());
  }
  // Deliver what is queued (data, replies, end markers) for a bounded time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.opt.shutdownFlushMs);
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<ConnPtr> hold;
    {
      std::lock_guard lk(s.mu);
      for (auto& c : s.conns) {
        s.flush(*c);
        if (!c->dead && !c->out.empty()) {
          fds.push_back({c->fd, POLLOUT, 0});
          hold.push_back(c);
        }
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (fds.empty() || left.count() <= 0) break;
    ::poll(fds.data(), fds.size(), int(std::min<int64_t>(left.count(), 50)));
  }
  std::lock_guard lk(s.mu);
  for (auto& c : s.conns) s.drop(*c);
  s.conns.clear();
  s.subs.clear();
}

Server::Stats Server::stats() const {
  Impl& s = *impl_;
  std::lock_guard lk(s.mu);
  Stats st = s.st;
  st.clients = s.conns.size();
  st.subscribers = uint64_t(s.subscriberCount.load());
  return st;
}

}  // namespace ipc
