// Record stores (the storage profiles) and the `.meta` NULL index.
// Records are appended whole; a partial trailing record found at open is cut
// off, so a killed writer leaves files that reopen with whole records only.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "descriptor.hpp"

namespace storage {

struct StorageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------- stores
class Store {
 public:
  virtual ~Store() = default;
  virtual uint64_t count() const = 0;
  virtual void append(const uint8_t* rec) = 0;
  virtual bool read(uint64_t i, uint8_t* rec) = 0;  // false when out of range / not held
  virtual void update(uint64_t i, const uint8_t* rec) = 0;
  virtual void purge() = 0;
  // Closes the files; with rotation >= 0 data files are renamed to X.old<rotation>.
  virtual void close(int rotation) = 0;
  virtual bool shadowed() const { return false; }
  // Writes buffered records (appends are buffered in whole records).
  virtual void flush() {}
  virtual std::vector<std::string> files() const = 0;  // data files, for cleanup
};

// Opens a writable store of the given profile (DEFAULT, DIRECT, POSIX,
// POSIXSHD, GENERIC, MEMORY). `ring` is the MEMORY ring size (0 = unbounded).
std::unique_ptr<Store> openStore(const std::string& profile, const std::string& path, int recordSize,
                                 std::pair<int, int> retention, int ring);

bool isWritableProfile(const std::string& p);

// ---------------------------------------------------------------- meta index
// Run-length index of NULL bitmaps (one bit per descriptor entry), persisted
// eagerly: after every append the current run is on disk.
class MetaIndex {
 public:
  MetaIndex(std::string path, int bits, bool shadowAware, bool persistent = true);
  ~MetaIndex();
  void append(const std::vector<uint8_t>& bitmap);
  std::vector<uint8_t> bitmapAt(uint64_t i) const;
  void update(uint64_t i, const std::vector<uint8_t>& bitmap);
  void reset();
  // Writes the current run's entry (appends of the same NULL pattern are
  // batched; a new pattern writes the previous run first).
  void flush();
  uint64_t records() const;
  int entrySize() const { return 17 + (bits_ + 7) / 8; }
  int bytes() const { return (bits_ + 7) / 8; }

 private:
  struct Run {
    bool gap = false;
    uint64_t count = 0;
    std::vector<uint8_t> bits;
  };
  void writeEntry(int fd, const Run& r, uint64_t countField) const;
  void flushLast();
  void rewriteAll();

  std::string path_;
  int bits_;
  bool shadowAware_, persistent_;
  int64_t created_ = 0;
  std::vector<Run> runs_;
  bool lastOnDisk_ = false;  // the last run already has an entry in the file
  bool dirty_ = false;       // the last run's count on disk is behind
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> shadow_;
  int fd_ = -1;
};

// ---------------------------------------------------------------- raw .meta view
// The entries of a `.meta` file exactly as they are on disk (inspection tools).
struct MetaFileEntry {
  bool gap = false;
  uint64_t count = 0;     // records in the run, or the gap length
  uint64_t bitCount = 0;  // N as stored in the entry
  std::vector<uint8_t> bitmap;
  bool isNull(size_t i) const { return i / 8 < bitmap.size() && (bitmap[i / 8] >> (i % 8) & 1); }
};

struct MetaFileView {
  bool exists = false;
  uint64_t size = 0;     // file size in bytes
  int64_t created = 0;   // header
  std::vector<MetaFileEntry> entries;  // whole entries after the header
  uint64_t trailing = 0;               // bytes of a partial entry at the end
};

// Entry size for an index over `bits` descriptor entries: 17 + ceil(bits/8).
inline int metaEntrySize(int bits) { return 17 + (bits + 7) / 8; }
// Reads a `.meta` file; a missing or unreadable file gives exists = false.
MetaFileView readMetaFile(const std::string& path, int bits);

}  // namespace storage
