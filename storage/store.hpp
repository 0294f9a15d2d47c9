// Record stores (the storage profiles) and the `.meta` NULL index.
// Records are appended whole; a partial trailing record found at open is cut
// off, so a killed writer leaves files that reopen with whole records only.
// Ordering rule: data first, the index never ahead. The index is written only
// up to what the data file holds (MetaIndex::flush(durable)), and at open an
// index that counts more records than the data is cut back (align()).
// A failed write (disk full, EFBIG) is cut back to whole records or entries
// and thrown as StorageError naming the file; destructors never throw.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoint.hpp"
#include "descriptor.hpp"

namespace storage {

namespace io {
class FileSystemSync;
}

struct StorageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------- stores
class Store {
 public:
  virtual ~Store() = default;
  virtual uint64_t count() const = 0;
  // Records already written to the files (what a killed process leaves);
  // count() minus the records still in the append buffer.
  virtual uint64_t durable() const { return count(); }
  // Throws StorageError when a write fails; the store then keeps its whole
  // records on disk, refuses further appends, and later flushes and close()
  // do not report the same failure again.
  virtual void append(const uint8_t* rec) = 0;
  // `n` records end to end.
  virtual void appendMany(const uint8_t* recs, size_t n, size_t recordSize) {
    for (size_t i = 0; i < n; ++i) append(recs + i * recordSize);
  }
  virtual bool read(uint64_t i, uint8_t* rec) = 0;  // false when out of range / not held
  virtual void update(uint64_t i, const uint8_t* rec) = 0;
  virtual void purge() = 0;
  // Writes the buffer, fsyncs and closes the files (always closed, even when
  // the last write fails: then StorageError is thrown after closing); with
  // rotation >= 0 data files and their shadows are renamed to X.old<rotation>,
  // X.shadow.old<rotation> (rename failures are reported on stderr only).
  // `synced`: the caller flushed the store and synced its file system since,
  // and syncs it again after the close: nothing is fsynced here, nor the
  // directory after a rename.
  virtual void close(int rotation, bool synced = false) = 0;
  // Whether every open file of the store lies on the file system of `fs`.
  virtual bool onFileSystem(const io::FileSystemSync&) const { return true; }
  virtual bool shadowed() const { return false; }
  virtual bool inMemory() const { return false; }  // nothing on disk (the memory profile)
  // Writes buffered records (appends are buffered in whole records).
  virtual void flush() {}
  virtual std::vector<std::string> files() const = 0;  // data files, for cleanup
  // A resumed run (storage/checkpoint.hpp): the store goes back to its first
  // `n` records, those after are computed again. Throws StorageError when it
  // holds fewer. A store with nothing on disk (memory) instead keeps its
  // records in the checkpoint: save() and restore().
  virtual void cutBack(uint64_t n) = 0;
  virtual void save(ByteWriter&) const {}
  virtual void restore(ByteReader&) {}
  // A RETENTION segment dropped after a checkpoint is still needed to resume
  // from it: with holdDrops(true) a dropped segment's files stay until
  // releaseDrops(n) removes the first n held (a later checkpoint is durable);
  // holdDrops(false), and the close, remove every one held.
  virtual void holdDrops(bool) {}
  virtual size_t dropsHeld() const { return 0; }
  virtual void releaseDrops(size_t) {}
};

// The update log of a one-file store: by default `<data>.shadow`, started
// empty at open. An archive's (`X.shadow.old<N>` beside `X.old<N>`) is named
// here and kept as found.
struct ShadowFile {
  std::string path;  // empty: `<data>.shadow`
  bool keep = false;
};

// Opens a writable store of the given profile (DEFAULT, DIRECT, POSIX,
// POSIXSHD, GENERIC, MEMORY). `ring` is the MEMORY ring size (0 = unbounded).
// `resuming`: RETENTION keeps every segment found until Store::cutBack (a
// checkpoint may need ones past the limit; cutBack drops the rest).
std::unique_ptr<Store> openStore(const std::string& profile, const std::string& path, int recordSize,
                                 std::pair<int, int> retention, int ring, const ShadowFile& shadow = {},
                                 bool resuming = false);

bool isWritableProfile(const std::string& p);

// ---------------------------------------------------------------- meta index
// Run-length index of NULL bitmaps (one bit per descriptor entry). Appends
// change memory only; flush() writes the entries, never beyond the data:
// the owner flushes the data store first and passes its durable() count.
// The destructor writes nothing (an index written at destruction could run
// ahead of data that failed to reach the disk).
class MetaIndex {
 public:
  // `shadowPath`: the index's update log, by default `<path>.shadow`.
  MetaIndex(std::string path, int bits, bool shadowAware, bool persistent = true, std::string shadowPath = "");
  ~MetaIndex();
  void append(const std::vector<uint8_t>& bitmap);
  // `count` records whose bitmap is all zero (nothing NULL).
  void appendPresent(uint64_t count);
  std::vector<uint8_t> bitmapAt(uint64_t i) const;
  void update(uint64_t i, const std::vector<uint8_t>& bitmap);
  void reset();
  // Makes the index count exactly `dataRecords` records, as found at open:
  // an index ahead of the data (a crash, a failed write) is cut back; one
  // behind it is padded with non-NULL records (what unindexed records read as),
  // so that later appends stay aligned with their records.
  void align(uint64_t dataRecords);
  // Writes the entries covering the first min(durable, records()) records:
  // the last entry on disk is overwritten in place while its run grows, new
  // runs are appended. Cheap when nothing new is covered. A failed write is
  // cut back to whole entries and thrown as StorageError.
  void flush(uint64_t durable);
  void flush() { flush(UINT64_MAX); }  // the data holds every record
  uint64_t records() const;
  uint64_t onDisk() const { return disk_; }  // records the file's entries cover
  int bytes() const { return (bits_ + 7) / 8; }
  // Archives the index of session `n` at a clean shutdown under ROTATION (the
  // owner flushed it first): its `.meta.shadow`, when there is one, becomes
  // `.meta.shadow.old<n>`, then the `.meta` becomes `.meta.old<n>`. The index
  // is detached: nothing more is written and no new `.meta` is created.
  // Rename failures are reported on stderr only. `synced`: as Store::close's,
  // the caller syncs the file system after (no fsync here).
  void rotate(int n, bool synced = false);
  // Whether the index file lies on the file system of `fs` (true without one).
  bool onFileSystem(const io::FileSystemSync& fs) const;

 private:
  struct Run {
    bool gap = false;
    uint64_t count = 0;
    std::vector<uint8_t> bits;
  };
  void encode(std::vector<uint8_t>& out, const Run& r, uint64_t countField) const;
  void rewriteAll();
  void rewriteShadow();
  [[noreturn]] void fail(const std::string& message);

  std::string path_, shadowPath_;
  int bits_;
  bool shadowAware_, persistent_;
  int64_t created_ = 0;
  std::vector<Run> runs_;
  std::vector<uint8_t> flushBuf_;
  uint64_t total_ = 0;  // records() of runs_
  // What the file holds: entries, the count field of its last entry, the
  // records before that entry and the records it covers in all.
  size_t diskEntries_ = 0;
  uint64_t diskLastCount_ = 0, diskBefore_ = 0, disk_ = 0;
  std::string error_;  // set by a failed write: nothing more is written
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
  uint64_t size = 0;                   // file size in bytes
  int64_t created = 0;                 // header
  std::vector<MetaFileEntry> entries;  // whole entries after the header
  uint64_t trailing = 0;               // bytes of a partial entry at the end
};

// Entry size for an index over `bits` descriptor entries: 17 + ceil(bits/8).
inline int metaEntrySize(int bits) { return 17 + (bits + 7) / 8; }
// Reads a `.meta` file; a missing or unreadable file gives exists = false.
MetaFileView readMetaFile(const std::string& path, int bits);

}  // namespace storage
