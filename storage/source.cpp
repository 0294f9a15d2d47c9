#include "source.hpp"

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

namespace {

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

// ------------------------------------------------------------ text tokens
// The stream-extraction fallback: an optional sign, then digits; `over` once
// the value passes `cap` (the digits after it are not read).
struct Digits {
  bool neg = false, any = false, over = false;
  uint64_t acc = 0;
};
static Digits scanDigits(std::string_view t, uint64_t cap) {
  Digits d;
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) d.neg = t[i++] == '-';
  while (i < t.size() && isdigit((unsigned char)t[i])) {
    d.any = true;
    d.acc = d.acc * 10 + uint64_t(t[i++] - '0');
    if (d.acc > cap) {
      d.over = true;
      break;
    }
  }
  return d;
}

// An integer token: an optional sign and digits, as stream extraction reads
// them ("+5" is 5, "12abc" is 12, no digits is 0). False when the value is
// outside [lo, hi]: the field is then NULL, never a clamped or wrapped value.
bool parseInteger(std::string_view t, int64_t lo, int64_t hi, int64_t& out) {
  const Digits d = scanDigits(t, uint64_t(1) << 33);  // past every 32-bit range
  out = 0;
  if (d.over) return false;
  if (!d.any) return true;
  out = d.neg ? -int64_t(d.acc) : int64_t(d.acc);
  return out >= lo && out <= hi;
}

// Decimal or exponent form only (no inf, nan or hex); out of range clamps.
double parseReal(std::string_view t, double limit) {
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  size_t digits = 0;
  while (i < t.size() && isdigit((unsigned char)t[i])) ++i, ++digits;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && isdigit((unsigned char)t[i])) ++i, ++digits;
  }
  if (!digits) return 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    size_t j = i + 1;
    if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
    if (j < t.size() && isdigit((unsigned char)t[j])) {
      while (j < t.size() && isdigit((unsigned char)t[j])) ++j;
      i = j;
    }
  }
  std::string s(t.substr(0, i));
  double d = strtod(s.c_str(), nullptr);
  if (std::isinf(d) || std::fabs(d) > limit) return d < 0 ? -limit : limit;
  return d;
}

// A TEXTFILE is read as a stream through a bounded buffer (memory does not
// grow with the file). Without ONESHOT it wraps to its start at the end; with
// ONESHOT offline or with --until-eof the end is the end; with ONESHOT in a
// clocked run the end is where the file stands now: records there are NULL,
// and lines appended later are read as they come (as `tail -f` does), a
// record once it is whole. A file cut shorter than the point read so far is
// read again from its start.
class TextSource : public Source {
 public:
  TextSource(std::string path, const ir::Layout& l, const SourceOptions& o)
      : Source(std::move(path), l, o.oneShot), follow_(o.oneShot && !o.untilEof && !o.noClock) {
    fd_ = openRegular(path_, "TEXTFILE");
    struct stat st {};
    const size_t size = fstat(fd_, &st) == 0 ? size_t(st.st_size) : kBuffer;
    buf_.resize(std::clamp(size + 1, size_t(4096), kBuffer));  // a small file, a small buffer
  }
  ~TextSource() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void next(uint8_t* rec, uint8_t* nulls) override {
    if (exhausted_ || hitEof_ || stillBlank()) {
      // Past the end of a one-shot run: synthetic all-NULL records.
      exhausted_ = exhausted_ || hitEof_;
      allNull(rec, nulls);
      return;
    }
    const uint64_t recAt = offset_ + pos_;
    ended_ = false;
    read_ = 0;
    memset(rec, 0, size_t(layout_.recordSize));
    for (size_t e = 0; e < layout_.elems.size(); ++e) {
      const ir::Element& el = layout_.elems[e];
      uint8_t* d = rec + el.offset;
      nulls[e] = 0;
      passes_ = 0;
      if (el.type == ir::Type::STRING) {
        readString(d, el.size, nulls[e]);
        continue;
      }
      if (!token()) {
        nulls[e] = 1;
        continue;
      }
      ++read_;
      const std::string_view tok = tok_;
      if (tok == "NULL" || tok == "Null" || tok == "null") {
        nulls[e] = 1;
        continue;
      }
      switch (el.type) {
        case ir::Type::BYTE:
        case ir::Type::INTEGER:
        case ir::Type::UINT: {
          const int64_t lo = el.type == ir::Type::INTEGER ? INT32_MIN : 0;
          const int64_t hi = el.type == ir::Type::BYTE ? 255 : el.type == ir::Type::INTEGER ? INT32_MAX : UINT32_MAX;
          int64_t v;
          if (!parseInteger(tok, lo, hi, v)) {
            nulls[e] = 1;
            outOfRange(tok, e);
          } else if (el.type == ir::Type::BYTE) {
            d[0] = uint8_t(v);
          } else {
            const uint32_t w = uint32_t(v);  // INTEGER: two's complement of v
            memcpy(d, &w, 4);
          }
          break;
        }
        case ir::Type::FLOAT: {
          float v = float(parseReal(tok, FLT_MAX));
          memcpy(d, &v, 4);
          break;
        }
        case ir::Type::DOUBLE: {
          double v = parseReal(tok, DBL_MAX);
          memcpy(d, &v, 8);
          break;
        }
        default: nulls[e] = 1; break;
      }
    }
    if (hitEof_ && read_ == 0) exhausted_ = true;  // nothing real in it: a synthetic record
    if (ended_) {                                  // followed: a record the data ends in is read again once whole
      seekTo(recAt);
      allNull(rec, nulls);
      return;
    }
    ++record_;
  }
  uint64_t outOfRange() const override { return outOfRange_; }

 private:
  // 256 KiB reads. A token, or a quoted string, ends after kLongestToken
  // bytes (the rest is the next token): no field needs more, and so a record
  // costs bounded work whatever the file holds (a stop is seen at once).
  static constexpr size_t kBuffer = size_t(1) << 18, kLongestToken = size_t(1) << 16;
  static bool space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

  // The next bytes of the file into the buffer; false at the end of what the
  // file holds now, the buffer then as it was (a read error is logged once
  // and read as the end).
  bool refill() {
    if (whole_) return false;  // the file's end as its last fstat saw it (atEnd checks again)
    for (;;) {
      const ssize_t r = ::read(fd_, buf_.data(), buf_.size());
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        if (!readErrorSaid_)
          fprintf(stderr, "warning: TEXTFILE source %s: read error at byte %llu: %s\n", path_.c_str(),
                  (unsigned long long)(offset_ + len_), strerror(errno));
        readErrorSaid_ = true;
        return false;
      }
      if (r == 0) return false;
      offset_ += len_;
      pos_ = 0;
      len_ = size_t(r);
      return true;
    }
  }
  // Reading goes on from byte `at` of the file.
  void seekTo(uint64_t at) {
    whole_ = false;
    ::lseek(fd_, off_t(at), SEEK_SET);
    offset_ = at;
    pos_ = len_ = 0;
  }
  // At the end of the data: whether to read on (wrapped to the start, or a
  // file that was cut shorter read again from its start).
  bool atEnd() {
    struct stat st {};
    const bool known = fstat(fd_, &st) == 0;
    if (known && uint64_t(st.st_size) < offset_ + len_) {
      fprintf(stderr, "warning: TEXTFILE source %s was cut to %lld bytes (read up to byte %llu): read from its start\n",
              path_.c_str(), (long long)st.st_size, (unsigned long long)(offset_ + len_));
      seekTo(0);
      return true;
    }
    if (follow_) {  // records at the end are NULL; appended lines are read later
      ended_ = true;
      return false;
    }
    if (oneShot_) {
      hitEof_ = true;
      return false;
    }
    // Wrap, at most once a field: a file with no token gives NULL after one pass.
    if (++passes_ > 1) {
      if (known) blankSize_ = st.st_size;  // no token in it: NULL records until it changes
      return false;
    }
    // The whole file in the buffer: read again from there, with no read to
    // find its end each pass (a small file wraps every record or so); bytes
    // appended meanwhile are read from the next pass on.
    if (offset_ == 0 && known && uint64_t(st.st_size) == len_) pos_ = 0, whole_ = true;
    else seekTo(0);
    return true;
  }
  // A file found to hold no token, unchanged since.
  bool stillBlank() {
    if (blankSize_ < 0) return false;
    struct stat st {};
    if (fstat(fd_, &st) == 0 && st.st_size == blankSize_) return true;
    blankSize_ = -1;
    return false;
  }
  // Skips blanks; false at the end of the data.
  bool skipSpace() {
    for (;;) {
      while (pos_ < len_ && space(buf_[pos_])) ++pos_;
      if (pos_ < len_) return true;
      if (!refill() && !atEnd()) return false;
    }
  }
  // The next whitespace-separated token into tok_; false at the end of the
  // data. Followed, a token the data ends in may be a line still being
  // written: its record is read again, whole, once more has come.
  bool token() {
    if (!skipSpace()) return false;
    tokAt_ = offset_ + pos_;
    tok_.clear();
    for (;;) {
      const size_t b = pos_, end = std::min(len_, pos_ + (kLongestToken - tok_.size()));
      while (pos_ < end && !space(buf_[pos_])) ++pos_;
      tok_.append(reinterpret_cast<const char*>(buf_.data()) + b, pos_ - b);
      if (pos_ < len_ || tok_.size() == kLongestToken) return true;
      if (!refill()) {
        pos_ = len_;
        if (!follow_) return true;
        ended_ = true;
        return false;
      }
    }
  }
  // A STRING field: the next quoted string (bare words before it are skipped;
  // NULL is a NULL field), at most `width` bytes kept.
  void readString(uint8_t* d, int width, uint8_t& isNull) {
    for (;;) {
      if (!skipSpace()) {
        isNull = 1;
        return;
      }
      ++read_;
      if (buf_[pos_] == '"') {
        ++pos_;
        size_t n = 0, seen = 0;
        for (;;) {
          const size_t b = pos_, end = std::min(len_, pos_ + (kLongestToken - seen));
          while (pos_ < end && buf_[pos_] != '"') ++pos_;
          const size_t take = std::min(pos_ - b, size_t(width) - n);
          memcpy(d + n, buf_.data() + b, take);
          n += take;
          seen += pos_ - b;
          if (pos_ < end) {
            ++pos_;  // the closing quote
            return;
          }
          // An unclosed string ends with the data (followed: its record is read
          // again once more has come), or after kLongestToken bytes.
          if (seen == kLongestToken) return;
          if (!refill()) {
            pos_ = len_;
            ended_ = follow_;
            return;
          }
        }
      }
      if (!token()) {
        isNull = 1;
        return;
      }
      if (tok_ == "NULL" || tok_ == "Null" || tok_ == "null") {
        isNull = 1;
        return;
      }
      --read_;  // any other bare word is skipped; the next quoted string is the value
    }
  }

  // A value outside its field's type: counted, and logged (the first 10, then
  // every 1000th) with the file, byte offset, record and element, the token cut short.
  void outOfRange(std::string_view tok, size_t element) {
    if (++outOfRange_ > 10 && outOfRange_ % 1000 != 0) return;
    const std::string shown = tok.size() > 40 ? std::string(tok.substr(0, 40)) + "..." : std::string(tok);
    fprintf(stderr,
            "warning: TEXTFILE source %s at byte %llu (record %llu, element %zu): '%s' is out of the range of %s; "
            "stored NULL (%llu so far)\n",
            path_.c_str(), (unsigned long long)tokAt_, (unsigned long long)record_, element, shown.c_str(),
            ir::typeName(layout_.elems[element].type), (unsigned long long)outOfRange_);
  }

  const bool follow_;  // ONESHOT without --until-eof: the end moves as the file grows
  int fd_ = -1;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0, len_ = 0;  // the unread bytes are buf_[pos_, len_)
  uint64_t offset_ = 0;       // the file offset of buf_[0]
  std::string tok_;
  uint64_t tokAt_ = 0;    // the file offset of tok_
  bool hitEof_ = false;   // one-shot: the end was reached; later records are synthetic
  bool ended_ = false;    // followed: the current record reached the end of the data
  off_t blankSize_ = -1;  // the size of a file found to hold no token
  bool readErrorSaid_ = false;
  int read_ = 0;                          // fields of the current record that found a token
  int passes_ = 0;                        // wraps within the current field
  bool whole_ = false;                    // wrapping within the buffer: it holds the whole file
  uint64_t record_ = 0, outOfRange_ = 0;  // records read; values outside their type (stored NULL)
};

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
    case SourceFormat::TEXT: return std::make_unique<TextSource>(path, layout, o);
    case SourceFormat::BINARY: return std::make_unique<BinarySource>(path, layout, o.oneShot);
    case SourceFormat::DEVICE: return std::make_unique<DeviceSource>(path, layout, o);
  }
  return nullptr;
}

}  // namespace storage
