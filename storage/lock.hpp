// The storage directory lock: one engine per storage directory. A second
// engine on the same directory would delete and rewrite the first one's
// artifacts, so it is refused before it touches any file.
#pragma once

#include <memory>
#include <string>

namespace storage {

// An exclusive advisory lock (flock) on DIR/.xretractor_storage.lock, held
// until destruction; the file holds "PID: <pid>" of the holder. The file is
// opened with O_NOFOLLOW | O_CLOEXEC, mode 0600, and must be a regular file of
// this user; a file its holder unlinked between our open and our lock is
// detected (inode check) and the lock is taken again.
class StorageLock {
 public:
  // Returns null and sets `error` when another process holds the lock or the
  // file cannot be used.
  static std::unique_ptr<StorageLock> acquire(const std::string& dir, std::string& error);
  ~StorageLock();  // unlinks the file, then releases the lock
  StorageLock(const StorageLock&) = delete;
  StorageLock& operator=(const StorageLock&) = delete;
  const std::string& path() const { return path_; }

 private:
  StorageLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

inline constexpr const char* kStorageLockName = ".xretractor_storage.lock";

}  // namespace storage
