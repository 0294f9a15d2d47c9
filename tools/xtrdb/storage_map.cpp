// xtrdb -s base: the storage map of one stream's artifact family, drawn as a box.
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common.hpp"
#include "storage/artifacts.hpp"
#include "storage/store.hpp"

namespace xtrdb {

namespace {

namespace fs = std::filesystem;
using storage::Descriptor;
using storage::MetaFileEntry;

constexpr int kInner = 60;  // text width inside the box (64 columns in all)

// ---------------------------------------------------------------- drawing
std::string repeat(const char* glyph, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += glyph;
  return s;
}

std::string fit(const std::string& s, int w) {
  if (w <= 0) return "";
  if (int(s.size()) <= w) return s + std::string(size_t(w) - s.size(), ' ');
  if (w <= 3) return s.substr(0, size_t(w));
  return s.substr(0, size_t(w - 3)) + "...";
}

void hline(std::string& out, const char* l, const char* r) { out += l + repeat("─", kInner + 2) + r + "\n"; }

void row(std::string& out, const std::string& s) {
  std::string t = s.substr(0, kInner);
  out += "│ " + t + std::string(size_t(kInner) - t.size(), ' ') + " │\n";
}

void value(std::string& out, const std::string& left, const std::string& right) {
  const int leftMax = std::max(0, kInner - int(right.size()) - 1);
  std::string l = fit(left, leftMax);
  const int gap = std::max(1, kInner - int(l.size()) - int(right.size()));
  out += "│ " + l + std::string(size_t(gap), ' ') + right + " │\n";
}

void size(std::string& out, const std::string& tag, const std::string& name, uintmax_t bytes) {
  value(out, tag + name, std::to_string(bytes) + " B");
}

void maprow(std::string& out, const std::string& a, const std::string& b, const std::string& c) {
  out += "│ " + fit(a, 10) + " │ " + fit(b, 13) + " │ " + fit(c, 31) + " │\n";
}

void maphline(std::string& out, const char* l, const char* j, const char* r) {
  out += l + repeat("─", 12) + j + repeat("─", 15) + j + repeat("─", 33) + r + "\n";
}

// ---------------------------------------------------------------- what is on disk
uintmax_t fileBytes(const std::string& p, bool* exists = nullptr) {
  std::error_code ec;
  bool ok = fs::is_regular_file(p, ec);
  if (exists) *exists = ok;
  if (!ok) return 0;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

struct DataSegment {
  uint64_t index = 0;
  std::string name;
  uintmax_t bytes = 0, shadowBytes = 0;
  uint64_t records = 0, begin = 0, end = 0, updates = 0;
};

std::vector<DataSegment> dataSegments(const storage::ArtifactPaths& paths, uint64_t capacity, int R) {
  std::vector<DataSegment> out;
  for (auto& f : paths.segments()) {
    if (!f.regular) continue;
    DataSegment s;
    s.index = f.index;
    s.name = f.name;
    s.bytes = fileBytes(f.path);
    s.records = R > 0 ? s.bytes / uintmax_t(R) : 0;
    s.begin = s.index * capacity;
    s.end = s.begin + s.records;
    bool has = false;
    s.shadowBytes = fileBytes(storage::ArtifactPaths::shadowOf(f.path), &has);
    s.updates = has && R > 0 ? s.shadowBytes / uintmax_t(storage::shadowEntrySize(R)) : 0;
    out.push_back(std::move(s));
  }
  return out;
}

// The family as found: sizes, records and the `.meta` entries.
struct Family {
  storage::ArtifactPaths paths;
  Descriptor desc;
  uintmax_t descSize = 0;
  int R = 0, capacity = 0, segments = 0;
  bool segmented = false;
  std::vector<size_t> dataIdx;  // descriptor entries that are data fields
  std::vector<DataSegment> segs;
  bool hasDataFile = false, hasMeta = false, hasData = false, hasShadow = false;
  uintmax_t currentBytes = 0, metaBytes = 0, segBytes = 0, dataBytes = 0, shadowBytes = 0;
  uint64_t currentRecords = 0, segRecords = 0, dataRecords = 0, updates = 0, metaRecords = 0;
  std::vector<MetaFileEntry> entries;

  explicit Family(const std::string& base) : paths(storage::ArtifactPaths::atBase(base)) {}
};

void scanData(Family& f) {
  const int R = f.R;
  f.segs = f.segmented ? dataSegments(f.paths, uint64_t(f.capacity), R) : std::vector<DataSegment>{};
  bool hasRootShadow = false;
  f.currentBytes = fileBytes(f.paths.data(), &f.hasDataFile);
  f.metaBytes = fileBytes(f.paths.meta(), &f.hasMeta);
  const uintmax_t rootShadowBytes = fileBytes(f.paths.shadow(), &hasRootShadow);
  f.currentRecords = R > 0 ? f.currentBytes / uintmax_t(R) : 0;
  uintmax_t segShadowBytes = 0;
  uint64_t segUpdates = 0;
  for (auto& s : f.segs) {
    f.segBytes += s.bytes;
    f.segRecords += s.records;
    segShadowBytes += s.shadowBytes;
    segUpdates += s.updates;
  }
  f.dataBytes = f.segBytes + f.currentBytes;
  f.dataRecords = f.segRecords + f.currentRecords;
  f.hasData = f.hasDataFile;
  f.shadowBytes = rootShadowBytes;
  f.updates = hasRootShadow && R > 0 ? rootShadowBytes / uintmax_t(storage::shadowEntrySize(R)) : 0;
  f.hasShadow = hasRootShadow;
  if (f.segmented) {
    f.hasData = f.hasDataFile || !f.segs.empty();
    f.shadowBytes += segShadowBytes;
    f.updates += segUpdates;
    f.hasShadow = hasRootShadow || segShadowBytes > 0;
  }
  if (f.hasMeta) f.entries = storage::readMetaFile(f.paths.meta(), int(f.desc.entries.size())).entries;
  for (auto& e : f.entries)
    if (!e.gap) f.metaRecords += e.count;
}

// ---------------------------------------------------------------- the map rows
// '=' no NULL, '~' all data fields NULL, '-' some; data fields only.
char fillOf(const MetaFileEntry& e, const std::vector<size_t>& dataIdx) {
  if (e.gap) return 'X';
  bool any = false, all = true;
  for (size_t i : dataIdx) {
    if (e.isNull(i)) any = true;
    else all = false;
  }
  if (!any || dataIdx.empty()) return '=';
  return all ? '~' : '-';
}

std::string label(const MetaFileEntry& e, const std::vector<size_t>& dataIdx) {
  if (e.gap) return "[XXXX] " + std::to_string(e.count) + " records, gap";
  char f = fillOf(e, dataIdx);
  const char* state = f == '=' ? "no nulls" : f == '~' ? "all nulls" : "some nulls";
  return "[" + std::string(4, f) + "] " + std::to_string(e.count) + " records, " + state;
}

std::string bar(const std::vector<MetaFileEntry>& entries, const std::vector<size_t>& dataIdx, int width) {
  // 128-bit: the counts of a damaged .meta may add up past 2^64 (a wrapped
  // total gave widths of 2^31 columns, gigabytes of bar).
  unsigned __int128 total = 0;
  for (auto& e : entries) total += e.count;
  if (total == 0) return "";
  std::vector<int> w(entries.size());
  int64_t used = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    w[i] = std::max<int>(3, int((unsigned __int128)entries[i].count * unsigned(width) / total));
    used += w[i];
  }
  if (used < width) *std::max_element(w.begin(), w.end()) += int(width - used);
  std::string out;
  for (size_t i = 0; i < entries.size(); ++i) {
    const int inner = w[i] - 2;
    const char fill = fillOf(entries[i], dataIdx);
    const std::string lbl =
        entries[i].gap ? "gap:" + std::to_string(entries[i].count) : std::to_string(entries[i].count);
    out += '[';
    if (int(lbl.size()) >= inner) {
      out += lbl.substr(0, size_t(std::max(inner, 0)));
    } else {
      const int l = (inner - int(lbl.size())) / 2;
      out += std::string(size_t(l), fill) + lbl + std::string(size_t(inner - int(lbl.size()) - l), fill);
    }
    out += ']';
  }
  return out;
}

// The three map columns: [shadow] [binary data] [meta index].
struct Columns {
  std::vector<std::string> c1, c2, c3;
  void add(std::string a, std::string b, std::string c) {
    c1.push_back(std::move(a));
    c2.push_back(std::move(b));
    c3.push_back(std::move(c));
  }
};

void segmentedColumns(const Family& f, Columns& c, const std::string& noEntries) {
  for (auto& s : f.segs) {
    const std::string k = std::string("s").append(std::to_string(s.index));
    c.add(s.updates > 0 ? k + " " + std::to_string(s.updates) + "u" : k,
          k + " " + std::to_string(s.begin) + "-" + std::to_string(s.end), "");
  }
  if (!f.entries.empty()) {
    for (size_t i = 0; i < f.entries.size(); ++i) {
      if (i < c.c3.size()) c.c3[i] = label(f.entries[i], f.dataIdx);
      else c.add("", "", label(f.entries[i], f.dataIdx));
    }
  } else if (c.c3.empty()) {
    c.add("", "", noEntries);
  }
}

Columns columns(const Family& f) {
  Columns c;
  const std::string noEntries = f.hasMeta ? "meta file is empty" : "meta missing";
  if (f.segmented) {
    segmentedColumns(f, c, noEntries);
  } else if (!f.entries.empty()) {
    uint64_t at = 0;
    for (auto& e : f.entries) {
      std::string range;
      if (!e.gap) {
        range = std::to_string(at) + "-" + std::to_string(at + e.count);
        at += e.count;
      }
      c.add("", range, label(e, f.dataIdx));
    }
  } else {
    c.add("", f.hasData && f.dataRecords > 0 ? "0-" + std::to_string(f.dataRecords) : "", noEntries);
  }
  if (f.hasShadow && f.updates > 0) {
    if (c.c1.size() == 1) {
      c.c1[0] = std::to_string(f.updates) + " updates";
    } else {
      const uint64_t top = f.updates / 2, bottom = f.updates - top;
      if (top > 0) c.c1.front() = std::to_string(top) + " updates";
      if (bottom > 0) c.c1.back() = std::to_string(bottom) + " updates";
    }
  }
  return c;
}

// ---------------------------------------------------------------- the sections
void mapSection(std::string& out, const Family& f) {
  const Columns c = columns(f);
  hline(out, "┌", "┐");
  row(out, "  Storage map: " + f.paths.data());
  hline(out, "├", "┤");
  maprow(out, "[shadow]", "[binary data]", "[meta index]");
  maphline(out, "├", "┼", "┤");
  for (size_t i = 0; i < c.c3.size(); ++i) maprow(out, c.c1[i], c.c2[i], c.c3[i]);
  maphline(out, "├", "┴", "┤");
}

void descriptorSection(std::string& out, const Family& f) {
  size(out, "  DESCRIPTOR  ", f.paths.desc(), f.descSize);
  for (auto& e : f.desc.entries) {
    if (!e.isData()) continue;
    std::string left = std::string("  ") + storage::descTypeName(e.type) + "  " + e.name;
    if (e.count > 1) left += "[" + std::to_string(e.count) + "]";
    value(out, left, std::to_string(e.byteSize()) + " B");
  }
  value(out, "  Record size:", std::to_string(f.R) + " B");
  hline(out, "├", "┤");
}

void segmentedDataSection(std::string& out, const Family& f) {
  const std::string& dataFile = f.paths.data();
  const std::string rec = std::to_string(f.dataRecords);
  size(out, "  DATA TOTAL  ",
       "rec=" + rec + " src=" + std::to_string(f.currentRecords) + " seg=" + std::to_string(f.segRecords), f.dataBytes);
  row(out, "  Records: " + rec);
  row(out, "  Source: " + dataFile + "   Segments: " + f.paths.segmentPattern());
  row(out, "  Segmented data (RETENTION): " + std::to_string(f.segs.size()));
  row(out, "  Policy: segments=" + std::to_string(f.segments) + " capacity=" + std::to_string(f.capacity));
  if (f.segments > 0 && f.capacity > 0) {
    const uint64_t cap = uint64_t(f.segments) * uint64_t(f.capacity);
    row(out, "  Retention cap records: " + std::to_string(cap));
    row(out, "  Retention cap bytes: " + std::to_string(cap * uint64_t(f.R)));
  } else {
    row(out, "  Retention cap: unbounded");
  }
  row(out, "  Total records: " + rec);
  row(out, "    current=" + std::to_string(f.currentRecords) + "  segments=" + std::to_string(f.segRecords));
  row(out, "  Total bytes: " + std::to_string(f.dataBytes));
  row(out, "    current=" + std::to_string(f.currentBytes) + "  segments=" + std::to_string(f.segBytes));
  for (auto& s : f.segs)
    row(out, "    [" + std::to_string(s.index) + "] " + s.name + " rec:" + std::to_string(s.records) +
                 " range:" + std::to_string(s.begin) + "-" + std::to_string(s.end));
}

void dataSection(std::string& out, const Family& f) {
  if (f.segmented) {
    segmentedDataSection(out, f);
  } else {
    const std::string& dataFile = f.paths.data();
    const bool has = f.hasDataFile;
    size(out, "  DATA        ", has ? dataFile : dataFile + " (missing)", has ? f.dataBytes : 0);
    row(out, "  Records: " + std::to_string(has ? f.dataRecords : 0));
  }
  hline(out, "├", "┤");
}

void metaSection(std::string& out, const Family& f) {
  const std::string metaFile = f.paths.meta();
  size(out, "  META        ", f.hasMeta ? metaFile : metaFile + " (missing)", f.metaBytes);
  if (f.hasMeta) {
    row(out, "  Segments: " + std::to_string(f.entries.size()) + "   Records: " + std::to_string(f.metaRecords));
    if (!f.entries.empty()) {
      row(out, "  " + bar(f.entries, f.dataIdx, kInner - 2));
      row(out, "  Legend: [====] data  [----] partial null");
      row(out, "          [~~~~] nullfill  [XXXX] gap");
    }
  }
  hline(out, "├", "┤");
}

void shadowAndRotatedSection(std::string& out, const Family& f) {
  const std::string shadowFile = f.paths.shadow();
  size(out, "  SHADOW      ", f.hasShadow ? shadowFile : shadowFile + " (missing)", f.shadowBytes);
  if (f.hasShadow) row(out, "  Updates: " + std::to_string(f.updates));
  const auto rotated = f.paths.rotated();
  if (!rotated.empty()) {
    hline(out, "├", "┤");
    row(out, "  ROTATED FILES");
    std::optional<uint64_t> last;
    for (auto& r : rotated) {
      std::string lbl = !last || *last != r.counter ? (std::string("[") += std::to_string(r.counter)) += "] " : "    ";
      lbl += r.name;
      last = r.counter;
      value(out, "  " + lbl, std::to_string(fileBytes(r.path)) + " B");
    }
  }
  hline(out, "└", "┘");
}

}  // namespace

int showStorageMap(const std::string& base) {
  Family f(base);
  bool haveDesc = false;
  f.descSize = fileBytes(f.paths.desc(), &haveDesc);
  if (!haveDesc) {
    fmt::print(stderr, "Descriptor not found: {}\n", f.paths.desc());
    return kExitOk;
  }
  f.desc = Descriptor::load(f.paths.desc());  // DescError: reported by main
  f.R = f.desc.recordSize();
  std::tie(f.capacity, f.segments) = f.desc.retention();
  f.segmented = f.capacity != 0 || f.segments != 0;
  for (size_t i = 0; i < f.desc.entries.size(); ++i)
    if (f.desc.entries[i].isData()) f.dataIdx.push_back(i);
  scanData(f);
  std::string out;
  mapSection(out, f);
  descriptorSection(out, f);
  dataSection(out, f);
  metaSection(out, f);
  shadowAndRotatedSection(out, f);
  fmt::print("{}", out);
  return kExitOk;
}

}  // namespace xtrdb
