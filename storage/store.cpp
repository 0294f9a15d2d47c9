#include "store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>

namespace storage {

namespace {

// Writes n bytes at offset off, retrying short writes and up to 5 EINTRs.
// Returns 0, or the errno of the write that failed; `done` is what was written.
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

// Cuts a file back after a failed write (shrinking needs no space).
void truncateTo(int fd, off_t size) {
  while (ftruncate(fd, size) != 0 && errno == EINTR) {
  }
}

// Appends whole units (records, entries) at the end of fd; a failed write is
// cut back to the size before it, so the file keeps whole units only.
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

// ------------------------------------------------------------ one file
// POSIX (in-place updates), POSIXSHD (updates to `.shadow`), GENERIC (same
// bytes as POSIX; the reference reopened per operation, which is not observable).
class FileStore : public Store {
 public:
  FileStore(std::string path, int rec, bool shadow) : path_(std::move(path)), rec_(rec), shadow_(shadow) {
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
      sfd_ = ::open((path_ + ".shadow").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (sfd_ < 0) {
        ::close(fd_);
        throw StorageError("storage: cannot open " + path_ + ".shadow: " + strerror(errno));
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
      const off_t entry = 8 + rec_;
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
      std::vector<uint8_t> entry(8 + size_t(rec_));
      uint64_t pos = i * uint64_t(rec_);
      memcpy(entry.data(), &pos, 8);
      memcpy(entry.data() + 8, r, size_t(rec_));
      appendWhole(sfd_, entry.data(), entry.size(), path_ + ".shadow");
    } else {
      size_t done = 0;
      if (int err = pwriteAll(fd_, r, size_t(rec_), off_t(i) * rec_, done)) throw StorageError(writeFailed(path_, err));
    }
  }
  void purge() override {
    wbuf_.clear();
    flushed_ = 0;
    if (ftruncate(fd_, 0) != 0) throw StorageError("storage: cannot purge " + path_);
    if (shadow_ && ftruncate(sfd_, 0) != 0) throw StorageError("storage: cannot purge " + path_ + ".shadow");
    count_ = 0;
  }
  void close(int rotation) override {
    std::string err;
    if (fd_ >= 0) {
      try {
        flush();
      } catch (const StorageError& e) {
        err = e.what();
      }
      if (fsync(fd_) != 0 && err.empty() && error_.empty() && errno != EINVAL)
        err = "storage: fsync failed on " + path_ + ": " + strerror(errno);
      ::close(fd_);
      fd_ = -1;
      if (rotation >= 0) std::rename(path_.c_str(), (path_ + ".old" + std::to_string(rotation)).c_str());
    }
    if (sfd_ >= 0) {
      fsync(sfd_);
      ::close(sfd_);
      sfd_ = -1;
    }
    if (!err.empty()) throw StorageError(err);
  }
  bool shadowed() const override { return shadow_; }
  std::vector<std::string> files() const override { return {path_}; }

 private:
  std::string path_;
  int rec_;
  bool shadow_;
  int fd_ = -1, sfd_ = -1;
  uint64_t count_ = 0, flushed_ = 0;
  static constexpr size_t kBuffer = 64 * 1024;
  std::vector<uint8_t> wbuf_;
  std::string error_;  // the failed write, reported once
};

// ------------------------------------------------------------ retention
// RETENTION c s: segments F_segment_<k> of at most c records, at most s kept.
class SegmentedStore : public Store {
 public:
  SegmentedStore(std::string path, int rec, bool shadow, int cap, int segs)
      : path_(std::move(path)), rec_(rec), shadow_(shadow), cap_(uint64_t(std::max(cap, 1))), segs_(segs) {
    namespace fs = std::filesystem;
    fs::path p(path_);
    fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::string prefix = p.filename().string() + "_segment_";
    std::vector<uint64_t> found;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir, ec)) {
      std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) != 0) continue;
      std::string rest = n.substr(prefix.size());
      if (rest.empty() || rest.find_first_not_of("0123456789") != std::string::npos) continue;
      found.push_back(std::stoull(rest));
    }
    std::sort(found.begin(), found.end());
    // Keep the contiguous run of indexes ending at the highest one.
    size_t start = found.size();
    while (start > 0 && (start == found.size() || found[start - 1] + 1 == found[start])) --start;
    if (found.empty()) found.push_back(0), start = 0;
    for (size_t i = start; i < found.size(); ++i) open(found[i]);
    while (segs_ > 0 && segments_.size() > size_t(segs_)) dropOldest();
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
    if (seg < first_ || seg >= first_ + segments_.size()) throw StorageError("storage: update outside the kept segments");
    segments_[seg - first_]->update(i % cap_, r);
  }
  void purge() override {
    for (auto& s : segments_) {
      for (auto& f : s->files()) {
        s->close(-1);
        std::remove(f.c_str());
        std::remove((f + ".shadow").c_str());
      }
    }
    segments_.clear();
    first_ = 0;
    open(0);
  }
  void close(int rotation) override {
    std::string err;
    for (auto& s : segments_) {
      try {
        s->close(rotation);
      } catch (const StorageError& e) {
        if (err.empty()) err = e.what();
      }
    }
    if (!err.empty()) throw StorageError(err);
  }
  bool shadowed() const override { return shadow_; }
  std::vector<std::string> files() const override {
    std::vector<std::string> out;
    for (auto& s : segments_)
      for (auto& f : s->files()) out.push_back(f);
    return out;
  }

 private:
  std::string segName(uint64_t k) const { return path_ + "_segment_" + std::to_string(k); }
  void open(uint64_t k) {
    if (segments_.empty()) first_ = k;
    segments_.push_back(std::make_unique<FileStore>(segName(k), rec_, shadow_));
  }
  void dropOldest() {
    auto files = segments_.front()->files();
    segments_.front()->close(-1);
    for (auto& f : files) {
      std::remove(f.c_str());
      std::remove((f + ".shadow").c_str());
    }
    segments_.pop_front();
    ++first_;
  }

  std::string path_;
  int rec_;
  bool shadow_;
  uint64_t cap_;
  int segs_;
  uint64_t first_ = 0;
  std::deque<std::unique_ptr<FileStore>> segments_;
};

// ------------------------------------------------------------ memory
class MemoryStore : public Store {
 public:
  MemoryStore(std::string path, int rec, int ring) : path_(std::move(path)), rec_(rec), ring_(uint64_t(std::max(ring, 0))) {}
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
  void close(int) override {}
  std::vector<std::string> files() const override { return {}; }

 private:
  std::string path_;
  int rec_;
  uint64_t ring_;
  uint64_t count_ = 0;
  std::vector<uint8_t> data_;
};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool isWritableProfile(const std::string& p) {
  return p == "DEFAULT" || p == "DIRECT" || p == "POSIX" || p == "POSIXSHD" || p == "GENERIC" || p == "MEMORY";
}

std::unique_ptr<Store> openStore(const std::string& profile, const std::string& path, int recordSize,
                                 std::pair<int, int> retention, int ring) {
  if (recordSize <= 0) throw StorageError("storage: empty descriptor for " + path);
  const bool segmented = retention.first != 0 || retention.second != 0;
  if (profile == "DEFAULT") {
    if (segmented) return std::make_unique<SegmentedStore>(path, recordSize, true, retention.first, retention.second);
    return std::make_unique<FileStore>(path, recordSize, true);
  }
  if (profile == "DIRECT") {
    if (segmented) return std::make_unique<SegmentedStore>(path, recordSize, false, retention.first, retention.second);
    return std::make_unique<FileStore>(path, recordSize, false);
  }
  if (profile == "POSIX" || profile == "GENERIC") return std::make_unique<FileStore>(path, recordSize, false);
  if (profile == "POSIXSHD") return std::make_unique<FileStore>(path, recordSize, true);
  if (profile == "MEMORY") return std::make_unique<MemoryStore>(path, recordSize, ring);
  throw StorageError("storage: unsupported storage type '" + profile + "'");
}

// ================================================================ meta index
MetaIndex::MetaIndex(std::string path, int bits, bool shadowAware, bool persistent)
    : path_(std::move(path)), bits_(bits), shadowAware_(shadowAware), persistent_(persistent) {
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
    const off_t E = entrySize();
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
  const off_t E = entrySize();
  std::vector<uint8_t> buf(static_cast<size_t>(E));
  int sfd = ::open((path_ + ".shadow").c_str(), O_RDONLY | O_CLOEXEC);
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
  out.resize(at + size_t(entrySize()), 0);
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
  const off_t at = 8 + off_t(first) * entrySize();
  if (int err = pwriteAll(fd_, buf.data(), buf.size(), at, done)) {
    // Keep whole entries only: the ones already in the file and the new
    // ones that were written completely.
    const size_t whole = std::max(diskEntries_, first + done / size_t(entrySize()));
    truncateTo(fd_, 8 + off_t(whole) * entrySize());
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
  std::string tmp = path_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("storage: cannot write " + tmp + ": " + strerror(errno));
  std::vector<uint8_t> buf(8);
  memcpy(buf.data(), &created_, 8);
  for (auto& r : runs_) encode(buf, r, r.count);
  size_t done = 0;
  int err = pwriteAll(fd, buf.data(), buf.size(), 0, done);
  if (!err && fsync(fd) != 0) err = errno;
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
  const std::string sp = path_ + ".shadow", tmp = sp + ".tmp";
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
    if (!runs_.empty() && !runs_.back().gap && runs_.back().bits == clear)
      runs_.back().count += dataRecords - total_;
    else
      runs_.push_back(Run{false, dataRecords - total_, clear});
  }
  total_ = dataRecords;
  rewriteAll();
}

uint64_t MetaIndex::records() const { return total_; }

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
      int sfd = ::open((path_ + ".shadow").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (sfd < 0) throw StorageError("storage: cannot write " + path_ + ".shadow: " + strerror(errno));
      std::vector<uint8_t> buf;
      encode(buf, Run{false, 0, bitmap}, i);
      try {
        appendWhole(sfd, buf.data(), buf.size(), path_ + ".shadow");
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
  std::remove((path_ + ".shadow").c_str());
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
