#include "store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>

namespace storage {

namespace {

void writeAll(int fd, const void* buf, size_t n, const std::string& what) {
  const char* p = static_cast<const char*>(buf);
  int eintr = 0;
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR && ++eintr <= 5) continue;
      throw StorageError("storage: write failed on " + what + ": " + strerror(errno));
    }
    p += w;
    n -= size_t(w);
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
      if (ftruncate(fd_, sz - sz % rec_) != 0) throw StorageError("storage: cannot repair " + path_);
      sz -= sz % rec_;
    }
    count_ = flushed_ = uint64_t(sz / rec_);
    wbuf_.reserve(kBuffer + size_t(rec_));
    if (shadow_) {
      sfd_ = ::open((path_ + ".shadow").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (sfd_ < 0) throw StorageError("storage: cannot open " + path_ + ".shadow");
    }
  }
  ~FileStore() override { close(-1); }
  uint64_t count() const override { return count_; }
  void append(const uint8_t* r) override {
    // Buffered in whole records: a killed writer still leaves whole records.
    wbuf_.insert(wbuf_.end(), r, r + rec_);
    ++count_;
    if (wbuf_.size() >= kBuffer) flush();
  }
  void flush() override {
    if (wbuf_.empty() || fd_ < 0) return;
    if (::lseek(fd_, off_t(flushed_) * rec_, SEEK_SET) < 0) throw StorageError("storage: seek failed on " + path_);
    writeAll(fd_, wbuf_.data(), wbuf_.size(), path_);
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
      uint64_t pos = i * uint64_t(rec_);
      ::lseek(sfd_, 0, SEEK_END);
      writeAll(sfd_, &pos, 8, path_ + ".shadow");
      writeAll(sfd_, r, size_t(rec_), path_ + ".shadow");
    } else {
      if (::pwrite(fd_, r, size_t(rec_), off_t(i) * rec_) != rec_) throw StorageError("storage: write failed on " + path_);
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
    if (fd_ >= 0) {
      flush();
      fsync(fd_);
      ::close(fd_);
      fd_ = -1;
      if (rotation >= 0) std::rename(path_.c_str(), (path_ + ".old" + std::to_string(rotation)).c_str());
    }
    if (sfd_ >= 0) {
      fsync(sfd_);
      ::close(sfd_);
      sfd_ = -1;
    }
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
  ~SegmentedStore() override { close(-1); }
  uint64_t count() const override {
    uint64_t c = first_ * cap_;
    for (auto& s : segments_) c += s->count();
    return c;
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
    for (auto& s : segments_) s->close(rotation);
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
      if (data_.size() < ring_ * uint64_t(rec_)) data_.resize(ring_ * uint64_t(rec_));
      memcpy(&data_[(count_ % ring_) * uint64_t(rec_)], r, size_t(rec_));
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
  off_t sz = fileSize(fd_);
  if (sz < 8) {
    created_ = nowNs();
    if (ftruncate(fd_, 0) != 0) throw StorageError("storage: cannot reset " + path_);
    if (::pwrite(fd_, &created_, 8, 0) != 8) throw StorageError("storage: cannot write " + path_);
    sz = 8;
  } else {
    preadAll(fd_, &created_, 8, 0);
  }
  const off_t E = entrySize();
  off_t whole = 8 + (sz - 8) / E * E;
  if (whole != sz && ftruncate(fd_, whole) != 0) throw StorageError("storage: cannot repair " + path_);
  std::vector<uint8_t> buf(static_cast<size_t>(E));
  for (off_t at = 8; at < whole; at += E) {
    preadAll(fd_, buf.data(), size_t(E), at);
    Run r;
    r.gap = buf[0] != 0;
    memcpy(&r.count, &buf[1], 8);
    r.bits.assign(buf.begin() + 17, buf.end());
    runs_.push_back(std::move(r));
  }
  lastOnDisk_ = !runs_.empty();
  // The shadow index of updated records.
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
  try {
    flush();
  } catch (...) {
  }
  if (fd_ >= 0) ::close(fd_);
}

void MetaIndex::writeEntry(int fd, const Run& r, uint64_t countField) const {
  std::vector<uint8_t> buf(size_t(entrySize()), 0);
  buf[0] = r.gap ? 1 : 0;
  memcpy(&buf[1], &countField, 8);
  uint64_t n = uint64_t(bits_);
  memcpy(&buf[9], &n, 8);
  std::copy(r.bits.begin(), r.bits.end(), buf.begin() + 17);
  writeAll(fd, buf.data(), buf.size(), path_);
}

void MetaIndex::flushLast() {
  if (!persistent_ || runs_.empty()) return;
  off_t at = 8 + off_t(runs_.size() - 1) * entrySize();
  ::lseek(fd_, at, SEEK_SET);
  writeEntry(fd_, runs_.back(), runs_.back().count);
  lastOnDisk_ = true;
}

void MetaIndex::rewriteAll() {
  if (!persistent_) return;
  std::string tmp = path_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw StorageError("storage: cannot write " + tmp);
  writeAll(fd, &created_, 8, tmp);
  for (auto& r : runs_) writeEntry(fd, r, r.count);
  ::close(fd);
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) throw StorageError("storage: cannot replace " + path_);
  ::close(fd_);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  lastOnDisk_ = !runs_.empty();
  dirty_ = false;
}

void MetaIndex::append(const std::vector<uint8_t>& bitmap) {
  if (!runs_.empty() && !runs_.back().gap && runs_.back().bits == bitmap) {
    ++runs_.back().count;
    dirty_ = true;
    return;
  }
  flush();  // the finished run's final count
  runs_.push_back(Run{false, 1, bitmap});
  flushLast();
}

void MetaIndex::flush() {
  if (dirty_) flushLast();
  dirty_ = false;
}

uint64_t MetaIndex::records() const {
  uint64_t n = 0;
  for (auto& r : runs_)
    if (!r.gap) n += r.count;
  return n;
}

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
      int sfd = ::open((path_ + ".shadow").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (sfd < 0) throw StorageError("storage: cannot write " + path_ + ".shadow");
      writeEntry(sfd, Run{false, 0, bitmap}, i);
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
