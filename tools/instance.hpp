// One running engine instance: its lock file (${TMPDIR:-/tmp}/<program>_service.lock,
// "PID: <pid>" once clients can connect), its storage lock and IPC server, and
// what dead instances left behind.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ipc/ipc.hpp"
#include "storage/lock.hpp"
#include "tools/config.hpp"

namespace tools {

struct InstanceLock {
  std::string path;
  int fd = -1;
  // Takes the lock (a second instance stops here); the contents come later,
  // once clients can connect, so "PID: <pid>" in the file means "serving".
  bool acquire(const std::string& dir, const std::string& prog);
  // Writes "PID: ..." (and the query file) into the lock.
  bool announce(const std::string& queryFile);
  ~InstanceLock();
};

// Exit codes of an instance that cannot start (docs/compatibility.md).
constexpr int kExitIpc = 10, kExitInstance = 37;

// A serving instance: the lock first (a second instance stops here), then one
// engine per storage directory (before the engine touches any artifact), then
// the socket, then "PID:" in the lock: "lock present" means clients can connect.
struct Instance {
  std::string prog, socket;
  InstanceLock lock;
  std::unique_ptr<storage::StorageLock> storageLock;
  std::unique_ptr<ipc::Server> server;

  // 0, or the exit code after a diagnostic.
  int open(const Config& config, const std::optional<std::string>& storageDir, const std::string& announcedFile);
  // The storage directory of the plan being run: one engine per directory.
  bool lockStorage(const std::string& dir, std::string* why = nullptr);
};

// Whether the instance `prog` (name with its instance suffix) holds its lock.
bool instanceRunning(const std::string& lockDir, const std::string& prog);

// Removes the lock files and sockets of instances that are not running: a lock
// nobody holds is stale, and so is the socket beside it. Prints what it did.
void cleanupInstances(const std::string& lockDir);

}  // namespace tools
