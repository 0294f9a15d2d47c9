// Checkpoint files: the engine's state at a block boundary, so that a run
// stopped or killed goes on from there (xretractor --resume).
// A file is magic, format version, payload length, payload, CRC-32 of all of
// it; written to a temporary file, fsynced, renamed over the current one
// (which becomes `.prev`), the directory fsynced. A reader that finds the
// current file torn or corrupt falls back to `.prev`.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace storage {

struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The payload's bytes: fixed-width little-endian integers and
// length-prefixed blobs, written by one side, read back in the same order.
class ByteWriter {
 public:
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void flag(bool v) { u8(v ? 1 : 0); }
  void u8(uint8_t v) { out_.push_back(v); }
  void text(const std::string& s) { blob(s.data(), s.size()); }
  void blob(const void* p, size_t n) {
    u64(n);
    raw(p, n);
  }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  const std::vector<uint8_t>& bytes() const { return out_; }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

// Reads what a ByteWriter wrote; reading past the end throws CheckpointError
// (a payload that passed its checksum but does not fit the plan).
class ByteReader {
 public:
  ByteReader(const uint8_t* p, size_t n, std::string what) : p_(p), n_(n), what_(std::move(what)) {}
  uint64_t u64() {
    uint64_t v;
    raw(&v, 8);
    return v;
  }
  int64_t i64() {
    int64_t v;
    raw(&v, 8);
    return v;
  }
  bool flag() { return u8() != 0; }
  uint8_t u8() {
    uint8_t v;
    raw(&v, 1);
    return v;
  }
  std::string text() {
    const uint64_t n = length();
    std::string s(size_t(n), '\0');
    raw(s.data(), size_t(n));
    return s;
  }
  // A blob's length, checked against what is left.
  uint64_t length() {
    const uint64_t n = u64();
    if (n > n_ - at_) fail();
    return n;
  }
  void raw(void* p, size_t n) {
    if (n > n_ - at_) fail();
    if (n) memcpy(p, p_ + at_, n);  // an empty vector's data() may be null
    at_ += n;
  }
  bool atEnd() const { return at_ == n_; }
  // A count of items of `each` bytes that the rest of the payload can hold.
  uint64_t count(uint64_t each) {
    const uint64_t n = u64();
    if (each && n > (n_ - at_) / each) fail();
    return n;
  }
  // n items of `each` bytes, checked against what is left: their byte size.
  uint64_t fits(int64_t n, int64_t each) const {
    if (n < 0 || each < 0 || (each && uint64_t(n) > (n_ - at_) / uint64_t(each))) fail();
    return uint64_t(n) * uint64_t(each);
  }
  [[noreturn]] void fail() const {
    throw CheckpointError(what_ + ": ends early at byte " + std::to_string(at_) + " of its payload");
  }

 private:
  const uint8_t* p_;
  size_t n_, at_ = 0;
  std::string what_;
};

// The checkpoint files of a storage directory ("" is the current one).
struct CheckpointPaths {
  std::string current, previous;
  static CheckpointPaths in(const std::string& dir);
  std::string temporary() const;  // per process: two writers never share one
};

// Writes `payload` as the current checkpoint, durably (see above). Throws
// CheckpointError naming the file when a step fails; the files before the
// call are then as they were.
void writeCheckpoint(const CheckpointPaths& p, const std::vector<uint8_t>& payload);

// What readCheckpoint found.
struct CheckpointRead {
  bool found = false;  // false: neither file is there
  std::string path;    // the file the payload comes from
  std::vector<uint8_t> payload;
  std::string fellBack;  // why the current file was passed over for `.prev` (empty: it was not)
};
// Reads the current checkpoint, or `.prev` when the current one is torn or
// corrupt. Throws CheckpointError when a file is there but none can be used.
CheckpointRead readCheckpoint(const CheckpointPaths& p);

// Removes both files (a session that was closed for good).
void removeCheckpoint(const CheckpointPaths& p);

}  // namespace storage
