// Starts the real xretractor as a child process (fork + exec) in a test
// directory, optionally under a file-size limit, and reads `.meta` files and
// data files back raw (what is on disk, before any repair at open).
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
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
    struct rlimit rl {
      rlim_t(o.fileSizeLimit), rlim_t(o.fileSizeLimit)
    };
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

// Source rows "i i", every third "i NULL": field b of record i is NULL exactly
// when a % 3 == 0, so every record says which NULL bits its index must hold.
inline std::string nullEveryThird(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += std::to_string(i) + (i % 3 ? " " + std::to_string(i) : std::string(" NULL")) + "\n";
  return s;
}

// Two outputs of the same source: `nul` (two INTEGERs, 8-byte records) and
// `wide` (INTEGERs, a DOUBLE and a STRING); b is NULL in both where the
// source says so. The source wraps around, so a run goes on until stopped.
inline std::string nullQuery(bool rotation, const std::string& interval = "1/1000") {
  return std::string("STORAGE '.'\n") + (rotation ? "ROTATION 'rot.txt'\n" : "") +
         "DECLARE a INTEGER, b INTEGER STREAM src, " + interval +
         " TEXTFILE 's.txt'\n"
         "SELECT src[0], src[1] STREAM nul FROM src\n"
         "SELECT src[0], src[1], to_double(src[0]) / 3, 'row' STREAM wide FROM src\n";
}

struct Artifact {
  bool exists = false;
  int rec = 0, bits = 0;
  uint64_t data = 0;  // whole records in the data file
  storage::MetaFileView meta;
};

inline Artifact inspect(const std::filesystem::path& dir, const std::string& name, const std::string& dataName) {
  Artifact a;
  if (sizeOf(dir / (name + ".desc")) <= 0 || sizeOf(dir / dataName) < 0) return a;
  auto desc = storage::Descriptor::load((dir / (name + ".desc")).string());
  a.exists = true;
  a.rec = desc.recordSize();
  a.bits = int(desc.entries.size());
  a.data = uint64_t(sizeOf(dir / dataName)) / uint64_t(a.rec);
  // The index of an archive `name.old<N>` is `name.meta.old<N>` (ROTATION); of a live file `name.meta`.
  const std::string archive = dataName.rfind(name + ".old", 0) == 0 ? dataName.substr(name.size()) : "";
  a.meta = storage::readMetaFile((dir / (name + ".meta" + archive)).string(), a.bits);
  return a;
}

// Every record of `dataName` carries the NULL bit its values imply, except
// records in [unindexedFrom, unindexedTo), which a crash left without an index
// entry: those must read as non-NULL (all bits clear).
inline void checkNullBits(const std::filesystem::path& dir, const Artifact& a, const std::string& dataName,
                          uint64_t unindexedFrom, uint64_t unindexedTo) {
  std::ifstream in(dir / dataName, std::ios::binary);
  std::vector<char> rec(static_cast<size_t>(a.rec));
  uint64_t wrong = 0, firstWrong = UINT64_MAX;
  size_t entry = 0;      // the index entry holding record i
  uint64_t entryAt = 0;  // its first record
  for (uint64_t i = 0; i < a.data; ++i) {
    in.read(rec.data(), a.rec);
    int32_t va, vb;
    memcpy(&va, rec.data(), 4);
    memcpy(&vb, rec.data() + 4, 4);
    while (entry < a.meta.entries.size() && (a.meta.entries[entry].gap || i >= entryAt + a.meta.entries[entry].count)) {
      if (!a.meta.entries[entry].gap) entryAt += a.meta.entries[entry].count;
      ++entry;
    }
    const storage::MetaFileEntry* e = entry < a.meta.entries.size() ? &a.meta.entries[entry] : nullptr;
    const bool n0 = e && e->isNull(0), n1 = e && e->isNull(1);
    const bool unindexed = i >= unindexedFrom && i < unindexedTo;
    const bool ok = unindexed ? !n0 && !n1 : !n0 && n1 == (va % 3 == 0) && (n1 ? vb == 0 : vb == va);
    if (!ok && wrong++ == 0) firstWrong = i;
  }
  INFO(dataName << ": " << wrong << " records with wrong NULL bits, first at " << firstWrong << " of " << a.data);
  CHECK(wrong == 0);
}

}  // namespace testing
