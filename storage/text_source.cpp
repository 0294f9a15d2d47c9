// TEXTFILE sources: whitespace-separated tokens read as a record's fields
// (see storage/source.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "source.hpp"
#include "source_files.hpp"

namespace storage {

namespace {

// ------------------------------------------------------------ text tokens
// The stream-extraction fallback: an optional sign, then digits; `over` once
// the value passes `cap` (the digits after it are not read).
struct Digits {
  bool neg = false, any = false, over = false;
  uint64_t acc = 0;
};
Digits scanDigits(std::string_view t, uint64_t cap) {
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
  // Between records the next one starts at offset_ + pos_ (a buffer that
  // holds the whole file has offset_ 0).
  void save(ByteWriter& w) const override {
    Source::save(w);
    w.u64(offset_ + pos_);
    w.flag(hitEof_);
    w.i64(int64_t(blankSize_));
    w.u64(record_);
    w.u64(outOfRange_);
  }
  void restore(ByteReader& r) override {
    Source::restore(r);
    const uint64_t at = r.u64();
    struct stat st {};
    if (fstat(fd_, &st) != 0 || at > uint64_t(st.st_size))
      throw SourceError("TEXTFILE " + path_ + ": the checkpoint's position " + std::to_string(at) +
                        " is past its end (" + std::to_string(st.st_size) + " bytes)");
    seekTo(at);
    hitEof_ = r.flag();
    blankSize_ = off_t(r.i64());
    record_ = r.u64();
    outOfRange_ = r.u64();
  }

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
    // Wrapping within the buffer, the file is looked at again every
    // kRecheck: a small file wraps every record or so.
    if (whole_ && passes_ == 0 && std::chrono::steady_clock::now() < recheckAt_) {
      ++passes_;
      pos_ = 0;
      return true;
    }
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
    if (offset_ == 0 && known && uint64_t(st.st_size) == len_)
      pos_ = 0, whole_ = true, recheckAt_ = std::chrono::steady_clock::now() + kRecheck;
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
  int read_ = 0;        // fields of the current record that found a token
  int passes_ = 0;      // wraps within the current field
  bool whole_ = false;  // wrapping within the buffer: it holds the whole file
  static constexpr std::chrono::milliseconds kRecheck{10};
  std::chrono::steady_clock::time_point recheckAt_;
  uint64_t record_ = 0, outOfRange_ = 0;  // records read; values outside their type (stored NULL)
};

}  // namespace

std::unique_ptr<Source> openTextSource(const std::string& path, const ir::Layout& layout, const SourceOptions& o) {
  return std::make_unique<TextSource>(path, layout, o);
}

}  // namespace storage
