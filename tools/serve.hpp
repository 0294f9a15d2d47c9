// The wiring between a running engine and its clients (xqry): what their
// commands do to the engine (ipc::ServerHooks), and when they are served
// between slots (engine::SlotHooks): while waiting for a deadline, every
// 20 ms when behind schedule, every few thousand slots offline.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "ipc/ipc.hpp"
#include "tools/adhoc.hpp"

namespace tools {

class ClientWiring {
 public:
  // spinUs: the last microseconds before a deadline are spun, not slept.
  ClientWiring(engine::Engine& eng, ipc::Server& server, std::atomic<bool>& stop, int spinUs, AdHocPolicy policy = {});
  ClientWiring(const ClientWiring&) = delete;
  ClientWiring& operator=(const ClientWiring&) = delete;

  ipc::ServerHooks& serverHooks() { return server_; }
  void planChanged() { timing_.clear(); }  // streams may have new intervals (xqry --reset)
  const engine::SlotHooks& slotHooks() const { return slots_; }

 private:
  void waitUntil(std::chrono::steady_clock::time_point deadline);
  void publish(const std::vector<const std::string*>& wrote);

  engine::Engine& eng_;
  ipc::Server& srv_;
  std::atomic<bool>& stop_;
  const std::chrono::microseconds spin_;
  const AdHocPolicy policy_;
  ipc::ServerHooks server_;
  engine::SlotHooks slots_;
  std::chrono::steady_clock::time_point lastPoll_ = std::chrono::steady_clock::now();
  std::map<std::string, std::optional<engine::StreamStatus>> timing_;  // for slot times
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
};

}  // namespace tools
