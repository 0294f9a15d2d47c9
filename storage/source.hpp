// Declared sources: text files (whitespace-separated tokens), binary files
// and devices (fixed-size little-endian records). Each read yields one
// record of the declared layout plus one NULL flag per flat element.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/layout.hpp"
#include "storage/checkpoint.hpp"

namespace storage {

class Source {
 public:
  virtual ~Source() = default;
  // Reads the next record. At the end of the data the source wraps to its
  // beginning, or with `oneShot` yields all-NULL records from then on.
  virtual void next(uint8_t* rec, uint8_t* nulls) = 0;
  // Reads up to `count` records into consecutive places (record i at
  // recs + i*recordSize, its flags at nulls + i*elements); stops after the
  // read that exhausted the source. Returns the records read.
  virtual int nextMany(uint8_t* recs, uint8_t* nulls, int count);
  bool exhausted() const { return exhausted_; }
  // Reads that surely will not exhaust it (at least this many; INT64_MAX: it
  // wraps): a parallel bin may read that many in its own task (--until-eof).
  virtual int64_t surelyLeft() const { return 0; }
  // Deadline waits (DEVICE): the descriptor to poll while the next record is
  // incomplete, else -1; fill() reads what is there without blocking and
  // says whether the next record is complete (or will not come this slot).
  virtual int waitFd() const { return -1; }
  virtual bool fill() { return true; }
  // Offline runs (no slot clock): true while the next record is incomplete
  // and can still come (DEVICE); the run waits for it instead of reading NULL.
  virtual bool pending() { return false; }
  // Records read, and records that were NULL because none was complete in time.
  virtual uint64_t reads() const { return 0; }
  virtual uint64_t misses() const { return 0; }
  // Values that did not fit their field's type (TEXTFILE): stored NULL, counted and logged.
  virtual uint64_t outOfRange() const { return 0; }
  const std::string& path() const { return path_; }
  // A checkpoint's part (storage/checkpoint.hpp): where the next record is
  // read from and the counters users see. A subclass writes the base's first.
  virtual void save(ByteWriter& w) const { w.flag(exhausted_); }
  virtual void restore(ByteReader& r) { exhausted_ = r.flag(); }

 protected:
  Source(std::string path, const ir::Layout& l, bool oneShot) : path_(std::move(path)), layout_(l), oneShot_(oneShot) {}
  void allNull(uint8_t* rec, uint8_t* nulls) const;
  std::string path_;
  ir::Layout layout_;
  bool oneShot_;
  bool exhausted_ = false;
};

// TEXT and BINARY read regular files; DEVICE reads a character device or a
// FIFO without ever blocking the slot thread.
enum class SourceFormat { TEXT, BINARY, DEVICE };

struct SourceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SourceOptions {
  bool oneShot = false;   // ONESHOT or --until-eof: no wrap, the end is the end
  bool untilEof = false;  // a DEVICE that is not there counts as exhausted
  bool noClock = false;   // DEVICE: wait briefly for data instead of one attempt per slot
};

// Opens a source. A TEXT or BINARY file that cannot be opened, or that is not
// a regular file (a FIFO would block), throws SourceError naming the file.
// A DEVICE that is not there yet gives NULL records and is opened again at
// each read.
std::unique_ptr<Source> openSource(SourceFormat f, const std::string& path, const ir::Layout& layout,
                                   const SourceOptions& o);

}  // namespace storage
