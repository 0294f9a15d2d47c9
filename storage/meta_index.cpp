// The `.meta` NULL index (MetaIndex) and the raw view of a `.meta` file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "artifacts.hpp"
#include "file_io.hpp"
#include "store.hpp"

namespace storage {

using namespace io;

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// ================================================================ meta index
MetaIndex::MetaIndex(std::string path, int bits, bool shadowAware, bool persistent, std::string shadowPath)
    : path_(std::move(path)),
      shadowPath_(shadowPath.empty() ? ArtifactPaths::shadowOf(path_) : std::move(shadowPath)),
      bits_(bits),
      shadowAware_(shadowAware),
      persistent_(persistent) {
  if (!persistent_) return;
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw StorageError("storage: cannot open " + path_ + ": " + strerror(errno));
  try {
    off_t sz = fileSize(fd_);
    if (sz < 8) {
      created_ = nowNs();
      truncateTo(fd_, 0);
      size_t done = 0;
      if (int err = pwriteAll(fd_, &created_, 8, 0, done)) {
        truncateTo(fd_, 0);
        throw StorageError(writeFailed(path_, err));
      }
      sz = 8;
    } else {
      preadAll(fd_, &created_, 8, 0);
    }
    const off_t E = metaEntrySize(bits_);
    off_t whole = 8 + (sz - 8) / E * E;
    if (whole != sz && ftruncate(fd_, whole) != 0)
      throw StorageError("storage: cannot repair " + path_ + ": " + strerror(errno));
    std::vector<uint8_t> buf(static_cast<size_t>(E));
    for (off_t at = 8; at < whole; at += E) {
      preadAll(fd_, buf.data(), size_t(E), at);
      Run r;
      r.gap = buf[0] != 0;
      memcpy(&r.count, &buf[1], 8);
      r.bits.assign(buf.begin() + 17, buf.end());
      uint64_t sum = total_;
      if (!r.gap && __builtin_add_overflow(total_, r.count, &sum)) {
        // Counts beyond 2^64 records are no index: cut it off there, as a partial entry.
        if (ftruncate(fd_, at) != 0) throw StorageError("storage: cannot repair " + path_ + ": " + strerror(errno));
        break;
      }
      total_ = sum;
      runs_.push_back(std::move(r));
    }
    diskEntries_ = runs_.size();
    disk_ = total_;
    if (!runs_.empty()) {
      diskLastCount_ = runs_.back().gap ? 0 : runs_.back().count;
      diskBefore_ = total_ - diskLastCount_;
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
  // The shadow index of updated records.
  const off_t E = metaEntrySize(bits_);
  std::vector<uint8_t> buf(static_cast<size_t>(E));
  int sfd = ::open(shadowPath_.c_str(), O_RDONLY | O_CLOEXEC);
  if (sfd >= 0) {
    off_t ss = fileSize(sfd);
    for (off_t at = 0; at + E <= ss; at += E) {
      preadAll(sfd, buf.data(), size_t(E), at);
      uint64_t idx;
      memcpy(&idx, &buf[1], 8);
      shadow_.push_back({idx, std::vector<uint8_t>(buf.begin() + 17, buf.end())});
    }
    ::close(sfd);
  }
}

MetaIndex::~MetaIndex() {
  if (fd_ >= 0) ::close(fd_);
}

void MetaIndex::fail(const std::string& message) {
  error_ = message;
  throw StorageError(message);
}

void MetaIndex::encode(std::vector<uint8_t>& out, const Run& r, uint64_t countField) const {
  const size_t at = out.size();
  out.resize(at + size_t(metaEntrySize(bits_)), 0);
  out[at] = r.gap ? 1 : 0;
  memcpy(&out[at + 1], &countField, 8);
  uint64_t n = uint64_t(bits_);
  memcpy(&out[at + 9], &n, 8);
  std::copy(r.bits.begin(), r.bits.end(), out.begin() + long(at) + 17);
}

void MetaIndex::flush(uint64_t durable) {
  if (!persistent_ || !error_.empty()) return;
  const uint64_t target = std::min(durable, total_);
  if (target < disk_ || (target == disk_ && (target < total_ || diskEntries_ == runs_.size()))) return;
  // Entries from the last one on disk (its run may have grown) to the one
  // holding record target-1, that one's count cut to what the data holds.
  size_t first = diskEntries_ ? diskEntries_ - 1 : 0;
  uint64_t before = diskEntries_ ? diskBefore_ : 0;
  std::vector<uint8_t>& buf = flushBuf_;  // kept: a clocked run flushes every slot
  buf.clear();
  size_t next = first;
  uint64_t lastCount = 0, lastBefore = before;
  for (size_t i = first; i < runs_.size(); ++i) {
    const Run& r = runs_[i];
    if (r.gap) {
      if (before >= target && target < total_) break;  // a gap ahead of unwritten records waits for them
      encode(buf, r, r.count);
      lastBefore = before;
      lastCount = 0;
      next = i + 1;
      continue;
    }
    if (before >= target && i > first) break;
    const uint64_t c = std::min(r.count, target - before);
    encode(buf, r, c);
    lastBefore = before;
    lastCount = c;
    next = i + 1;
    before += c;
    if (c < r.count) break;
  }
  if (buf.empty()) return;
  size_t done = 0;
  const off_t at = 8 + off_t(first) * metaEntrySize(bits_);
  if (int err = pwriteAll(fd_, buf.data(), buf.size(), at, done)) {
    // Keep whole entries only: the ones already in the file and the new
    // ones that were written completely.
    const size_t whole = std::max(diskEntries_, first + done / size_t(metaEntrySize(bits_)));
    truncateTo(fd_, 8 + off_t(whole) * metaEntrySize(bits_));
    fail(writeFailed(path_, err));
  }
  diskEntries_ = next;
  diskLastCount_ = lastCount;
  diskBefore_ = lastBefore;
  disk_ = target;
}

void MetaIndex::rewriteAll() {
  if (!persistent_) return;
  if (!error_.empty()) throw StorageError(error_);
  std::string tmp = ArtifactPaths::tmpOf(path_);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("storage: cannot write " + tmp + ": " + strerror(errno));
  std::vector<uint8_t> buf(8);
  memcpy(buf.data(), &created_, 8);
  for (auto& r : runs_) encode(buf, r, r.count);
  size_t done = 0;
  int err = pwriteAll(fd, buf.data(), buf.size(), 0, done);
  if (!err) err = syncFile(fd);
  ::close(fd);
  if (err) {
    std::remove(tmp.c_str());
    fail(writeFailed(tmp, err));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::remove(tmp.c_str());
    fail("storage: cannot replace " + path_ + ": " + strerror(errno));
  }
  ::close(fd_);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) fail("storage: cannot open " + path_ + ": " + strerror(errno));
  diskEntries_ = runs_.size();
  disk_ = total_;
  diskLastCount_ = runs_.empty() || runs_.back().gap ? 0 : runs_.back().count;
  diskBefore_ = total_ - diskLastCount_;
}

void MetaIndex::rewriteShadow() {
  if (!persistent_) return;
  const std::string sp = shadowPath_, tmp = ArtifactPaths::tmpOf(sp);
  if (shadow_.empty()) {
    std::remove(sp.c_str());
    return;
  }
  std::vector<uint8_t> buf;
  for (auto& [idx, bm] : shadow_) encode(buf, Run{false, 0, bm}, idx);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("storage: cannot write " + tmp + ": " + strerror(errno));
  size_t done = 0;
  int err = pwriteAll(fd, buf.data(), buf.size(), 0, done);
  ::close(fd);
  if (err || std::rename(tmp.c_str(), sp.c_str()) != 0) {
    std::remove(tmp.c_str());
    fail(writeFailed(sp, err ? err : errno));
  }
}

void MetaIndex::append(const std::vector<uint8_t>& bitmap) {
  ++total_;
  if (!runs_.empty() && !runs_.back().gap && runs_.back().bits == bitmap) {
    ++runs_.back().count;
    return;
  }
  runs_.push_back(Run{false, 1, bitmap});
}

void MetaIndex::appendPresent(uint64_t count) {
  if (count == 0) return;
  total_ += count;
  if (!runs_.empty() && !runs_.back().gap &&
      std::all_of(runs_.back().bits.begin(), runs_.back().bits.end(), [](uint8_t b) { return b == 0; })) {
    runs_.back().count += count;
    return;
  }
  runs_.push_back(Run{false, count, std::vector<uint8_t>(size_t(bytes()), 0)});
}

void MetaIndex::align(uint64_t dataRecords) {
  if (total_ == dataRecords) return;
  if (total_ > dataRecords) {
    // Cut back to the records the data holds.
    std::vector<Run> out;
    uint64_t at = 0;
    for (auto& r : runs_) {
      if (at >= dataRecords) break;
      if (r.gap) {
        out.push_back(r);
        continue;
      }
      Run k = r;
      k.count = std::min(r.count, dataRecords - at);
      at += k.count;
      out.push_back(std::move(k));
    }
    runs_ = std::move(out);
    const size_t kept = shadow_.size();
    shadow_.erase(std::remove_if(shadow_.begin(), shadow_.end(), [&](auto& e) { return e.first >= dataRecords; }),
                  shadow_.end());
    if (shadow_.size() != kept) rewriteShadow();
  } else {
    // Records the index never saw read as non-NULL.
    const std::vector<uint8_t> clear(size_t(bytes()), 0);
    if (!runs_.empty() && !runs_.back().gap && runs_.back().bits == clear) runs_.back().count += dataRecords - total_;
    else runs_.push_back(Run{false, dataRecords - total_, clear});
  }
  total_ = dataRecords;
  rewriteAll();
}

uint64_t MetaIndex::records() const { return total_; }

void MetaIndex::rotate(int n, bool synced) {
  if (!persistent_) return;
  rotateStorageFile(shadowPath_, ArtifactPaths::rotatedOf(shadowPath_, n), !synced);
  if (fd_ >= 0) {
    if (!synced)
      if (int e = syncFile(fd_); e && e != EINVAL)
        reportError("rotation: fsync failed on " + path_ + ": " + strerror(e));
    ::close(fd_);
    fd_ = -1;
  }
  rotateStorageFile(path_, ArtifactPaths::rotatedOf(path_, n), !synced);
  persistent_ = false;
}

bool MetaIndex::onFileSystem(const FileSystemSync& fs) const { return fd_ < 0 || fs.holds(fd_); }

std::vector<uint8_t> MetaIndex::bitmapAt(uint64_t i) const {
  for (auto it = shadow_.rbegin(); it != shadow_.rend(); ++it)
    if (it->first == i) return it->second;
  uint64_t at = 0;
  for (auto& r : runs_) {
    if (r.gap) continue;
    if (i < at + r.count) return r.bits;
    at += r.count;
  }
  return std::vector<uint8_t>(size_t(bytes()), 0);
}

void MetaIndex::update(uint64_t i, const std::vector<uint8_t>& bitmap) {
  if (i >= records()) throw StorageError("storage: index update past the end of " + path_);
  // Shadow profiles log every update of an existing record, even one that
  // keeps the NULL pattern (the `.meta.shadow` file then exists).
  if (!shadowAware_ && bitmapAt(i) == bitmap) return;
  if (shadowAware_) {
    shadow_.push_back({i, bitmap});
    if (persistent_) {
      int sfd = ::open(shadowPath_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (sfd < 0) throw StorageError("storage: cannot write " + shadowPath_ + ": " + strerror(errno));
      std::vector<uint8_t> buf;
      encode(buf, Run{false, 0, bitmap}, i);
      try {
        appendWhole(sfd, buf.data(), buf.size(), shadowPath_);
      } catch (...) {
        ::close(sfd);
        throw;
      }
      ::close(sfd);
    }
    return;
  }
  // Split the run holding record i into before / the record / after.
  std::vector<Run> out;
  uint64_t at = 0;
  for (auto& r : runs_) {
    if (r.gap || i < at || i >= at + r.count) {
      if (!r.gap) at += r.count;
      out.push_back(r);
      continue;
    }
    uint64_t before = i - at, after = at + r.count - i - 1;
    if (before) out.push_back(Run{false, before, r.bits});
    out.push_back(Run{false, 1, bitmap});
    if (after) out.push_back(Run{false, after, r.bits});
    at += r.count;
  }
  runs_ = std::move(out);
  rewriteAll();
}

void MetaIndex::reset() {
  runs_.clear();
  total_ = 0;
  shadow_.clear();
  std::remove(shadowPath_.c_str());
  rewriteAll();
}

// ================================================================ raw view
MetaFileView readMetaFile(const std::string& path, int bits) {
  MetaFileView v;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return v;
  v.exists = true;
  v.size = uint64_t(fileSize(fd));
  if (v.size >= 8) preadAll(fd, &v.created, 8, 0);
  const uint64_t E = uint64_t(metaEntrySize(bits));
  std::vector<uint8_t> buf(E);
  uint64_t at = 8;
  for (; v.size >= 8 && at + E <= v.size; at += E) {
    if (!preadAll(fd, buf.data(), E, off_t(at))) break;
    MetaFileEntry e;
    e.gap = buf[0] != 0;
    memcpy(&e.count, &buf[1], 8);
    memcpy(&e.bitCount, &buf[9], 8);
    e.bitmap.assign(buf.begin() + 17, buf.end());
    v.entries.push_back(std::move(e));
  }
  if (v.size > at) v.trailing = v.size - at;
  ::close(fd);
  return v;
}

}  // namespace storage
