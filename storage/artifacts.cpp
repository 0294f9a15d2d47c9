// The artifact family of one stream: descriptor, file names, opening, removal, rotation.
#include "artifacts.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "file_io.hpp"

namespace storage {

namespace fs = std::filesystem;

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper((unsigned char)c));
  return s;
}

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The directory holding `file` ("." for a bare name).
fs::path dirOf(const std::string& file) {
  fs::path p(file);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

std::string parentOf(const std::string& file) { return fs::path(file).parent_path().string(); }
std::string fileName(const std::string& file) { return fs::path(file).filename().string(); }

DescEntry configEntry(DescEntry::Kind kind, const std::string& name, int capacity = 0, int segments = 0) {
  DescEntry e;
  e.kind = kind;
  e.name = name;
  e.capacity = capacity;
  e.segments = segments;
  return e;
}

}  // namespace

// ================================================================ names
ArtifactPaths::ArtifactPaths(std::string data, std::string desc)
    : data_(std::move(data)), desc_(std::move(desc)), dir_(parentOf(data_)), stem_(fileName(data_)) {}

ArtifactPaths ArtifactPaths::forQuery(const std::string& dir, const ir::Query& q) {
  if (q.isDeclaration()) return forSource(dir, q.id, q.filename);
  return forStream(dir, q.id, q.filename.empty() ? q.id : q.filename);
}

ArtifactPaths ArtifactPaths::forStream(const std::string& dir, const std::string& id, const std::string& dataName) {
  ArtifactPaths p(dir + dataName, dir + id + ".desc");
  p.dir_ = dir;
  p.stem_ = dataName;
  return p;
}

ArtifactPaths ArtifactPaths::forSource(const std::string& dir, const std::string& id, const std::string& source) {
  return ArtifactPaths(source, dir + id + ".desc");
}

std::string ArtifactPaths::inDir(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : (fs::path(dir) / name).string();
}

ArtifactPaths ArtifactPaths::forFile(const std::string& dir, const std::string& name) {
  const size_t old = name.find(".old");
  ArtifactPaths p(inDir(dir, name), inDir(dir, (old == std::string::npos ? name : name.substr(0, old)) + ".desc"));
  // `X.old<N>`: the archive of session N (its last `.old`, digits to the end).
  const size_t last = name.rfind(".old");
  if (last != std::string::npos && last > 0 && allDigits(name.substr(last + 4))) {
    p.archive_ = name.substr(last);
    // The session's own descriptor, when it kept one: the layout may have changed since.
    std::error_code ec;
    if (fs::is_regular_file(p.archived(".desc"), ec)) p.desc_ = p.archived(".desc");
  }
  return p;
}

ArtifactPaths ArtifactPaths::atBase(const std::string& base) { return ArtifactPaths(base, base + ".desc"); }

// ================================================================ directory scans
namespace {
// "out", "out/" and "./out" are one directory.
std::string normalDir(const fs::path& dir) {
  std::string s = (dir.empty() ? fs::path(".") : dir).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// Calls fn(name, path, regular) for each entry of `dir` whose name starts with
// `prefix`: from the listing when it is of `dir`, else from the directory.
template <class Fn>
void forEachNamed(const fs::path& dir, const std::string& prefix, const DirectoryListing* listing, Fn fn) {
  if (listing && listing->lists(dir.string())) {
    for (auto* e : listing->withPrefix(prefix)) fn(e->name, (dir / e->name).string(), e->regular);
    return;
  }
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) != 0) continue;
    std::error_code tc;
    fn(n, e.path().string(), e.is_regular_file(tc));
  }
}
}  // namespace

DirectoryListing::DirectoryListing(const std::string& dir) : dir_(normalDir(dir)) {
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir_, ec)) {
    std::error_code tc;
    entries_.push_back({e.path().filename().string(), e.is_regular_file(tc)});
  }
  std::sort(entries_.begin(), entries_.end(), [](auto& a, auto& b) { return a.name < b.name; });
}

bool DirectoryListing::lists(const std::string& dir) const { return normalDir(dir) == dir_; }

std::vector<const DirectoryListing::Entry*> DirectoryListing::withPrefix(const std::string& prefix) const {
  std::vector<const Entry*> out;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), prefix, [](auto& e, auto& p) { return e.name < p; });
  for (; it != entries_.end() && it->name.compare(0, prefix.size(), prefix) == 0; ++it) out.push_back(&*it);
  return out;
}

std::vector<SegmentFile> ArtifactPaths::segments(const DirectoryListing* listing) const {
  std::vector<SegmentFile> out;
  const std::string prefix = fileName(data_) + "_segment_";
  forEachNamed(dirOf(data_), prefix, listing, [&](const std::string& n, const std::string& path, bool regular) {
    if (allDigits(n.substr(prefix.size()))) out.push_back({std::stoull(n.substr(prefix.size())), n, path, regular});
  });
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.index < b.index; });
  return out;
}

std::vector<RotatedFile> ArtifactPaths::rotated() const {
  std::vector<RotatedFile> out;
  const std::string stem = fileName(data_);
  forEachNamed(dirOf(data_), stem, nullptr, [&](const std::string& n, const std::string& path, bool regular) {
    size_t at = n.find(".old", stem.size());
    if (!regular || at == std::string::npos || !allDigits(n.substr(at + 4))) return;
    out.push_back({std::stoull(n.substr(at + 4)), n.substr(stem.size(), at - stem.size()), n, path});
  });
  std::sort(out.begin(), out.end(),
            [](auto& a, auto& b) { return a.counter != b.counter ? a.counter > b.counter : a.ext < b.ext; });
  return out;
}

int ArtifactPaths::nextRotation(int from, const DirectoryListing* listing) const {
  const std::string& data = stem_;
  forEachNamed(fs::path(dir_), data, listing, [&](const std::string& n, const std::string&, bool) {
    auto at = n.rfind(".old");
    if (at == std::string::npos) return;
    if (n.size() <= data.size() || (n[data.size()] != '.' && n[data.size()] != '_')) return;
    std::string k = n.substr(at + 4);
    if (k.empty() || k.find_first_not_of("0123456789") != std::string::npos || k.size() > 9) return;
    from = std::max(from, std::stoi(k) + 1);
  });
  return from;
}

void ArtifactPaths::remove(unsigned which, const DirectoryListing* listing) const {
  const std::pair<unsigned, std::string> files[] = {
      {kData, data_}, {kDesc, desc_}, {kMeta, meta()}, {kShadow, shadow()}, {kMetaShadow, metaShadow()}};
  for (auto& [bit, f] : files)
    if ((which & bit) && !f.empty()) std::remove(f.c_str());
  if (!(which & kSegments)) return;
  forEachNamed(dirOf(data_), fileName(data_) + "_segment_", listing,
               [&](const std::string&, const std::string& path, bool) {
                 std::error_code ec;
                 fs::remove(path, ec);
               });
}

// ================================================================ archives
std::optional<std::string> changedLayout(const ArtifactPaths& p, const Descriptor& d, const DirectoryListing* listing) {
  std::error_code ec;
  bool present = !p.segments(listing).empty();
  for (const std::string& f : {p.data(), p.meta(), p.shadow(), p.metaShadow()}) present = present || fs::exists(f, ec);
  if (!present) return std::nullopt;
  if (!fs::exists(p.desc(), ec)) return "no descriptor";
  try {
    const Descriptor stored = Descriptor::load(p.desc());
    if (stored.text() == d.text()) return std::nullopt;
    return stored.textLine();
  } catch (const DescError&) {
    return "an unreadable descriptor";
  }
}

std::vector<std::string> archiveSession(const ArtifactPaths& p, int k, const DirectoryListing* listing) {
  std::vector<std::string> names;
  auto fail = [&](const std::string& what, int err) {
    return StorageError("storage: cannot archive " + what + ": " + strerror(err) +
                        " (files of another layout are never continued)");
  };
  // The descriptor first: whatever of the session is archived reads with it.
  std::error_code ec;
  if (fs::exists(p.desc(), ec)) {
    const std::string to = p.descArchive(k), tmp = ArtifactPaths::tmpOf(to);
    if (!fs::copy_file(p.desc(), tmp, fs::copy_options::overwrite_existing, ec)) {
      std::remove(tmp.c_str());
      throw fail(p.desc() + " as " + to, ec.value());
    }
    if (std::rename(tmp.c_str(), to.c_str()) != 0) {
      const int err = errno;
      std::remove(tmp.c_str());
      throw fail(p.desc() + " as " + to, err);
    }
    names.push_back(fileName(to));
  }
  auto move = [&](const std::string& from) {
    const std::string to = ArtifactPaths::rotatedOf(from, k);
    if (std::rename(from.c_str(), to.c_str()) == 0) names.push_back(fileName(to));
    else if (errno != ENOENT) throw fail(from + " as " + to, errno);
  };
  for (auto& seg : p.segments(listing)) {
    move(seg.path);
    move(ArtifactPaths::shadowOf(seg.path));
  }
  // The data last: while it is there, a start that finds it archives the rest again.
  for (const std::string& f : {p.metaShadow(), p.meta(), p.shadow(), p.data()}) move(f);
  if (int err = io::syncDirOf(p.data()))
    io::reportError("rotation: cannot fsync the directory of " + p.data() + ": " + strerror(err));
  return names;
}

void archiveDescriptor(const ArtifactPaths& p, const Descriptor& d, int k) {
  try {
    d.save(p.descArchive(k));
  } catch (const DescError& e) {
    io::reportError(std::string("rotation: ") + e.what());
  }
}

// ================================================================ rotation counter
int readRotationCounter(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return 0;  // first use
  auto bad = [&](const std::string& why) {
    return StorageError("rotation counter file '" + path + "' " + why +
                        "; it must hold the number of the next session (0 to " + std::to_string(kMaxRotation) +
                        "): fix or remove it");
  };
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) throw bad(std::string("cannot be read: ") + strerror(errno));
  std::string text;
  char buf[64];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0 && text.size() < 64) text.append(buf, n);
  const bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) throw bad("cannot be read");
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  size_t b = 0, e = text.size();
  while (b < e && blank(text[b])) ++b;
  while (e > b && blank(text[e - 1])) --e;
  const std::string digits = text.substr(b, e - b);
  if (digits.empty()) throw bad("is empty");
  std::string shown = digits.size() > 20 ? digits.substr(0, 20) + "..." : digits;
  if (!allDigits(digits)) throw bad("holds '" + shown + "', not a non-negative integer");
  const size_t lead = std::min(digits.find_first_not_of('0'), digits.size() - 1);
  if (digits.size() - lead > 9) throw bad("holds " + shown + ", above " + std::to_string(kMaxRotation));
  return std::stoi(digits.substr(lead));
}

void writeRotationCounter(const std::string& path, int n) {
  const std::string tmp = ArtifactPaths::tmpOf(path), value = std::to_string(n);
  auto fail = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    return StorageError("rotation counter file '" + path + "': " + what + ": " + strerror(err));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw fail("cannot write " + tmp, errno);
  size_t done = 0;
  int err = io::pwriteAll(fd, value.data(), value.size(), 0, done);
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (err) throw fail("cannot write " + tmp, err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("cannot replace it with " + tmp, errno);
  if (int e = io::syncDirOf(path))
    io::reportError("rotation: cannot fsync the directory of " + path + ": " + strerror(e));
}

std::string ruleDumpPath(const std::string& dir, const std::string& id, const std::string& rule, int k, int retention) {
  const std::string base = dir + id + "_" + rule + "_dump";
  if (retention <= 0 || k == 0) return base + ".tmp";
  return base + "_" + std::to_string((k - 1) % retention) + ".tmp";
}

// ================================================================ descriptor
Descriptor descriptorFor(const std::vector<ir::Field>& schema) {
  Descriptor d;
  for (auto& f : schema) {
    DescEntry e;
    e.type = f.type;
    e.name = f.name;
    e.count = f.type == ir::Type::STRING ? f.rlen * f.rarray : f.rarray;
    d.entries.push_back(e);
  }
  return d;
}

std::vector<ir::Field> schemaOf(const Descriptor& d) {
  std::vector<ir::Field> schema;
  for (auto& e : d.entries) {
    if (!e.isData()) continue;
    ir::Field f;
    f.name = e.name;
    f.type = e.type;
    f.rlen = e.type == ir::Type::STRING ? e.count : ir::typeSize(e.type);
    f.rarray = e.type == ir::Type::STRING ? 1 : e.count;
    schema.push_back(f);
  }
  return schema;
}

Descriptor descriptorFor(const ir::Query& q) {
  using K = DescEntry::Kind;
  Descriptor d = descriptorFor(q.schema);
  if (q.isDeclaration()) {
    d.entries.push_back(configEntry(K::REF, q.filename));
    d.entries.push_back(configEntry(K::TYPE, q.sourceKind == ir::SourceKind::TEXTSOURCE ? "TEXTSOURCE" : "DEVICE"));
    return d;
  }
  if (q.retentionCapacity || q.retentionSegments)
    d.entries.push_back(configEntry(K::RETENTION, "", q.retentionCapacity, q.retentionSegments));
  const std::string profile = upper(q.storageProfile);
  if (q.policyCapacity != 0) {
    d.entries.push_back(configEntry(K::RETMEMORY, "", q.policyCapacity));
    // An explicit STORAGE clause wins over the policy's profile.
    const bool clause = q.storageProfile != "DEFAULT" && !q.isVolatile;
    d.entries.push_back(configEntry(K::TYPE, clause ? profile : upper(q.policyProfile)));
  } else if (profile != "DEFAULT") {
    d.entries.push_back(configEntry(K::TYPE, profile));
  }
  return d;
}

void adoptDeclaredDescriptor(const ArtifactPaths& p, const Descriptor& d) {
  std::error_code ec;
  if (!fs::exists(p.desc(), ec)) {
    d.save(p.desc());
    return;
  }
  auto stored = Descriptor::load(p.desc());
  if (!d.compatibleWith(stored))
    throw DescError("storage: descriptor schema mismatch in " + p.desc() + " — remove data files and restart");
  // The source may have moved: the descriptor names the file this run reads.
  if (stored.ref() != d.ref() || stored.profile() != d.profile()) d.save(p.desc());
}

// ================================================================ stores
void FamilyStores::append(const uint8_t* rec, const std::vector<uint8_t>& bitmap) {
  store->append(rec);
  meta->append(bitmap);
}

void FamilyStores::flush() {
  store->flush();
  meta->flush(store->durable());
}

FamilyStores openFamily(const ArtifactPaths& p, const Descriptor& d, const std::string& profile, int recordSize) {
  FamilyStores f;
  // An archive keeps the update log of its session.
  f.store = openStore(profile, p.data(), recordSize, d.retention(), d.retMemory(), {p.shadow(), p.isArchive()});
  f.meta = std::make_unique<MetaIndex>(p.meta(), int(d.entries.size()), f.store->shadowed(), true, p.metaShadow());
  // A crashed writer's index never runs ahead of its data (nor stays behind it).
  f.meta->align(f.store->count());
  return f;
}

FamilyStores resumeFamily(const ArtifactPaths& p, const Descriptor& d, int recordSize, uint64_t storeRecords,
                          uint64_t indexRecords) {
  // The checkpoint's plan wrote it. Another one means the files were written
  // since by another plan (an xqry --reset): cutting them back as this
  // layout's records would corrupt them.
  std::ifstream was(p.desc(), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(was)), std::istreambuf_iterator<char>());
  if (was.is_open() && text != d.text())
    throw StorageError("storage: " + p.desc() + " describes another layout than the checkpoint's plan (" +
                       d.textLine() +
                       "): the files were written by another plan since, and the checkpoint cannot be used with them");
  if (!was.is_open()) d.save(p.desc());
  FamilyStores f;
  f.store = openStore(d.profile().value_or("DEFAULT"), p.data(), recordSize, d.retention(), d.retMemory(),
                      {p.shadow(), false}, true);
  f.meta = std::make_unique<MetaIndex>(p.meta(), int(d.entries.size()), f.store->shadowed(), true, p.metaShadow());
  if (!f.store->inMemory()) f.store->cutBack(storeRecords);
  // The checkpoint was taken with the index on disk up to its count: fewer is a lost file, not a crash.
  if (f.meta->records() < indexRecords)
    throw StorageError("storage: " + p.meta() + " indexes " + std::to_string(f.meta->records()) +
                       " records, the checkpoint " + std::to_string(indexRecords));
  f.meta->align(indexRecords);
  return f;
}

FamilyStores startFamily(const ArtifactPaths& p, const Descriptor& d, int recordSize, bool fresh,
                         const DirectoryListing* listing) {
  if (fresh) p.remove(kAllArtifacts, listing);
  d.save(p.desc());
  return openFamily(p, d, d.profile().value_or("DEFAULT"), recordSize);
}

}  // namespace storage
