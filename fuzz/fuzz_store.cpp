// libFuzzer target: a stored stream as xtrdb and the engine open it — a
// `.desc` + `.meta` + data file triple (and optionally `.meta.shadow`).
//
// Input: DESC [%%META%% META] [%%DATA%% DATA] [%%MSHD%% META_SHADOW]
// (each marker starts its file, in any order; a file without its marker is
// absent). The parts are written into a private temporary directory as
// s.desc, s.meta, s (or s_segment_0 under RETENTION) and s.meta.shadow.
//
// Then, as xtrdb's `open s`: Descriptor::load, openStore of the profile,
// MetaIndex over s.meta, readMetaFile (the `meta`/`metaraw` listings), reads of
// records and NULL bitmaps (`read`, `list`), one `append` and one `write`;
// a declared source (TYPE TEXTSOURCE / DEVICE) is read through openSource.
// Finally the engine's restart path: the store is reopened and the index
// aligned to the data (MetaIndex::align), which must leave an index that
// counts exactly the data's records.
//
// A REF path in the descriptor is not followed (the files stay in the
// temporary directory). DescError, StorageError and SourceError are the
// documented outcomes of bad files; anything else aborts.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "ir/layout.hpp"
#include "storage/artifacts.hpp"
#include "storage/descriptor.hpp"
#include "storage/source.hpp"
#include "storage/store.hpp"

namespace {

constexpr const char* kName = "fuzz_store";
constexpr uint64_t kReads = 64;  // records read from each end

struct Parts {
  std::string_view desc;
  std::optional<std::string_view> meta, data, metaShadow;
};

Parts split(std::string_view in) {
  static const std::string_view marks[3] = {"%%META%%", "%%DATA%%", "%%MSHD%%"};
  Parts p;
  std::optional<std::string_view>* slot[3] = {&p.meta, &p.data, &p.metaShadow};
  size_t at = 0;
  int cur = -1;
  for (;;) {
    size_t best = std::string_view::npos;
    int which = -1;
    for (int k = 0; k < 3; ++k) {
      size_t f = in.find(marks[k], at);
      if (f < best) best = f, which = k;
    }
    std::string_view piece = in.substr(at, best == std::string_view::npos ? std::string_view::npos : best - at);
    if (cur < 0) p.desc = piece;
    else *slot[cur] = piece;
    if (which < 0) break;
    cur = which;
    at = best + marks[which].size();
  }
  return p;
}

std::vector<uint8_t> bitmapOf(const storage::Descriptor& d, size_t nullField) {
  std::vector<uint8_t> bm((d.entries.size() + 7) / 8, 0);
  if (nullField < d.entries.size() && d.entries[nullField].isData())
    bm[nullField / 8] |= uint8_t(1u << (nullField % 8));
  return bm;
}

// xtrdb's declared-source path: the layout of the data fields, openSource.
void readDeclared(const storage::Descriptor& d, const std::string& profile, const std::string& path) {
  const ir::Layout layout = ir::Layout::of(storage::schemaOf(d));
  fuzz::check(layout.recordSize == d.recordSize(), kName, "layout and descriptor disagree on the record size");
  auto src = storage::openSource(profile == "TEXTSOURCE" ? storage::SourceFormat::TEXT : storage::SourceFormat::BINARY,
                                 path, layout, storage::SourceOptions{});
  std::vector<uint8_t> rec(size_t(std::max(layout.recordSize, 1)));
  std::vector<uint8_t> nulls(std::max<size_t>(layout.elems.size(), 1));
  for (int i = 0; i < 16; ++i) {
    src->next(rec.data(), nulls.data());
    for (size_t e = 0; e < layout.elems.size(); ++e) fuzz::check(nulls[e] <= 1, kName, "a NULL flag other than 0/1");
  }
}

void readRecords(storage::Store& store, storage::MetaIndex& meta, size_t rec) {
  std::vector<uint8_t> buf(rec);
  const uint64_t n = store.count();
  auto one = [&](uint64_t i) {
    store.read(i, buf.data());
    fuzz::check(meta.bitmapAt(i).size() == size_t(meta.bytes()), kName, "bitmapAt() of the wrong size");
  };
  for (uint64_t i = 0; i < n && i < kReads; ++i) one(i);
  for (uint64_t i = n > kReads ? n - kReads : 0; i < n; ++i) one(i);
  one(n);  // one past the end reads nothing
}

void run(const std::string_view in) {
  fuzz::TempDir& dir = fuzz::tempDir();
  dir.clear();
  const Parts parts = split(in);
  const std::string base = dir.file("s");
  fuzz::writeFile(base + ".desc", parts.desc);
  if (parts.meta) fuzz::writeFile(base + ".meta", *parts.meta);
  if (parts.metaShadow) fuzz::writeFile(base + ".meta.shadow", *parts.metaShadow);

  const storage::Descriptor d = storage::Descriptor::load(base + ".desc");
  const int R = d.recordSize();
  if (R == 0) return;  // xtrdb: "empty descriptor file"
  const std::string profile = d.profile().value_or("DEFAULT");
  const auto retention = d.retention();
  const bool segmented =
      (profile == "DEFAULT" || profile == "DIRECT") && (retention.first != 0 || retention.second != 0);
  const std::string dataFile = segmented ? base + "_segment_0" : base;
  if (parts.data) fuzz::writeFile(dataFile, *parts.data);

  if (profile == "TEXTSOURCE" || profile == "DEVICE") {
    readDeclared(d, profile, dataFile);
    return;
  }
  if (!storage::isWritableProfile(profile)) return;  // xtrdb: unsupported storage type
  const int bits = int(d.entries.size());

  {
    auto store = storage::openStore(profile, base, R, retention, d.retMemory());
    if (!segmented && profile != "MEMORY")
      fuzz::check(store->count() == (parts.data ? uint64_t(parts.data->size()) / uint64_t(R) : 0), kName,
                  "the store does not count the data file's whole records");
    storage::MetaIndex meta(base + ".meta", bits, store->shadowed());
    const storage::MetaFileView view = storage::readMetaFile(base + ".meta", bits);
    fuzz::check(view.exists && view.trailing == 0, kName, "the index keeps a partial entry after open");
    for (auto& e : view.entries)
      for (size_t b = 0; b < size_t(bits); ++b) e.isNull(b);
    readRecords(*store, meta, size_t(R));

    // `append`: one record, written through; `write N` of that record.
    std::vector<uint8_t> rec(size_t(R), 0x5a);
    store->append(rec.data());
    meta.append(bitmapOf(d, 0));
    store->flush();
    meta.flush(store->durable());
    const uint64_t last = store->count() - 1;
    store->update(last, rec.data());
    if (last < meta.records()) meta.update(last, bitmapOf(d, d.entries.size() - 1));
    readRecords(*store, meta, size_t(R));
    store->close(-1);
  }

  // The engine restarting over the same files: the index follows the data.
  auto store = storage::openStore(profile, base, R, retention, d.retMemory());
  storage::MetaIndex meta(base + ".meta", bits, store->shadowed());
  meta.align(store->count());
  fuzz::check(meta.records() == store->count(), kName, "align() left the index at another record count");
  const storage::MetaFileView view = storage::readMetaFile(base + ".meta", bits);
  uint64_t indexed = 0;
  for (auto& e : view.entries)
    if (!e.gap) fuzz::check(!__builtin_add_overflow(indexed, e.count, &indexed), kName, "index record count overflows");
  fuzz::check(indexed == store->count(), kName,
              "after align() the .meta file counts " + std::to_string(indexed) + " records, the data " +
                  std::to_string(store->count()));
  readRecords(*store, meta, size_t(R));
  store->close(-1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const storage::DescError& e) {
    fuzz::note(kName, "DescError", e.what());
  } catch (const storage::StorageError& e) {
    fuzz::note(kName, "StorageError", e.what());
  } catch (const storage::SourceError& e) {
    fuzz::note(kName, "SourceError", e.what());
  } catch (const std::exception& e) {
    fuzz::die(kName, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    fuzz::die(kName, "unexpected exception (not derived from std::exception)");
  }
  return 0;
}
