#include "tools/instance.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tools/log.hpp"

namespace tools {

static std::string lockPath(const std::string& dir, const std::string& prog) {
  return ((dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(dir)) /
          (prog + "_service.lock"))
      .string();
}

bool InstanceLock::acquire(const std::string& dir, const std::string& prog) {
  path = lockPath(dir, prog);
  // Never through a symbolic link (nor a FIFO, a device or a file of another user):
  // the lock is truncated and written, and it lives in a shared directory.
  fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0 && errno == ELOOP) {
    fmt::print(stderr, "{}: lock file {} is a symbolic link; refusing to use it\n", prog, path);
    return false;
  }
  struct stat sb {};
  if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1 || sb.st_uid != geteuid())) {
    fmt::print(stderr, "{}: lock file {} is not a regular file of this user with one link; refusing to use it\n", prog,
               path);
    ::close(fd);
    fd = -1;
    return false;
  }
  if (fd >= 0 && (sb.st_mode & 0777) != 0600) ::fchmod(fd, 0600);  // left by an older version
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    fmt::print(stderr, "Another instance is running, errno: {}\n", strerror(errno));
    if (fd >= 0) ::close(fd);
    fd = -1;
    return false;
  }
  return true;
}

bool InstanceLock::announce(const std::string& queryFile) {
  std::string text = fmt::format("PID: {}\nPPID: {}\nMODE: process\n", getpid(), getppid());
  if (!queryFile.empty()) {
    std::error_code ec;
    text += "QUERYFILE: " + std::filesystem::absolute(queryFile, ec).string() + "\n";
  }
  if (ftruncate(fd, 0) != 0 || ::write(fd, text.data(), text.size()) != ssize_t(text.size())) return false;
  fsync(fd);
  return true;
}

InstanceLock::~InstanceLock() {
  if (fd >= 0) {
    ::unlink(path.c_str());
    ::close(fd);
  }
}

bool instanceRunning(const std::string& lockDir, const std::string& prog) {
  int fd = ::open(lockPath(lockDir, prog).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  bool running = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0;
  if (fd >= 0) ::close(fd);
  return running;
}

void cleanupInstances(const std::string& lockDir) {
  namespace fs = std::filesystem;
  fs::path dir = lockDir.empty() ? fs::temp_directory_path() : fs::path(lockDir);
  std::error_code ec;
  int removed = 0;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    const std::string suffix = "_service.lock";
    if (n.rfind("xretractor", 0) != 0 || n.size() < suffix.size() ||
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    int fd = ::open(e.path().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (!held) {
      std::string sock = e.path().string();
      sock.replace(sock.size() - 5, 5, ".sock");
      fs::remove(sock, ec);
      fs::remove(e.path(), ec);
      fmt::print("removed {}\n", e.path().string());
      ++removed;
    }
    ::close(fd);
  }
  fmt::print("{} stale instance(s) cleaned up\n", removed);
}

int Instance::open(const Config& config, const std::optional<std::string>& storageDir,
                   const std::string& announcedFile) {
  if (!lock.acquire(config.lockDir, prog)) return kExitInstance;
  if (storageDir && !lockStorage(*storageDir)) return kExitInstance;
  ipc::ServerOptions sopt;
  sopt.queueBufferSeconds = config.queueBufferSeconds;
  sopt.minQueueElements = config.minQueueElements;
  sopt.maxClients = config.maxClients;
  sopt.idleTimeoutMs = config.clientIdleTimeoutMs;
  sopt.log = LogSink{.stderrPrefix = "xretractor: "};
  std::string ipcError;
  server = ipc::Server::open(socket, ipcError, sopt);
  if (!server) {
    fmt::print(stderr, "{}: cannot open {}: {}\n", prog, socket, ipcError);
    return kExitIpc;
  }
  if (lock.announce(announcedFile)) return 0;
  fmt::print(stderr, "{}: cannot write the lock file {}: {}\n", prog, lock.path, strerror(errno));
  return kExitInstance;
}

bool Instance::lockStorage(const std::string& dir, std::string* why) {
  std::string err;
  storageLock = storage::StorageLock::acquire(dir, err);
  if (storageLock) return true;
  if (why) *why = err;
  else fmt::print(stderr, "\nFATAL: {}\n", err);
  return false;
}

}  // namespace tools
