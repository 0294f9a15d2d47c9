// The sending side of the server: subscriptions, the bounded outgoing queue of
// each connection, publish() (one record to every subscriber of its stream, never
// blocking) and shutdown() (end markers, queued bytes sent for a bounded time).
// poll() and the request side are in server.cpp; the shared state in server_impl.hpp.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "server_impl.hpp"

namespace ipc {

namespace {

// The data message that ends a subscription (ipc.hpp, kEndMarker).
std::string endFrame(const char* reason, const std::string& stream = "") {
  Tree t;
  t.add("stream", kEndMarker);
  t.add("reason", reason);
  if (!stream.empty()) t.add("id", stream);
  return encodeFrame(Kind::Data, t.text());
}

}  // namespace

void Server::Impl::wake() {
  if (wakeW >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t r = ::write(wakeW, &c, 1);
  }
}

void Server::Impl::subscribe(Conn& c, const std::string& stream, size_t cap) {
  unsubscribe(c);
  c.stream = stream;
  c.cap = cap;
  c.lost = 0;
  c.next = -1;
  ++subs[c.stream];
  subscriberCount.fetch_add(1, std::memory_order_relaxed);
}

void Server::Impl::unsubscribe(Conn& c) {
  if (c.stream.empty()) return;
  auto it = subs.find(c.stream);
  if (it != subs.end() && --it->second <= 0) subs.erase(it);
  c.stream.clear();
  subscriberCount.fetch_sub(1, std::memory_order_relaxed);
}

void Server::Impl::drop(Conn& c) {
  if (c.dead) return;
  unsubscribe(c);
  c.dead = true;
  ::shutdown(c.fd, SHUT_RDWR);  // the descriptor closes with the last reference
}

void Server::Impl::enqueue(Conn& c, std::string frame) {
  c.outBytes += frame.size();
  c.out.push_back(std::move(frame));
}

void Server::Impl::flush(Conn& c) {
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

void Server::endSubscriptions() {
  Impl& s = *impl_;
  std::lock_guard lk(s.mu);
  std::vector<std::string> names;
  for (auto& [name, n] : s.subs) names.push_back(name);
  for (auto& name : names) s.endStream(name);
}

void Server::Impl::endStream(const std::string& stream) {
  for (auto& cp : conns) {
    Conn& c = *cp;
    if (c.dead || c.stream != stream) continue;
    enqueue(c, endFrame("removed", stream));
    unsubscribe(c);
    c.closeAfterFlush = true;
  }
}

bool Server::subscribed(const std::string& stream) const {
  Impl& s = *impl_;
  if (s.subscriberCount.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lk(s.mu);
  return s.subs.count(stream) > 0;
}

bool Server::anySubscriber() const { return impl_->subscriberCount.load(std::memory_order_relaxed) != 0; }

std::string lostFrame(const std::string& stream, uint64_t count) {
  Tree notice;
  notice.add("stream", stream);
  notice.add("count", "0");
  notice.add("lost", std::to_string(count));
  return encodeFrame(Kind::Data, notice.text());
}

// The data message of one record (throws std::length_error when too large).
std::string dataFrame(const std::string& stream, const std::vector<std::string>& values, const std::vector<bool>& nulls,
                      int64_t n, const std::string& t) {
  Tree m;
  m.add("stream", stream);
  m.add("count", std::to_string(values.size()));
  std::string map;
  for (size_t k = 0; k < values.size(); ++k) {
    const bool null = k < nulls.size() && nulls[k];
    m.add(std::to_string(k), values[k]);
    map += null ? '1' : '0';
  }
  m.add("nullmap", map);
  if (n >= 0) m.add("n", std::to_string(n));  // old clients read only the fields above
  if (!t.empty()) m.add("t", t);
  return encodeFrame(Kind::Data, m.text());
}

void Server::publish(const std::string& stream, const std::vector<std::string>& values, const std::vector<bool>& nulls,
                     int64_t n, const std::string& t) {
  Impl& s = *impl_;
  if (s.subscriberCount.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lk(s.mu);
  if (s.closed) return;
  auto it = s.subs.find(stream);
  if (it == s.subs.end()) return;
  // Formatted once, sent to every subscriber of the stream.
  std::string frame;
  try {
    frame = dataFrame(stream, values, nulls, n, t);
  } catch (const std::length_error&) {
    s.st.dropped += uint64_t(it->second);
    s.log("ipc: record of " + stream + " too large to send");
    return;
  }
  bool pending = false;
  for (auto& cp : s.conns) {
    Conn& c = *cp;
    if (c.dead || c.stream != stream) continue;
    if (c.next >= 0 && n >= 0) {  // `show` with `from`: the first live record
      if (n < c.next) continue;   // still to come: the subscriber waits for it
      // Asked for but never sent (a stream that started after `from`, a replay
      // cut short): said before any record, outside the queue's loss count.
      if (n > c.next) s.enqueue(c, lostFrame(stream, uint64_t(n - c.next)));
      c.next = -1;
    }
    if (c.out.size() >= c.cap || c.outBytes + frame.size() > s.opt.maxQueueBytes) {
      // Behind: the record is not queued, and the client hears how many it
      // lost once it catches up. One that lost more than a whole queue does
      // not read at all: it is cut off.
      ++s.st.dropped;
      if (++c.lost <= c.cap) continue;
      ++s.st.disconnected;
      s.log("ipc: a client of " + stream + " stayed behind (" + std::to_string(c.out.size()) +
            " messages queued); disconnected");
      s.drop(c);
      continue;
    }
    if (c.lost) {
      s.enqueue(c, lostFrame(stream, c.lost));
      c.lost = 0;
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
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (fds.empty() || left.count() <= 0) break;
    ::poll(fds.data(), fds.size(), int(std::min<int64_t>(left.count(), 50)));
  }
  std::lock_guard lk(s.mu);
  for (auto& c : s.conns) s.drop(*c);
  s.conns.clear();
  s.subs.clear();
}

}  // namespace ipc
