// /metrics in the Prometheus text format (prometheus-cpp: its registry, and
// its pull exposer serving HTTP on a thread of its own). The engine's numbers
// are copied in on the engine's thread, at most four times a second; a
// scrape only reads the registry.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "ipc/ipc.hpp"

namespace tools {

// Whether `hostPort` ("host:port") names a loopback address; `why` says what is wrong otherwise.
bool loopbackAddress(const std::string& hostPort, std::string& why);

class Metrics {
 public:
  // Listens on `hostPort`; throws std::runtime_error when it cannot.
  explicit Metrics(const std::string& hostPort);
  ~Metrics();
  // On the engine's thread: the streams, the IPC counters, JIT time and memory.
  void update(const engine::Engine& eng, const ipc::Server::Stats& ipc);
  // On the engine's thread: one clocked slot's lateness.
  void lateness(int64_t ns);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tools
