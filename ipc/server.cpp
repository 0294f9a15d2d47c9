// The server side: a listening socket, one connection per client, bounded
// outgoing queues. poll() is the only place that reads and the only place that
// calls the hooks; publish() only appends to queues and tries a non-blocking send.
// This file: the socket, connections, requests and their answers; the sending
// side (subscriptions, queues, publish, shutdown) is server_send.cpp.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "server_impl.hpp"

namespace ipc {

Tree errorTree(const std::string& text) {
  Tree t;
  t.add("db", text);
  return t;
}

namespace {

std::string normalizeDuration(const std::string& d) {
  if (d.size() > 2 && d.compare(d.size() - 2, 2, "/1") == 0) return d.substr(0, d.size() - 2);
  return d;
}

// floor(1/delta) of an "n/d" or decimal text; 0 when unknown.
int64_t perSecond(const std::string& d) {
  try {
    size_t slash = d.find('/');
    double v =
        slash == std::string::npos ? std::stod(d) : std::stod(d.substr(0, slash)) / std::stod(d.substr(slash + 1));
    if (!(v > 0)) return 0;
    double r = std::floor(1.0 / v);
    return r > 1e7 ? int64_t(1e7) : int64_t(r);
  } catch (...) {
    return 0;
  }
}

}  // namespace

Server::Impl::~Impl() {
  if (listenFd >= 0) ::close(listenFd);
  if (wakeR >= 0) ::close(wakeR);
  if (wakeW >= 0) ::close(wakeW);
}

void Server::Impl::reap() {
  std::erase_if(conns, [](const ConnPtr& c) { return c->dead; });
}

// Closes connections that hold no subscription and sent no request for
// opt.idleTimeoutMs: a connection that only sits there must not keep others out.
void Server::Impl::expireIdle() {
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

void Server::Impl::accept() {
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
void Server::Impl::readRequests(const ConnPtr& cp, std::vector<std::pair<ConnPtr, Tree>>& requests) {
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

size_t Server::Impl::queueBound(const ServerHooks& h, const std::string& stream) const {
  int64_t perSec = 0;
  if (h.list)
    for (auto& s : h.list())
      if (s.id == stream) perSec = perSecond(s.duration);
  int64_t n = std::max<int64_t>(perSec * opt.queueBufferSeconds, opt.minQueueElements);
  return size_t(std::max<int64_t>(n, 1));
}
// ---------------------------------------------------------------- answers
namespace {

struct Answer {
  Tree reply;
  std::string subscribe;  // `show`: the stream to register
  size_t cap = 0;
  std::vector<std::string> ended;     // `remove`: subscribed streams that are gone now
  std::vector<std::string> replayed;  // `show` with `from`: data frames queued right after the reply
  int64_t next = -1;                  // `show` with `from`: the index the first live record should have
};

void answerGet(const ServerHooks& h, Answer& a) {
  if (!h.list) return;
  auto list = h.list();
  if (list.empty()) return;
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

void answerDetail(const ServerHooks& h, const std::string& arg, Answer& a) {
  if (arg.empty()) {
    a.reply = errorTree("error: missing stream name");
    return;
  }
  auto d = h.detail ? h.detail(arg) : std::nullopt;
  if (!d) {
    if (h.detail) a.reply = errorTree("error: stream not found: " + arg);
    return;
  }
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
  if (d->isDevice) {  // only for DEVICE sources, so other streams' answers stay as they were
    db.add("reads", std::to_string(d->reads));
    db.add("misses", std::to_string(d->misses));
  }
  for (auto& [name, value] : d->counters) db.add(name, std::to_string(value));
}

// A record index as `show` takes it in `from`: digits only, 0 to INT64_MAX.
std::optional<int64_t> recordIndex(const std::string& text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// `show` with `from`: the stored records go out before any live one. A
// notice first says how many of those asked for are no longer held. A `from`
// past the newest record replays nothing and the subscription waits for it:
// the reply says so (`waiting`, with `newest` when one was written).
void replay(const ServerHooks& h, const std::string& stream, const std::string& fromText, Answer& a) {
  const std::optional<int64_t> from = recordIndex(fromText);
  if (!from) {
    a.reply = errorTree("error: from must be a record index from 0 to " +
                        std::to_string(std::numeric_limits<int64_t>::max()) + ": " + fromText);
    a.subscribe.clear();
    return;
  }
  const Replay r = h.replay(stream, *from);
  if (r.unavailable > 0) a.replayed.push_back(lostFrame(stream, uint64_t(r.unavailable)));
  size_t sent = 0;
  for (auto& rec : r.records) {
    try {
      a.replayed.push_back(dataFrame(stream, rec.values, rec.nulls, rec.n, rec.t));
      ++sent;
    } catch (const std::length_error&) {
      break;  // a record too large to send ends the replay (the rest is reported lost before the next record)
    }
  }
  a.cap += a.replayed.size();  // the replay does not count against the live bound
  if (*from > r.newest) {
    a.next = *from;
    Tree& db = a.reply.add("db");
    db.add("waiting", std::to_string(*from));
    if (r.newest >= 0) db.add("newest", std::to_string(r.newest));
  } else {
    a.next = *from + r.unavailable + int64_t(sent);  // newest + 1 unless the replay ended early
  }
}

void answerShow(const Server::Impl& s, const ServerHooks& h, const Tree& req, const std::string& arg, Answer& a) {
  if (!req.path("db.id") || req.get("db.id").empty()) {
    a.reply = errorTree("error: missing db.id");
  } else if (arg.empty()) {
    a.reply = errorTree("error: missing stream name");
  } else if (h.exists && !h.exists(arg)) {
    a.reply = errorTree("error: unknown stream: " + arg);
  } else {
    a.subscribe = arg;
    a.cap = s.queueBound(h, arg);
    if (const Tree* from = req.path("db.from"); from && h.replay) replay(h, arg, from->value, a);
  }
}

void answerRemove(Server::Impl& s, const ServerHooks& h, const std::string& arg, Answer& a) {
  if (arg.empty()) {
    a.reply = errorTree("error: missing stream name");
    return;
  }
  if (!h.remove) return;
  const std::string r = h.remove(arg);
  a.reply.add("db", r);
  if (r != "OK") return;
  // The stream, and substrates that went with it.
  std::vector<std::string> subscribed;
  {
    std::lock_guard lk(s.mu);
    for (auto& [name, n] : s.subs) subscribed.push_back(name);
  }
  for (auto& name : subscribed)
    if (name == arg || (h.exists && !h.exists(name))) a.ended.push_back(name);
}

void answerStatus(Server::Impl& s, Answer& a) {
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
}

Answer answer(Server::Impl& s, const ServerHooks& h, const Tree& req) {
  Answer a;
  const std::string msg = req.get("db.message");
  const Tree* argNode = req.path("db.argument");
  const std::string arg = argNode ? argNode->value : "";
  if (msg == "hello") {
    a.reply.add("db", "world");
  } else if (msg == "get") {
    answerGet(h, a);
  } else if (msg == "detail") {
    answerDetail(h, arg, a);
  } else if (msg == "show") {
    answerShow(s, h, req, arg, a);
  } else if (msg == "adhoc") {
    if (arg.empty()) a.reply = errorTree("error: missing stream name");
    else if (h.adhoc) a.reply.add("db", h.adhoc(arg));
  } else if (msg == "remove") {
    answerRemove(s, h, arg, a);
  } else if (msg == "reset") {
    if (!h.reset) a.reply = errorTree("error: this instance cannot load a plan");
    else a.reply.add("db", h.reset(arg, a.ended));
  } else if (msg == "kill") {
    if (h.kill) h.kill();
  } else if (msg == "status") {
    answerStatus(s, a);
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
    c.lastRequest = std::chrono::steady_clock::now();  // idle from the answer on, however long the hook took
    std::string frame;
    try {
      frame = encodeFrame(Kind::Reply, a.reply.text());
    } catch (const std::length_error&) {
      frame = encodeFrame(Kind::Reply, errorTree("error: reply too large").text());
    }
    s.enqueue(c, std::move(frame));
    // The reply goes first; data follows it on the same connection.
    if (!a.subscribe.empty()) {
      s.subscribe(c, a.subscribe, a.cap);
      c.next = a.next;
      for (auto& f : a.replayed) s.enqueue(c, std::move(f));
    }
  }

  std::lock_guard lk(s.mu);
  for (auto& c : s.conns) s.flush(*c);
  s.reap();
}

bool Server::anyCommandSeen() const { return impl_->commandSeen.load(); }

Server::Stats Server::stats() const {
  Impl& s = *impl_;
  std::lock_guard lk(s.mu);
  Stats st = s.st;
  st.clients = s.conns.size();
  st.subscribers = uint64_t(s.subscriberCount.load());
  return st;
}

}  // namespace ipc
