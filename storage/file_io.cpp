// POSIX file helpers of the stores and the meta index.
#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "store.hpp"

namespace storage::io {

int pwriteAll(int fd, const void* buf, size_t n, off_t off, size_t& done) {
  const char* p = static_cast<const char*>(buf);
  int eintr = 0;
  done = 0;
  while (done < n) {
    ssize_t w = ::pwrite(fd, p + done, n - done, off + off_t(done));
    if (w < 0) {
      if (errno == EINTR && ++eintr <= 5) continue;
      return errno;
    }
    if (w == 0) return EIO;
    done += size_t(w);
  }
  return 0;
}

std::string writeFailed(const std::string& what, int err) {
  return "storage: write failed on " + what + ": " + strerror(err);
}

void truncateTo(int fd, off_t size) {
  while (ftruncate(fd, size) != 0 && errno == EINTR) {
  }
}

void appendWhole(int fd, const void* buf, size_t n, const std::string& what) {
  struct stat st {};
  if (fstat(fd, &st) != 0) throw StorageError("storage: cannot stat " + what + ": " + strerror(errno));
  size_t done = 0;
  if (int err = pwriteAll(fd, buf, n, st.st_size, done)) {
    if (done) truncateTo(fd, st.st_size);
    throw StorageError(writeFailed(what, err));
  }
}

bool preadAll(int fd, void* buf, size_t n, off_t off) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
    off += r;
  }
  return true;
}

int openRW(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw StorageError("storage: cannot open " + path + ": " + strerror(errno));
  return fd;
}

off_t fileSize(int fd) {
  struct stat st {};
  fstat(fd, &st);
  return st.st_size;
}

namespace {
std::string dirOf(const std::string& file) {
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}
}  // namespace

int syncDirOf(const std::string& file) {
  int fd = ::open(dirOf(file).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) != 0 ? errno : 0;
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

void reportError(const std::string& message) { fprintf(stderr, "ERROR: %s\n", message.c_str()); }

bool rotateStorageFile(const std::string& from, const std::string& to) {
  struct stat st {};
  if (::lstat(from.c_str(), &st) != 0) {
    if (errno != ENOENT) reportError("rotation: cannot inspect " + from + ": " + strerror(errno));
    return false;
  }
  if (::lstat(to.c_str(), &st) == 0) reportError("rotation: " + to + " exists and is overwritten by " + from);
  else if (errno != ENOENT) reportError("rotation: cannot inspect " + to + ": " + strerror(errno));
  if (::rename(from.c_str(), to.c_str()) != 0) {
    reportError("rotation: cannot rename " + from + " to " + to + ": " + strerror(errno));
    return false;
  }
  if (int err = syncDirOf(to)) reportError("rotation: cannot fsync the directory of " + to + ": " + strerror(err));
  if (dirOf(from) != dirOf(to))
    if (int err = syncDirOf(from))
      reportError("rotation: cannot fsync the directory of " + from + ": " + strerror(err));
  return true;
}

}  // namespace storage::io
