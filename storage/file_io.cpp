// POSIX file helpers of the stores and the meta index.
#include "file_io.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
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

std::atomic<uint64_t> gSyncs{0};

// syncfs(2) reports writeback errors from Linux 5.8 on; not for files of a
// stacked or remote file system, whose syncfs may neither reach the storage
// under it nor see its errors (overlayfs, FUSE, NFS: fsync a file there).
bool syncfsReportsErrors(int fd) {
  struct utsname u {};
  if (uname(&u) != 0) return false;
  int major = 0, minor = 0;
  if (sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  if (major < 5 || (major == 5 && minor < 8)) return false;
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) return false;
  const auto type = static_cast<unsigned long>(fs.f_type);
  return type != OVERLAYFS_SUPER_MAGIC && type != FUSE_SUPER_MAGIC && type != NFS_SUPER_MAGIC;
}
}  // namespace

int syncFile(int fd) {
  gSyncs.fetch_add(1, std::memory_order_relaxed);
  return ::fsync(fd) != 0 ? errno : 0;
}

uint64_t syncCalls() { return gSyncs.load(std::memory_order_relaxed); }

FileSystemSync::FileSystemSync(const std::string& dir) {
  fd_ = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st {};
  if (fd_ >= 0 && fstat(fd_, &st) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
  dev_ = st.st_dev;
  reportsErrors_ = fd_ >= 0 && syncfsReportsErrors(fd_);
}

FileSystemSync::~FileSystemSync() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileSystemSync::holds(int fd) const {
  struct stat st {};
  return fd_ >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev_;
}

int FileSystemSync::sync() {
  if (fd_ < 0) return EBADF;
  gSyncs.fetch_add(1, std::memory_order_relaxed);
  return ::syncfs(fd_) != 0 ? errno : 0;
}

int syncDirOf(const std::string& file) {
  int fd = ::open(dirOf(file).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = syncFile(fd);
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

void reportError(const std::string& message) { fprintf(stderr, "ERROR: %s\n", message.c_str()); }

bool rotateStorageFile(const std::string& from, const std::string& to, bool syncDir) {
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
  if (!syncDir) return true;
  if (int err = syncDirOf(to)) reportError("rotation: cannot fsync the directory of " + to + ": " + strerror(err));
  if (dirOf(from) != dirOf(to))
    if (int err = syncDirOf(from))
      reportError("rotation: cannot fsync the directory of " + from + ": " + strerror(err));
  return true;
}

}  // namespace storage::io
