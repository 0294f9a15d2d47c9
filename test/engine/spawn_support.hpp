// Starts the real xretractor as a child process (fork + exec) in a test
// directory, optionally under a file-size limit, and reads `.meta` files and
// data files back raw (what is on disk, before any repair at open).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "run_support.hpp"
#include "storage/descriptor.hpp"
#include "storage/store.hpp"

namespace testing {

struct SpawnOptions {
  long fileSizeLimit = -1;  // RLIMIT_FSIZE in bytes (SIGXFSZ ignored: writes fail with EFBIG)
  std::string tmpdir;       // TMPDIR of the child (default: the run directory)
};

// Starts `xretractor ARGS...` in `dir`, stdout to run.out and stderr to run.err.
inline pid_t spawnXretractor(const std::filesystem::path& dir, const std::vector<std::string>& args,
                             const SpawnOptions& o = {}, const std::string& tag = "run") {
  fflush(stdout);  // the child must not write the parent's buffered output again
  fflush(stderr);
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (chdir(dir.c_str()) != 0) _exit(127);
  setenv("TMPDIR", o.tmpdir.empty() ? dir.c_str() : o.tmpdir.c_str(), 1);
  if (!freopen((tag + ".out").c_str(), "w", stdout) || !freopen((tag + ".err").c_str(), "w", stderr)) _exit(127);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  if (o.fileSizeLimit >= 0) {
    signal(SIGXFSZ, SIG_IGN);  // inherited across exec: a write past the limit fails with EFBIG
    struct rlimit rl {rlim_t(o.fileSizeLimit), rlim_t(o.fileSizeLimit)};
    setrlimit(RLIMIT_FSIZE, &rl);
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(RDB_XRETRACTOR));
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(RDB_XRETRACTOR, argv.data());
  _exit(127);
}

// Waits for the child; returns its exit status, or 128 + signal.
inline int waitChild(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

inline int runXretractor(const std::filesystem::path& dir, const std::vector<std::string>& args,
                         const SpawnOptions& o = {}, const std::string& tag = "run") {
  return waitChild(spawnXretractor(dir, args, o, tag));
}

inline off_t sizeOf(const std::filesystem::path& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 ? st.st_size : -1;
}

// Records the `.meta` file counts (runs, not gaps), whole entries only.
inline uint64_t metaRecords(const storage::MetaFileView& v) {
  uint64_t n = 0;
  for (auto& e : v.entries)
    if (!e.gap) n += e.count;
  return n;
}

}  // namespace testing
