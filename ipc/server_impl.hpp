// The server's inside, shared by its two files: server.cpp (the socket,
// connections, reading requests and answering them) and server_send.cpp
// (subscriptions, outgoing queues, publish and shutdown).
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ipc.hpp"

namespace ipc {

struct Conn {
  int fd = -1;
  FrameReader in;
  std::deque<std::string> out;  // frames not yet (fully) sent
  size_t outOff = 0;            // sent bytes of out.front()
  size_t outBytes = 0;
  std::string stream;  // subscription; empty = none
  size_t cap = 0;      // message bound while subscribed
  uint64_t lost = 0;   // records not queued since the last one that was (the queue was full)
  // `show` with `from`: the index the next live record should have. Records
  // before it are not sent (a subscriber waiting for a future index); one
  // after it is preceded by a `lost` notice for the gap. -1: no `from`, or
  // the first live record was sent.
  int64_t next = -1;
  bool closeAfterFlush = false;
  bool dead = false;
  std::chrono::steady_clock::time_point lastRequest;  // or the moment it connected
  ~Conn() {
    if (fd >= 0) ::close(fd);
  }
};
using ConnPtr = std::shared_ptr<Conn>;

// {db: text}: the reply or error frame of a refused request.
Tree errorTree(const std::string& text);
// The data message of one record (std::length_error when too large).
std::string dataFrame(const std::string& stream, const std::vector<std::string>& values, const std::vector<bool>& nulls,
                      int64_t n, const std::string& t);
// The notice that `count` records of `stream` were not sent (`lost`).
std::string lostFrame(const std::string& stream, uint64_t count);

struct Server::Impl {
  ServerOptions opt;
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
  int listenFd = -1;
  int wakeR = -1, wakeW = -1;

  std::mutex pollMu;      // held by poll() for its whole run, and by shutdown()
  mutable std::mutex mu;  // everything below
  std::vector<ConnPtr> conns;
  std::unordered_map<std::string, int> subs;
  Stats st;
  bool closed = false;
  std::atomic<int> subscriberCount{0};
  std::atomic<bool> commandSeen{false};

  ~Impl();

  void log(const std::string& m) {
    if (opt.log) opt.log(m);
  }
  void wake();

  // --- all below with `mu` held (server_send.cpp)
  void subscribe(Conn& c, const std::string& stream, size_t cap);
  void unsubscribe(Conn& c);
  void drop(Conn& c);
  void enqueue(Conn& c, std::string frame);
  void flush(Conn& c);  // sends what the socket takes now
  // Ends the subscriptions to `stream`: end marker (reason "removed"), then the
  // connection closes once it is sent.
  void endStream(const std::string& stream);

  // --- with `mu` held (server.cpp)
  void reap();
  void expireIdle();

  // --- without `mu` (server.cpp)
  void accept();
  void readRequests(const ConnPtr& cp, std::vector<std::pair<ConnPtr, Tree>>& requests);
  size_t queueBound(const ServerHooks& h, const std::string& stream) const;
};

}  // namespace ipc
