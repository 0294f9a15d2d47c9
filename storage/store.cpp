// The record stores of the storage profiles: one file, RETENTION segments, memory.
#include "store.hpp"

#include "ir/profiles.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>

#include "artifacts.hpp"
#include "file_io.hpp"

namespace storage {

namespace {

using namespace io;

// ------------------------------------------------------------ one file
// POSIX (in-place updates), POSIXSHD (updates to `.shadow`), GENERIC (same
// bytes as POSIX; the reference reopened per operation, which is not observable).
class FileStore : public Store {
 public:
  FileStore(std::string path, int rec, bool shadow, const ShadowFile& log = {})
      : path_(std::move(path)),
        shadowPath_(log.path.empty() ? ArtifactPaths::shadowOf(path_) : log.path),
        rec_(rec),
        shadow_(shadow) {
    fd_ = openRW(path_);
    off_t sz = fileSize(fd_);
    if (sz % rec_ != 0) {
      // A writer killed in the middle of a record: keep whole records only.
      if (ftruncate(fd_, sz - sz % rec_) != 0) {
        ::close(fd_);
        throw StorageError("storage: cannot repair " + path_ + ": " + strerror(errno));
      }
      sz -= sz % rec_;
    }
    count_ = flushed_ = uint64_t(sz / rec_);
    wbuf_.reserve(kBuffer + size_t(rec_));
    if (shadow_) {
      sfd_ = ::open(shadowPath_.c_str(), O_RDWR | O_CREAT | (log.keep ? 0 : O_TRUNC) | O_CLOEXEC, 0644);
      if (sfd_ < 0) {
        ::close(fd_);
        throw StorageError("storage: cannot open " + shadowPath_ + ": " + strerror(errno));
      }
    }
  }
  ~FileStore() override {
    try {
      close(-1);
    } catch (const std::exception& e) {
      fprintf(stderr, "FATAL: %s\n", e.what());
    }
  }
  uint64_t count() const override { return count_; }
  uint64_t durable() const override { return flushed_; }
  void append(const uint8_t* r) override {
    if (!error_.empty()) throw StorageError(error_);
    // Buffered in whole records: a killed writer still leaves whole records.
    wbuf_.insert(wbuf_.end(), r, r + rec_);
    ++count_;
    if (wbuf_.size() >= kBuffer) flush();
  }
  void appendMany(const uint8_t* r, size_t n, size_t recordSize) override {
    if (!error_.empty()) throw StorageError(error_);
    wbuf_.insert(wbuf_.end(), r, r + n * recordSize);
    count_ += n;
    if (wbuf_.size() >= kBuffer) flush();
  }
  void flush() override {
    if (wbuf_.empty() || fd_ < 0 || !error_.empty()) return;
    size_t done = 0;
    if (int err = pwriteAll(fd_, wbuf_.data(), wbuf_.size(), off_t(flushed_) * rec_, done)) {
      // Disk full or file too large: keep the whole records that made it and
      // cut off a partial one; the rest of the buffer is lost.
      const uint64_t whole = done / uint64_t(rec_);
      flushed_ += whole;
      if (done % size_t(rec_) != 0) truncateTo(fd_, off_t(flushed_) * rec_);
      count_ = flushed_;
      wbuf_.clear();
      error_ = writeFailed(path_, err) + " (" + std::to_string(flushed_) + " whole records kept)";
      throw StorageError(error_);
    }
    flushed_ = count_;
    wbuf_.clear();
    startWriteback();
  }
  bool read(uint64_t i, uint8_t* r) override {
    if (i >= count_) return false;
    if (i >= flushed_) {
      memcpy(r, wbuf_.data() + (i - flushed_) * uint64_t(rec_), size_t(rec_));
      return true;
    }
    if (shadow_) {
      // The last shadow entry for this position wins.
      off_t ss = fileSize(sfd_);
      const off_t entry = shadowEntrySize(rec_);
      uint64_t want = i * uint64_t(rec_);
      for (off_t at = (ss / entry - 1) * entry; at >= 0; at -= entry) {
        uint64_t pos;
        if (!preadAll(sfd_, &pos, 8, at)) break;
        if (pos == want) return preadAll(sfd_, r, size_t(rec_), at + 8);
      }
    }
    return preadAll(fd_, r, size_t(rec_), off_t(i) * rec_);
  }
  void update(uint64_t i, const uint8_t* r) override {
    if (i >= count_) throw StorageError("storage: update past the end of " + path_);
    flush();
    if (shadow_) {
      std::vector<uint8_t> entry(size_t(shadowEntrySize(rec_)));
      uint64_t pos = i * uint64_t(rec_);
      memcpy(entry.data(), &pos, 8);
      memcpy(entry.data() + 8, r, size_t(rec_));
      appendWhole(sfd_, entry.data(), entry.size(), shadowPath_);
    } else {
      size_t done = 0;
      if (int err = pwriteAll(fd_, r, size_t(rec_), off_t(i) * rec_, done)) throw StorageError(writeFailed(path_, err));
    }
  }
  void purge() override {
    wbuf_.clear();
    flushed_ = 0;
    if (ftruncate(fd_, 0) != 0) throw StorageError("storage: cannot purge " + path_);
    if (shadow_ && ftruncate(sfd_, 0) != 0) throw StorageError("storage: cannot purge " + shadowPath_);
    count_ = 0;
  }
  void close(int rotation, bool synced = false) override {
    std::string err;
    if (fd_ >= 0) {
      try {
        flush();
      } catch (const StorageError& e) {
        err = e.what();
      }
      if (!synced)
        if (int e = syncFile(fd_); e && err.empty() && error_.empty() && e != EINVAL)
          err = "storage: fsync failed on " + path_ + ": " + strerror(e);
      ::close(fd_);
      fd_ = -1;
      if (rotation >= 0) rotateStorageFile(path_, ArtifactPaths::rotatedOf(path_, rotation), !synced);
    }
    if (sfd_ >= 0) {
      if (!synced) syncFile(sfd_);
      ::close(sfd_);
      sfd_ = -1;
      if (rotation >= 0) rotateStorageFile(shadowPath_, ArtifactPaths::rotatedOf(shadowPath_, rotation), !synced);
    }
    if (!err.empty()) throw StorageError(err);
  }
  bool onFileSystem(const FileSystemSync& fs) const override {
    return (fd_ < 0 || fs.holds(fd_)) && (sfd_ < 0 || fs.holds(sfd_));
  }
  bool shadowed() const override { return shadow_; }
  std::vector<std::string> files() const override { return {path_}; }
  void cutBack(uint64_t n) override {
    flush();
    if (n > count_)
      throw StorageError("storage: " + path_ + " holds " + std::to_string(count_) + " records, the checkpoint " +
                         std::to_string(n));
    if (n < count_ && ftruncate(fd_, off_t(n) * rec_) != 0)
      throw StorageError("storage: cannot cut " + path_ + " back to " + std::to_string(n) +
                         " records: " + strerror(errno));
    count_ = flushed_ = n;
    handedOver_ = std::min<off_t>(handedOver_, off_t(n) * rec_);
  }

 private:
  std::string path_, shadowPath_;
  int rec_;
  bool shadow_;
  int fd_ = -1, sfd_ = -1;
  uint64_t count_ = 0, flushed_ = 0;
  static constexpr size_t kBuffer = 64 * 1024;
  // Written bytes are handed to the disk every kWriteback while the run goes
  // on, so the sync at close waits for the last stretch only, not for the
  // whole file (advisory: the close's fsync or syncfs reports any error).
  static constexpr off_t kWriteback = off_t(8) << 20;
  off_t handedOver_ = 0;
  void startWriteback() {
    const off_t end = off_t(flushed_) * rec_;
    if (end < handedOver_) handedOver_ = 0;  // purged
    if (end - handedOver_ < kWriteback) return;
    sync_file_range(fd_, handedOver_, end - handedOver_, SYNC_FILE_RANGE_WRITE);
    handedOver_ = end;
  }
  std::vector<uint8_t> wbuf_;
  std::string error_;  // the failed write, reported once
};

// ------------------------------------------------------------ retention
// RETENTION c s: segments F_segment_<k> of at most c records, at most s kept.
class SegmentedStore : public Store {
 public:
  SegmentedStore(std::string path, int rec, bool shadow, int cap, int segs, bool resuming)
      : paths_(std::move(path)), rec_(rec), shadow_(shadow), cap_(uint64_t(std::max(cap, 1))), segs_(segs) {
    std::vector<uint64_t> found;
    for (auto& f : paths_.segments()) found.push_back(f.index);
    // Keep the contiguous run of indexes ending at the highest one.
    size_t start = found.size();
    while (start > 0 && (start == found.size() || found[start - 1] + 1 == found[start])) --start;
    if (found.empty()) found.push_back(0), start = 0;
    for (size_t i = start; i < found.size(); ++i) open(found[i]);
    if (!resuming) trim();
  }
  ~SegmentedStore() override {
    try {
      close(-1);
    } catch (const std::exception& e) {
      fprintf(stderr, "FATAL: %s\n", e.what());
    }
  }
  uint64_t count() const override {
    uint64_t c = first_ * cap_;
    for (auto& s : segments_) c += s->count();
    return c;
  }
  // Only the newest segment buffers records (a full one is flushed first).
  uint64_t durable() const override {
    return segments_.empty() ? count() : count() - (segments_.back()->count() - segments_.back()->durable());
  }
  void flush() override {
    if (!segments_.empty()) segments_.back()->flush();
  }
  void append(const uint8_t* r) override {
    if (segments_.back()->count() >= cap_) {
      segments_.back()->flush();
      open(first_ + segments_.size());
      if (segs_ > 0 && segments_.size() > size_t(segs_)) dropOldest();
    }
    segments_.back()->append(r);
  }
  bool read(uint64_t i, uint8_t* r) override {
    uint64_t seg = i / cap_;
    if (seg < first_ || seg >= first_ + segments_.size()) return false;
    return segments_[seg - first_]->read(i % cap_, r);
  }
  void update(uint64_t i, const uint8_t* r) override {
    uint64_t seg = i / cap_;
    if (seg < first_ || seg >= first_ + segments_.size())
      throw StorageError("storage: update outside the kept segments");
    segments_[seg - first_]->update(i % cap_, r);
  }
  void purge() override {
    for (auto& s : segments_) {
      for (auto& f : s->files()) {
        s->close(-1);
        removeWithShadow(f);
      }
    }
    segments_.clear();
    first_ = 0;
    open(0);
  }
  void close(int rotation, bool synced = false) override {
    releaseDrops(held_.size());
    std::string err;
    for (auto& s : segments_) {
      try {
        s->close(rotation, synced);
      } catch (const StorageError& e) {
        if (err.empty()) err = e.what();
      }
    }
    if (!err.empty()) throw StorageError(err);
  }
  bool onFileSystem(const FileSystemSync& fs) const override {
    return std::all_of(segments_.begin(), segments_.end(), [&](auto& s) { return s->onFileSystem(fs); });
  }
  bool shadowed() const override { return shadow_; }
  std::vector<std::string> files() const override {
    std::vector<std::string> out;
    for (auto& s : segments_)
      for (auto& f : s->files()) out.push_back(f);
    return out;
  }
  // Segments after the one holding record n-1 go; that one is cut back.
  void cutBack(uint64_t n) override {
    flush();
    if (n > count())
      throw StorageError("storage: " + paths_.data() + " holds " + std::to_string(count()) +
                         " records, the checkpoint " + std::to_string(n));
    const uint64_t last = n == 0 ? 0 : (n - 1) / cap_;
    if (last < first_)
      throw StorageError("storage: " + paths_.data() + ": RETENTION dropped the segment of record " +
                         std::to_string(n - 1) + " after the checkpoint");
    while (first_ + segments_.size() - 1 > last) {
      auto files = segments_.back()->files();
      segments_.back()->close(-1);
      for (auto& f : files) removeWithShadow(f);
      segments_.pop_back();
    }
    segments_.back()->cutBack(n - last * cap_);
    trim();  // the segments the checkpoint's run had dropped (kept while it was not durable)
  }
  void holdDrops(bool on) override {
    hold_ = on;
    if (!on) releaseDrops(held_.size());
  }
  size_t dropsHeld() const override { return held_.size(); }
  void releaseDrops(size_t n) override {
    for (; n > 0 && !held_.empty(); --n) {
      for (auto& f : held_.front()) removeWithShadow(f);
      held_.pop_front();
    }
  }

 private:
  static void removeWithShadow(const std::string& f) {
    std::remove(f.c_str());
    std::remove(ArtifactPaths::shadowOf(f).c_str());
  }
  void open(uint64_t k) {
    if (segments_.empty()) first_ = k;
    segments_.push_back(std::make_unique<FileStore>(paths_.segment(k), rec_, shadow_));
  }
  void dropOldest() {
    auto files = segments_.front()->files();
    segments_.front()->close(-1);
    if (hold_) held_.push_back(files);
    else
      for (auto& f : files) removeWithShadow(f);
    segments_.pop_front();
    ++first_;
  }
  void trim() {
    while (segs_ > 0 && segments_.size() > size_t(segs_)) dropOldest();
  }

  ArtifactPaths paths_;
  int rec_;
  bool shadow_;
  uint64_t cap_;
  int segs_;
  uint64_t first_ = 0;
  std::deque<std::unique_ptr<FileStore>> segments_;
  bool hold_ = false;
  std::deque<std::vector<std::string>> held_;  // dropped segments' files, oldest first
};

// ------------------------------------------------------------ memory
class MemoryStore : public Store {
 public:
  MemoryStore(std::string path, int rec, int ring)
      : path_(std::move(path)), rec_(rec), ring_(uint64_t(std::max(ring, 0))) {}
  uint64_t count() const override { return count_; }
  void append(const uint8_t* r) override {
    if (ring_ == 0) {
      data_.insert(data_.end(), r, r + rec_);
    } else {
      // The ring grows with its records (RETMEMORY may be far more than a run fills).
      const uint64_t at = (count_ % ring_) * uint64_t(rec_);
      if (data_.size() < at + uint64_t(rec_)) data_.resize(at + uint64_t(rec_));
      memcpy(&data_[at], r, size_t(rec_));
    }
    ++count_;
  }
  bool read(uint64_t i, uint8_t* r) override {
    if (i >= count_ || (ring_ && i + ring_ < count_)) return false;
    uint64_t slot = ring_ ? i % ring_ : i;
    memcpy(r, &data_[slot * uint64_t(rec_)], size_t(rec_));
    return true;
  }
  void update(uint64_t i, const uint8_t* r) override {
    if (i >= count_) throw StorageError("storage: update past the end of " + path_);
    uint64_t slot = ring_ ? i % ring_ : i;
    memcpy(&data_[slot * uint64_t(rec_)], r, size_t(rec_));
  }
  void purge() override {
    data_.clear();
    count_ = 0;
  }
  void close(int, bool = false) override {}
  std::vector<std::string> files() const override { return {}; }
  bool inMemory() const override { return true; }
  void cutBack(uint64_t n) override {
    if (n > count_) throw StorageError("storage: memory store " + path_ + " holds fewer records than the checkpoint");
    count_ = n;
  }
  // The records it still holds (a ring's last ones, else all), oldest first.
  void save(ByteWriter& w) const override {
    const uint64_t first = ring_ && count_ > ring_ ? count_ - ring_ : 0;
    w.u64(first);
    w.u64(count_ - first);
    for (uint64_t i = first; i < count_; ++i) {
      const uint64_t slot = ring_ ? i % ring_ : i;
      w.raw(&data_[slot * uint64_t(rec_)], size_t(rec_));
    }
  }
  void restore(ByteReader& r) override {
    data_.clear();
    count_ = r.u64();  // `first` (0 unless a ring: an unbounded store holds them all)
    const uint64_t held = r.u64();
    // As save() wrote them: else count_ would name records data_ does not hold (read() past its end).
    if (ring_ ? held > ring_ || (count_ > 0 && held != ring_) : count_ != 0) r.fail();
    std::vector<uint8_t> rec(static_cast<size_t>(rec_));
    for (uint64_t i = 0; i < held; ++i) {
      r.raw(rec.data(), rec.size());
      append(rec.data());
    }
  }

 private:
  std::string path_;
  int rec_;
  uint64_t ring_;
  uint64_t count_ = 0;
  std::vector<uint8_t> data_;
};

}  // namespace

bool isWritableProfile(const std::string& p) { return ir::findProfile(p) != nullptr; }

std::unique_ptr<Store> openStore(const std::string& profile, const std::string& path, int recordSize,
                                 std::pair<int, int> retention, int ring, const ShadowFile& shadow, bool resuming) {
  if (recordSize <= 0) throw StorageError("storage: empty descriptor for " + path);
  const ir::StorageProfile* p = ir::findProfile(profile);
  if (!p) throw StorageError("storage: unsupported storage type '" + profile + "'");
  const bool segmented = retention.first != 0 || retention.second != 0;
  switch (p->store) {
    case ir::StoreKind::SEGMENTABLE:
      if (segmented)
        return std::make_unique<SegmentedStore>(path, recordSize, p->shadow, retention.first, retention.second,
                                                resuming);
      return std::make_unique<FileStore>(path, recordSize, p->shadow, shadow);
    case ir::StoreKind::FILE: return std::make_unique<FileStore>(path, recordSize, p->shadow, shadow);
    case ir::StoreKind::MEMORY: return std::make_unique<MemoryStore>(path, recordSize, ring);
  }
  throw StorageError("storage: unsupported storage type '" + profile + "'");
}

}  // namespace storage
