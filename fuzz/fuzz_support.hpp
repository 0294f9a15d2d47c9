// Helpers shared by the libFuzzer targets over the readers of outside input
// (descriptors, stores and .meta, IPC frames, configuration, text sources).
//
// Every target is also compiled into a plain replay program of the normal
// build (fuzz/replay_main.cpp): the same LLVMFuzzerTestOneInput runs over each
// reproducer in fuzz/regressions/<target>/. So the checks here never use
// assert() (release builds define NDEBUG): a broken expectation aborts.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace fuzz {

// An outcome that bad input must never produce: print and abort, so that
// libFuzzer records the input (and a replay fails).
[[noreturn]] inline void die(const char* target, const std::string& what) {
  std::fprintf(stderr, "\n==%s== %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const char* target, const std::string& what) {
  if (!ok) die(target, "check failed: " + what);
}

// RDB_FUZZ_VERBOSE=1 (or RQL_FUZZ_VERBOSE=1) prints the expected errors too.
inline void note(const char* target, const char* kind, const char* what) {
  static const bool verbose = std::getenv("RDB_FUZZ_VERBOSE") || std::getenv("RQL_FUZZ_VERBOSE");
  if (verbose) std::fprintf(stderr, "==%s== %s: %s\n", target, kind, what);
}

// One private directory per process, removed at exit. RDB_FUZZ_TMPDIR, else
// /dev/shm when writable (the store target fsyncs), else $TMPDIR or /tmp.
class TempDir {
 public:
  TempDir() {
    std::string root;
    if (const char* d = std::getenv("RDB_FUZZ_TMPDIR"); d && *d) root = d;
    else if (access("/dev/shm", W_OK) == 0) root = "/dev/shm";
    else if (const char* t = std::getenv("TMPDIR"); t && *t) root = t;
    else root = "/tmp";
    std::string tmpl = root + "/rdb-fuzz-XXXXXX";
    if (!mkdtemp(tmpl.data())) die("fuzz", "cannot create a directory under " + root + ": " + strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    clear();
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Removes every file of the directory (the targets create no subdirectories).
  void clear() const {
    DIR* d = opendir(path_.c_str());
    if (!d) return;
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      unlink(file(e->d_name).c_str());
    }
    closedir(d);
  }

 private:
  std::string path_;
};

inline TempDir& tempDir() {
  static TempDir dir;
  return dir;
}

inline void writeFile(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("fuzz", "cannot write " + path + ": " + strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) die("fuzz", "cannot write " + path + ": " + strerror(errno));
    done += size_t(w);
  }
  ::close(fd);
}

inline long long fileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (long long)st.st_size : -1;
}

}  // namespace fuzz
