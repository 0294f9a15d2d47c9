// The artifact family of one stream: its descriptor from the query, every file
// name of the family (data, .desc, .meta, .shadow, .meta.shadow, _segment_<k>,
// .old<k>, .desc.old<k>, .tmp), opening its store and index together, removal
// and rotation.
// Those names are composed here and nowhere else.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "descriptor.hpp"
#include "ir/ir.hpp"
#include "store.hpp"

namespace storage {

// A `.shadow` entry of a data file: the record's byte position (8 bytes), then the record.
inline int shadowEntrySize(int recordSize) { return 8 + recordSize; }

// Files of a family, as a mask for ArtifactPaths::remove.
enum Artifact : unsigned {
  kData = 1,
  kDesc = 2,
  kMeta = 4,
  kShadow = 8,
  kMetaShadow = 16,
  kSegments = 32,  // every file named <data>_segment_*, their shadows too
  kAllArtifacts = 63,
};

// `<data>_segment_<index>` found beside the data file.
struct SegmentFile {
  uint64_t index = 0;
  std::string name, path;  // file name; path as found in the directory
  bool regular = false;
};

// `<stem><ext>.old<counter>` found beside the data file (storage.md §8.3).
struct RotatedFile {
  uint64_t counter = 0;
  std::string ext, name, path;
};

// The names in one directory, listed once and sorted: a start of many streams
// asks the file system once instead of once a stream (1,000 streams in a
// directory of 4,000 files took seconds). Valid while nothing else changes
// the directory: a run's set-up, before its streams write.
class DirectoryListing {
 public:
  explicit DirectoryListing(const std::string& dir);
  bool lists(const std::string& dir) const;
  struct Entry {
    std::string name;
    bool regular = false;
  };
  // The entries whose name starts with `prefix`, in name order.
  std::vector<const Entry*> withPrefix(const std::string& prefix) const;

 private:
  std::string dir_;
  std::vector<Entry> entries_;
};

class ArtifactPaths {
 public:
  // A data file and its descriptor, both given (the descriptor may be empty: a store's own files).
  explicit ArtifactPaths(std::string data, std::string desc = "");
  // A run's stream: `<dir><id>.desc`; data `<dir><filename or id>`, a declared
  // stream's source file as written. `dir` is the storage directory as the plan
  // holds it (empty or ending in '/').
  static ArtifactPaths forQuery(const std::string& dir, const ir::Query& q);
  static ArtifactPaths forStream(const std::string& dir, const std::string& id, const std::string& dataName);
  static ArtifactPaths forSource(const std::string& dir, const std::string& id, const std::string& source);
  // The inspector's file `name` in `dir` (a path join; `dir` may be empty): data
  // `dir/name`, descriptor `dir/<name up to .old>.desc`. An archive of session
  // N, `X.old<N>`, has the index, shadows of its session: `X.meta.old<N>`,
  // `X.shadow.old<N>`, `X.meta.shadow.old<N>`, and its descriptor
  // `X.desc.old<N>` when that file exists (archives made before sessions kept
  // their descriptor read with the stream's current one).
  static ArtifactPaths forFile(const std::string& dir, const std::string& name);
  // The storage map of `base`: data `base`, descriptor `base.desc`.
  static ArtifactPaths atBase(const std::string& base);

  const std::string& data() const { return data_; }
  const std::string& desc() const { return desc_; }
  std::string meta() const { return archived(".meta"); }
  std::string shadow() const { return archived(".shadow"); }
  std::string metaShadow() const { return archived(".meta.shadow"); }
  // The data file is the archive of an earlier session (`X.old<N>`, see forFile).
  bool isArchive() const { return !archive_.empty(); }
  std::string segment(uint64_t k) const { return data_ + "_segment_" + std::to_string(k); }
  // The descriptor kept with the archive of session k: `<data>.desc.old<k>`.
  std::string descArchive(int k) const { return rotatedOf(data_ + ".desc", k); }
  // Segments found beside the data file, by index.
  // The listing, when given and of the data file's directory, stands for the directory.
  std::vector<SegmentFile> segments(const DirectoryListing* listing = nullptr) const;
  // Rotated files of the data file's name, newest counter first, then by ext.
  std::vector<RotatedFile> rotated() const;
  // The rotation counter that overwrites no earlier archive: at least `from`,
  // above every `<stem>[._]*.old<k>` (k of at most 9 digits) in the directory.
  int nextRotation(int from, const DirectoryListing* listing = nullptr) const;
  // Removes the files in `which` (missing ones are no error).
  void remove(unsigned which, const DirectoryListing* listing = nullptr) const;

  std::string segmentPattern() const { return data_ + "_segment_*"; }  // as the storage map names them

  // `name` in `dir`, a path join (`name` itself when `dir` is empty).
  static std::string inDir(const std::string& dir, const std::string& name);
  static std::string shadowOf(const std::string& file) { return file + ".shadow"; }
  static std::string rotatedOf(const std::string& file, int k) { return file + ".old" + std::to_string(k); }
  static std::string tmpOf(const std::string& file) { return file + ".tmp"; }

 private:
  // `<data><ext>`; of an archive `X.old<N>`, `X<ext>.old<N>`.
  std::string archived(const char* ext) const {
    return archive_.empty() ? data_ + ext : data_.substr(0, data_.size() - archive_.size()) + ext + archive_;
  }

  std::string data_, desc_;
  std::string dir_, stem_;  // where and under which name nextRotation() looks
  std::string archive_;     // ".old<N>" when the data file is an archive
};

// Under ROTATION, the files of a computed stream found on disk (data, index,
// shadows, segments) are continued only when the stream's `.desc` there is `d`.
// Returns what they were written with instead (the stored descriptor as one
// line, or "no descriptor" / "an unreadable descriptor"); nullopt when there
// are no such files or their descriptor is `d`.
std::optional<std::string> changedLayout(const ArtifactPaths& p, const Descriptor& d,
                                         const DirectoryListing* listing = nullptr);
// Archives an earlier session's files whole under number k, as a clean shutdown
// of session k does, so that a new session starts the stream afresh: first its
// `.desc` is copied to descArchive(k), then segments (and their shadows),
// index shadow, index, shadow and data are renamed to `<file>.old<k>`. Returns
// the archive's file names. A failure is a StorageError naming the file (the
// caller must not continue the files then).
std::vector<std::string> archiveSession(const ArtifactPaths& p, int k, const DirectoryListing* listing = nullptr);
// The clean shutdown of session k: `d`, the descriptor its records were
// written with, is saved as descArchive(k) beside the archive. A failure is
// reported on stderr only, as the archive's renames are.
void archiveDescriptor(const ArtifactPaths& p, const Descriptor& d, int k);

// The ROTATION counter file (book rotation.md). The session number it holds:
// 0 when there is no file; a file that is empty, unreadable or holds anything
// but a number from 0 to kMaxRotation (digits, blanks around them) is a
// StorageError naming the file.
constexpr int kMaxRotation = 999999999;
int readRotationCounter(const std::string& path);
// Writes n: a temp file beside the counter, fsync, rename over it (a failure
// of any of these is a StorageError naming the file), then an fsync of the
// directory (its failure is reported on stderr only).
void writeRotationCounter(const std::string& path, int n);

// The dump file a RULE's trigger number `k` (0, 1, ...) writes in `dir`:
// `<id>_<rule>_dump.tmp` first; with RETENTION n > 0 the later ones cycle
// through `<id>_<rule>_dump_0.tmp` .. `_dump_<n-1>.tmp`.
std::string ruleDumpPath(const std::string& dir, const std::string& id, const std::string& rule, int k, int retention);

// The descriptor of a query's artifacts: its schema's data fields, then for a
// declaration REF and TYPE (TEXTSOURCE or DEVICE), for a computed stream
// RETENTION, RETMEMORY and TYPE as its clauses say. The store opens with
// `profile().value_or("DEFAULT")`.
Descriptor descriptorFor(const ir::Query& q);
// The data fields alone.
Descriptor descriptorFor(const std::vector<ir::Field>& schema);
// The other way: the data fields as a schema (a declared source's layout).
std::vector<ir::Field> schemaOf(const Descriptor& d);

// A declared stream's descriptor: written when missing; an existing one must be
// compatible (DescError "storage: descriptor schema mismatch ...") and is
// rewritten when the source file or its kind changed.
void adoptDeclaredDescriptor(const ArtifactPaths& p, const Descriptor& d);

// The data store and its NULL index, opened together; the index is cut back
// (padded) to the data's whole records. Data first, index never ahead.
struct FamilyStores {
  std::unique_ptr<Store> store;
  std::unique_ptr<MetaIndex> meta;

  void append(const uint8_t* rec, const std::vector<uint8_t>& bitmap);
  // Writes the buffered records, then the index entries covering them.
  void flush();
};
FamilyStores openFamily(const ArtifactPaths& p, const Descriptor& d, const std::string& profile, int recordSize);
// A run's computed stream: with `fresh` the whole family is removed first; the
// descriptor is written, then store and index are opened with d's profile.
// `listing` (optional) is the storage directory as the run's set-up found it.
FamilyStores startFamily(const ArtifactPaths& p, const Descriptor& d, int recordSize, bool fresh,
                         const DirectoryListing* listing = nullptr);
// A resumed run's computed stream: its files as its checkpoint counts them,
// the store cut back to `storeRecords` (a memory store is restored from the
// checkpoint instead) and the index to `indexRecords` (a VOLATILE stream has
// an index and no data). Throws StorageError when the files hold fewer.
FamilyStores resumeFamily(const ArtifactPaths& p, const Descriptor& d, int recordSize, uint64_t storeRecords,
                          uint64_t indexRecords);

}  // namespace storage
