// The client side: one connection, requests answered in order, data messages
// after `show` on the same connection.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "ipc.hpp"

namespace ipc {

namespace {
constexpr const char* kClosedText = "connection closed by the server";
}  // namespace

std::unique_ptr<Client> Client::connect(const std::string& socketPath, std::string& error, int* err) {
  sockaddr_un addr{};
  if (socketPath.size() >= sizeof addr.sun_path) {
    error = strerror(ENAMETOOLONG);
    if (err) *err = ENAMETOOLONG;
    return nullptr;
  }
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, socketPath.c_str(), socketPath.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    error = strerror(e);
    if (err) *err = e;
    return nullptr;
  }
  // The process that listens: a reply is waited for only while it lives.
  ucred cred{};
  socklen_t len = sizeof cred;
  const pid_t server = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
  return std::unique_ptr<Client>(new Client(fd, server));
}

bool Client::serverGone() const { return serverPid_ > 0 && ::kill(serverPid_, 0) != 0 && errno == ESRCH; }

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

bool Client::sendRaw(const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += size_t(n);
  }
  return true;
}

Client::Status Client::receiveFrame(Frame& f, int timeoutMs, std::string* error) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    std::string why;
    auto r = in_.next(f, why);
    if (r == FrameReader::Result::Frame) return Status::Ok;
    if (r == FrameReader::Result::Bad) {
      if (error) *error = "malformed frame from the server: " + why;
      return Status::Error;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, int(std::max<int64_t>(left, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Timeout;
    char buf[16384];
    ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got > 0) {
      in_.feed(buf, size_t(got));
    } else if (got == 0) {
      if (error) *error = kClosedText;
      return Status::Closed;
    } else if (errno != EINTR && errno != EAGAIN) {
      if (error) *error = strerror(errno);
      return Status::Closed;
    }
  }
}

Client::Status Client::request(const std::string& message, const std::string& argument, Tree& reply, int timeoutMs,
                               std::string* error, const std::vector<std::pair<std::string, std::string>>& extra) {
  Tree req;
  Tree& db = req.add("db");
  db.add("message", message);
  db.add("id", std::to_string(getpid()));
  if (!argument.empty()) db.add("argument", argument);
  for (auto& [k, v] : extra) db.add(k, v);
  std::string frame;
  try {
    frame = encodeFrame(Kind::Request, req.text());
  } catch (const std::length_error& e) {
    if (error) *error = "request too large";
    return Status::Error;
  }
  if (!sendRaw(frame)) {
    // The server may have said why before it closed (too many clients, idle).
    const int e = errno;
    Frame f;
    if (receiveFrame(f, 100) == Status::Ok && f.kind == Kind::Error) {
      auto t = Tree::parse(f.payload);
      if (error) *error = t ? t->get("db") : "error frame from the server";
      return Status::Error;
    }
    if (error) *error = strerror(e);
    return Status::Closed;
  }
  // The request is out: from here on a connection that ends leaves its outcome
  // unknown. Without a deadline the wait goes in slices, and between them the
  // server's process is looked at (a socket held open by something else must
  // not keep the client waiting for a process that is gone).
  using clock = std::chrono::steady_clock;
  const bool forever = timeoutMs < 0;
  constexpr auto kSlice = std::chrono::milliseconds(500);
  auto deadline = clock::now() + (forever ? kSlice : std::chrono::milliseconds(timeoutMs));
  for (;;) {
    Kind kind;
    Tree t;
    const Status st = nextTree(deadline, kind, t, "malformed reply: ", error);
    if (st == Status::Timeout && forever) {
      if (serverGone()) {
        if (error) *error = "the server's process ended";
        return Status::Lost;
      }
      deadline = clock::now() + kSlice;
      continue;
    }
    if (st == Status::Closed) {
      if (error) *error = *error == kClosedText ? std::string("connection lost") : "connection lost: " + *error;
      return Status::Lost;
    }
    if (st != Status::Ok) return st;
    switch (kind) {
      case Kind::Reply: reply = std::move(t); return Status::Ok;
      case Kind::Data: pending_.push_back(std::move(t)); break;
      case Kind::Error:
        if (error) *error = t.get("db");
        return Status::Error;
      default:
        if (error) *error = "unexpected frame kind";
        return Status::Error;
    }
  }
}

Client::Status Client::nextTree(std::chrono::steady_clock::time_point deadline, Kind& kind, Tree& t, const char* what,
                                std::string* error) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  Frame f;
  if (Status st = receiveFrame(f, int(std::max<int64_t>(left, 0)), error); st != Status::Ok) return st;
  std::string why;
  auto parsed = Tree::parse(f.payload, &why);
  if (!parsed) {
    if (error) *error = what + why;
    return Status::Error;
  }
  kind = f.kind;
  t = std::move(*parsed);
  return Status::Ok;
}

Client::Status Client::receive(Tree& data, int timeoutMs, std::string* error) {
  if (!pending_.empty()) {
    data = std::move(pending_.front());
    pending_.pop_front();
    return Status::Ok;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    Kind kind;
    Tree t;
    if (Status st = nextTree(deadline, kind, t, "malformed message: ", error); st != Status::Ok) return st;
    if (kind == Kind::Data) {
      data = std::move(t);
      return Status::Ok;
    }
    if (kind == Kind::Error) {
      if (error) *error = t.get("db");
      return Status::Error;
    }
    // A stray reply: ignore it.
  }
}

}  // namespace ipc
