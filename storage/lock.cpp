#include "lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace storage {

std::unique_ptr<StorageLock> StorageLock::acquire(const std::string& dir, std::string& error) {
  std::string d = dir.empty() ? std::string(".") : dir;
  if (d.back() != '/') d += '/';
  const std::string path = d + kStorageLockName;
  const std::string shown = dir.empty() ? std::string(".") : dir;
  for (int attempt = 0; attempt < 8; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0) {
      error = errno == ELOOP ? "storage lock " + path + " is a symbolic link; refusing to use it"
                             : "cannot open storage lock " + path + ": " + strerror(errno);
      return nullptr;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
      error = "storage lock " + path + " is not a regular file of this user; refusing to use it";
      ::close(fd);
      return nullptr;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      std::string holder;
      char buf[64] = {};
      ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      if (n > 0) {
        holder = std::string(buf, size_t(n));
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\r')) holder.pop_back();
        if (holder.rfind("PID: ", 0) == 0) holder = "pid " + holder.substr(5);
      }
      ::close(fd);
      if (err == EWOULDBLOCK)
        error = "storage directory '" + shown + "' is in use by another engine" +
                (holder.empty() ? std::string() : " (" + holder + ")") + "; lock " + path;
      else error = "cannot lock " + path + ": " + strerror(err);
      return nullptr;
    }
    // The previous holder may have unlinked the file between our open and our
    // lock: then the lock is on a file nobody else will find. Take it again.
    struct stat now {};
    if (lstat(path.c_str(), &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
      ::close(fd);
      continue;
    }
    if ((st.st_mode & 0777) != 0600) fchmod(fd, 0600);
    const std::string text = "PID: " + std::to_string(getpid()) + "\n";
    if (ftruncate(fd, 0) == 0 && ::pwrite(fd, text.data(), text.size(), 0) != ssize_t(text.size())) {
      // The contents only help the message of a refused engine; the lock holds without them.
    }
    return std::unique_ptr<StorageLock>(new StorageLock(path, fd));
  }
  error = "cannot lock " + path + ": the lock file keeps changing";
  return nullptr;
}

StorageLock::~StorageLock() {
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace storage
