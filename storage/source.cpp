#include "source.hpp"
#include "source_files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <cfloat>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace storage {

int Source::nextMany(uint8_t* recs, uint8_t* nulls, int count) {
  const size_t rec = size_t(layout_.recordSize), ne = layout_.elems.size();
  for (int i = 0; i < count; ++i) {
    next(recs + i * rec, nulls + i * ne);
    if (exhausted_) return i + 1;
  }
  return count;
}

void Source::allNull(uint8_t* rec, uint8_t* nulls) const {
  memset(rec, 0, size_t(layout_.recordSize));
  memset(nulls, 1, layout_.elems.size());
}

// TEXTFILE and BINFILE read regular files: anything else (a FIFO, a device, a
// directory) would block the engine or never end, so it is refused at start.
int openRegular(const std::string& path, const char* kind) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw SourceError(std::string(kind) + " source '" + path + "' cannot be opened: " + strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw SourceError(std::string(kind) + " source '" + path +
                      "' is not a regular file (declare a FIFO or a character device as DEVICE)");
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

namespace {

// ------------------------------------------------------------ binary
class BinarySource : public Source {
 public:
  BinarySource(std::string path, const ir::Layout& l, bool oneShot) : Source(std::move(path), l, oneShot) {
    fd_ = openRegular(path_, "BINFILE");
    buffered_ = true;  // regular files are read in large blocks
  }
  ~BinarySource() override {
    if (fd_ >= 0) ::close(fd_);
  }
  // Whole records in the file after those read (it may grow, never shrink).
  int64_t surelyLeft() const override {
    struct stat st {};
    if (!oneShot_) return INT64_MAX;
    if (fd_ < 0 || exhausted_ || layout_.recordSize <= 0 || fstat(fd_, &st) != 0) return 0;
    return std::max<int64_t>(0, (int64_t(st.st_size) - int64_t(offset_)) / layout_.recordSize);
  }
  // Whole records still in the read buffer are copied at once.
  int nextMany(uint8_t* recs, uint8_t* nulls, int count) override {
    const size_t rec = size_t(layout_.recordSize), ne = layout_.elems.size();
    int done = 0;
    while (done < count) {
      const size_t whole = rec ? std::min((blen_ - bpos_) / rec, size_t(count - done)) : 0;
      if (fd_ >= 0 && !exhausted_ && buffered_ && whole > 0) {
        memcpy(recs + done * rec, buf_.data() + bpos_, whole * rec);
        memset(nulls + done * ne, 0, whole * ne);
        bpos_ += whole * rec;
        offset_ += whole * rec;
        record_ += whole;
        done += int(whole);
        continue;
      }
      next(recs + done * rec, nulls + done * ne);
      ++done;
      if (exhausted_) break;
    }
    return done;
  }
  void next(uint8_t* rec, uint8_t* nulls) override {
    if (fd_ < 0 || exhausted_) {
      allNull(rec, nulls);
      return;
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      size_t got = readRecord(rec);
      if (got == size_t(layout_.recordSize)) {
        memset(nulls, 0, layout_.elems.size());
        offset_ += got;
        ++record_;
        return;
      }
      if (got > 0 && attempt == 0 && !oneShot_) {
        // A trailing partial record is not data: wrap.
      }
      if (oneShot_) break;
      if (::lseek(fd_, 0, SEEK_SET) < 0) break;  // a FIFO cannot wrap
      offset_ = 0;
      bpos_ = blen_ = 0;
    }
    exhausted_ = oneShot_ || exhausted_;
    allNull(rec, nulls);
  }
  // The read buffer is dropped: reading goes on at the next record's byte.
  void save(ByteWriter& w) const override {
    Source::save(w);
    w.u64(offset_);
    w.u64(record_);
  }
  void restore(ByteReader& r) override {
    Source::restore(r);
    offset_ = r.u64();
    record_ = r.u64();
    bpos_ = blen_ = 0;
    struct stat st {};
    if (fd_ >= 0 && (fstat(fd_, &st) != 0 || offset_ > uint64_t(st.st_size) || offset_ % uint64_t(layout_.recordSize)))
      throw SourceError("BINFILE " + path_ + ": the checkpoint's position " + std::to_string(offset_) +
                        " is not a record of this file (" + std::to_string(st.st_size) + " bytes)");
    if (fd_ >= 0 && ::lseek(fd_, off_t(offset_), SEEK_SET) < 0)
      throw SourceError("BINFILE " + path_ + ": cannot seek to byte " + std::to_string(offset_) + ": " +
                        strerror(errno));
  }

 private:
  size_t readRecord(uint8_t* rec) {
    size_t need = size_t(layout_.recordSize), got = 0;
    while (buffered_ && got < need) {
      if (bpos_ == blen_) {
        ssize_t r = ::read(fd_, buf_.data(), buf_.size());
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return got;
        bpos_ = 0;
        blen_ = size_t(r);
      }
      size_t n = std::min(need - got, blen_ - bpos_);
      memcpy(rec + got, buf_.data() + bpos_, n);
      bpos_ += n;
      got += n;
    }
    while (got < need) {
      ssize_t r = ::read(fd_, rec + got, need - got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        fprintf(stderr, "warning: reading %s at byte %llu (record %llu): %s\n", path_.c_str(),
                (unsigned long long)offset_, (unsigned long long)record_, strerror(errno));
        return got;
      }
      if (r == 0) return got;
      got += size_t(r);
    }
    return got;
  }
  int fd_ = -1;
  uint64_t offset_ = 0, record_ = 0;
  bool buffered_ = false;
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(1 << 16);
  size_t bpos_ = 0, blen_ = 0;
};

// ------------------------------------------------------------ device
// A character device or FIFO, opened and read without blocking: a record that
// is not complete when the slot reads it gives NULL (its bytes are kept for
// the next slot), so a stalled or absent writer never stops the engine.
class DeviceSource : public Source {
 public:
  DeviceSource(std::string path, const ir::Layout& l, const SourceOptions& o)
      : Source(std::move(path), l, o.oneShot), opt_(o), part_(size_t(std::max(l.recordSize, 1))) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      throw SourceError("DEVICE source '" + path_ + "' is a directory (declare a FIFO or a character device)");
    tryOpen();
    if (fd_ < 0 && opt_.untilEof) exhausted_ = true;  // nothing to read until its end
  }
  ~DeviceSource() override {
    if (fd_ >= 0) ::close(fd_);
  }
  // Not after the end of data or an error: poll would answer at once (a hang-up, /dev/null).
  int waitFd() const override { return exhausted_ || fd_ < 0 || have_ == need() || atEnd_ ? -1 : fd_; }
  bool fill() override {
    if (exhausted_ || fd_ < 0) return true;
    return readAvailable(false) != Avail::MORE;
  }
  // Offline: the next record is not complete yet and may still come (a
  // writer that is not there yet, or gone without --until-eof, may come back).
  // At the end of data only a FIFO waits (for its next writer); a device or
  // file at its end, or one that fails to read, gives NULL as before.
  bool pending() override {
    if (exhausted_) return false;
    if (fd_ < 0 && !tryOpen()) return true;
    const Avail a = readAvailable(false);
    return !exhausted_ && (a == Avail::MORE || (a == Avail::NONE && fifo_ && !failed_));
  }
  uint64_t reads() const override { return reads_; }
  uint64_t misses() const override { return misses_; }
  // Bytes a device gave are gone once read: only its counters go on.
  void save(ByteWriter& w) const override {
    Source::save(w);
    for (uint64_t v : {reads_, misses_, offset_}) w.u64(v);
  }
  void restore(ByteReader& r) override {
    Source::restore(r);
    for (uint64_t* v : {&reads_, &misses_, &offset_}) *v = r.u64();
  }
  void next(uint8_t* rec, uint8_t* nulls) override {
    if (exhausted_ || (fd_ < 0 && !tryOpen())) {
      // Offline there is no slot clock: a device that is not there yet is
      // retried at most ten times a second, never in a busy loop.
      if (!exhausted_ && opt_.noClock) poll(nullptr, 0, 100);
      if (!exhausted_) ++misses_;
      allNull(rec, nulls);
      return;
    }
    const Avail a = readAvailable(opt_.noClock);
    // Offline, a device at its end or failing is read again at most ten times a second.
    if (a == Avail::NONE && opt_.noClock && !exhausted_) poll(nullptr, 0, 100);
    const size_t need = this->need();
    if (have_ == need) {
      memcpy(rec, part_.data(), need);
      memset(nulls, 0, layout_.elems.size());
      offset_ += need;
      have_ = 0;
      ++reads_;
      return;
    }
    if (!exhausted_) ++misses_;
    allNull(rec, nulls);
  }

 private:
  enum class Avail { COMPLETE, MORE, NONE };  // MORE: nothing now, more may come
  size_t need() const { return size_t(layout_.recordSize); }
  // Reads towards the next record until it is complete or no byte is there.
  Avail readAvailable(bool wait) {
    const size_t need = this->need();
    bool waited = false;
    while (have_ < need) {
      ssize_t r = ::read(fd_, part_.data() + have_, need - have_);
      atEnd_ = failed_ = false;
      if (r > 0) {
        have_ += size_t(r);
        gotAny_ = true;
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {  // end of data: the writer is gone (or not there yet)
        have_ = 0;   // a record cut off by a disconnect is dropped
        atEnd_ = true;
        // --until-eof: a FIFO ends when its writer leaves after data; anything else at its end.
        if (oneShot_ && (gotAny_ || !fifo_)) exhausted_ = true;
        return Avail::NONE;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        // Counted, and logged the first time and then every 1000th: a device
        // that keeps failing must not flood the log at the slot rate.
        if (++readErrors_ == 1 || readErrors_ % 1000 == 0)
          fprintf(stderr, "warning: DEVICE source %s: read error at byte %llu: %s (%llu so far)\n", path_.c_str(),
                  (unsigned long long)offset_, strerror(errno), (unsigned long long)readErrors_);
        if (oneShot_) exhausted_ = true;  // --until-eof: a device that cannot be read has ended
        atEnd_ = failed_ = true;
        return Avail::NONE;
      }
      // No data now. Offline runs wait a little (bounded, so a stop request
      // is seen within a fraction of a second); clocked runs wait in the
      // engine, over all due devices at once, up to their deadlines.
      if (!wait || waited) return Avail::MORE;
      pollfd p{fd_, POLLIN, 0};
      poll(&p, 1, 100);
      waited = true;
    }
    return Avail::COMPLETE;
  }
  bool tryOpen() {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st {};
    if (fd_ >= 0 && fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {  // made a directory since the start
      ::close(fd_);
      fd_ = -1;
      errno = EISDIR;
    }
    if (fd_ < 0) {
      if (!warned_)
        fprintf(stderr, "warning: DEVICE source %s cannot be opened (%s); its records are NULL until it can\n",
                path_.c_str(), strerror(errno));
      warned_ = true;
      return false;
    }
    fifo_ = S_ISFIFO(st.st_mode);
    return true;
  }
  SourceOptions opt_;
  int fd_ = -1;
  std::vector<uint8_t> part_;
  size_t have_ = 0;
  uint64_t offset_ = 0;
  bool gotAny_ = false, warned_ = false;
  bool fifo_ = false;                    // a FIFO: its end means no writer now, one may come
  bool atEnd_ = false, failed_ = false;  // the last read found the end of data / an error
  uint64_t reads_ = 0, misses_ = 0, readErrors_ = 0;
};

}  // namespace

std::unique_ptr<Source> openSource(SourceFormat f, const std::string& path, const ir::Layout& layout,
                                   const SourceOptions& o) {
  switch (f) {
    case SourceFormat::TEXT: return openTextSource(path, layout, o);
    case SourceFormat::BINARY: return std::make_unique<BinarySource>(path, layout, o.oneShot);
    case SourceFormat::DEVICE: return std::make_unique<DeviceSource>(path, layout, o);
  }
  return nullptr;
}

}  // namespace storage
