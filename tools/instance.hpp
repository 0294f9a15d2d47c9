// One running engine instance: its lock file (${TMPDIR:-/tmp}/<program>_service.lock,
// "PID: <pid>" once clients can connect) and what dead instances left behind.
#pragma once

#include <string>

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

// Whether the instance `prog` (name with its instance suffix) holds its lock.
bool instanceRunning(const std::string& lockDir, const std::string& prog);

// Removes the lock files and sockets of instances that are not running: a lock
// nobody holds is stale, and so is the socket beside it. Prints what it did.
void cleanupInstances(const std::string& lockDir);

}  // namespace tools
