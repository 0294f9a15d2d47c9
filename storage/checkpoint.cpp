// Checkpoint files: format, durable write, checked read.
#include "storage/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>

#include "storage/file_io.hpp"

namespace storage {

namespace {

constexpr char kMagic[8] = {'R', 'D', 'B', 'C', 'K', 'P', 'T', '\n'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeader = 8 + 4 + 8;  // magic, version, payload length

uint32_t crcOf(const uint8_t* p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n > 0) {  // zlib takes a uInt length
    const uInt step = uInt(std::min<size_t>(n, 1u << 30));
    c = crc32(c, p, step);
    p += step;
    n -= step;
  }
  return uint32_t(c);
}

std::string why(const std::string& path, const std::string& what) { return "checkpoint " + path + ": " + what; }

// The payload of one file, or the reason it cannot be used; false: absent.
bool load(const std::string& path, std::vector<uint8_t>& payload, std::string& bad) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    bad = why(path, strerror(errno));
    return true;
  }
  std::vector<uint8_t> all;
  const off_t size = io::fileSize(fd);
  if (size >= 0) all.resize(size_t(size));
  const bool read = size >= 0 && io::preadAll(fd, all.data(), all.size(), 0);
  ::close(fd);
  if (!read) {
    bad = why(path, "cannot be read");
    return true;
  }
  uint32_t version = 0;
  uint64_t length = 0;
  if (all.size() < kHeader + 4 || memcmp(all.data(), kMagic, 8) != 0) {
    bad = why(path, all.size() < kHeader + 4 ? "torn (" + std::to_string(all.size()) + " bytes)" : "not a checkpoint");
    return true;
  }
  memcpy(&version, all.data() + 8, 4);
  memcpy(&length, all.data() + 12, 8);
  if (version != kVersion) {
    bad = why(path, "format version " + std::to_string(version) + ", this build reads " + std::to_string(kVersion));
    return true;
  }
  if (length != all.size() - kHeader - 4) {
    bad = why(path, "torn (" + std::to_string(all.size()) + " bytes, its header says " +
                        std::to_string(length + kHeader + 4) + ")");
    return true;
  }
  uint32_t crc;
  memcpy(&crc, all.data() + all.size() - 4, 4);
  if (crc != crcOf(all.data(), all.size() - 4)) {
    bad = why(path, "checksum mismatch (corrupt)");
    return true;
  }
  payload.assign(all.begin() + long(kHeader), all.end() - 4);
  return true;
}

}  // namespace

CheckpointPaths CheckpointPaths::in(const std::string& dir) {
  const std::string d = dir.empty() ? std::string(".") : dir;
  const std::string base = d + (d.back() == '/' ? "" : "/") + ".retractor.checkpoint";
  return {base, base + ".prev"};
}

std::string CheckpointPaths::temporary() const { return current + ".tmp." + std::to_string(getpid()); }

void writeCheckpoint(const CheckpointPaths& p, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> all(kHeader);
  memcpy(all.data(), kMagic, 8);
  memcpy(all.data() + 8, &kVersion, 4);
  const uint64_t length = payload.size();
  memcpy(all.data() + 12, &length, 8);
  all.insert(all.end(), payload.begin(), payload.end());
  const uint32_t crc = crcOf(all.data(), all.size());
  all.resize(all.size() + 4);
  memcpy(all.data() + all.size() - 4, &crc, 4);

  const std::string tmp = p.temporary();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError(why(tmp, strerror(errno)));
  size_t done = 0;
  int err = io::pwriteAll(fd, all.data(), all.size(), 0, done);
  if (!err) err = io::syncFile(fd);
  ::close(fd);
  if (err) {
    ::unlink(tmp.c_str());
    throw CheckpointError(why(tmp, io::writeFailed("the write", err)));
  }
  // The current one becomes the fallback; a crash between the renames leaves
  // `.prev` alone, which the reader takes.
  if (::rename(p.current.c_str(), p.previous.c_str()) != 0 && errno != ENOENT) {
    ::unlink(tmp.c_str());
    throw CheckpointError(why(p.current, std::string("cannot be kept as .prev: ") + strerror(errno)));
  }
  if (::rename(tmp.c_str(), p.current.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw CheckpointError(why(p.current, strerror(e)));
  }
  if (int e = io::syncDirOf(p.current))
    throw CheckpointError(why(p.current, std::string("directory fsync: ") + strerror(e)));
}

CheckpointRead readCheckpoint(const CheckpointPaths& p) {
  CheckpointRead r;
  std::string badCurrent, badPrevious;
  if (load(p.current, r.payload, badCurrent) && badCurrent.empty()) {
    r.found = true;
    r.path = p.current;
    return r;
  }
  const bool hadCurrent = !badCurrent.empty();
  if (load(p.previous, r.payload, badPrevious) && badPrevious.empty()) {
    r.found = true;
    r.path = p.previous;
    r.fellBack = hadCurrent ? badCurrent : why(p.current, "missing");
    return r;
  }
  if (!hadCurrent && badPrevious.empty()) return r;  // neither is there
  throw CheckpointError(hadCurrent && !badPrevious.empty() ? badCurrent + "; and " + badPrevious
                        : hadCurrent                       ? badCurrent + "; and no " + p.previous
                                                           : badPrevious);
}

void removeCheckpoint(const CheckpointPaths& p) {
  ::unlink(p.current.c_str());
  ::unlink(p.previous.c_str());
}

}  // namespace storage
