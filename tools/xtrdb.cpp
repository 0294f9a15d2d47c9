// xtrdb: inspect and edit the artifacts of one stream (.desc, data, .meta,
// shadow files) from a token-driven command loop, or draw the storage map
// of a stream with `-s base`. Specification: tools.md §3, storage.md.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/printf.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "build_config.h"
#include "ir/layout.hpp"
#include "storage/descriptor.hpp"
#include "storage/source.hpp"
#include "storage/store.hpp"
#include "vm/values.hpp"

namespace {

namespace fs = std::filesystem;
using storage::DescEntry;
using storage::Descriptor;

// A `FATAL:` error: printed by main, exit status 1.
struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string tmpPath(const std::string& name) {
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return (dir / name).string();
}

// Diagnostics that the reference only logs go to <tmp>/xtrdb.log.
void logLine(const std::string& msg) {
  static std::ofstream log(tmpPath("xtrdb.log"), std::ios::app);
  if (log) log << "xtrdb: " << msg << '\n' << std::flush;
}

std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper((unsigned char)c));
  return s;
}

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// `dir/name`, or `name` when no storage directory is set.
std::string joinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return (fs::path(dir) / name).string();
}

// The name an entry shows in `meta` and `getpos`: data field name, REF path,
// TYPE profile; empty for the other configuration entries.
std::string entryName(const DescEntry& e) {
  switch (e.kind) {
    case DescEntry::Kind::DATA:
    case DescEntry::Kind::REF:
    case DescEntry::Kind::TYPE: return e.name;
    default: return "";
  }
}

int elemSize(const DescEntry& e) { return e.type == ir::Type::STRING ? e.count : ir::typeSize(e.type); }
int elemCount(const DescEntry& e) { return e.type == ir::Type::STRING ? 1 : e.count; }

// ================================================================ storage map (-s)
namespace map {

constexpr int kInner = 60;  // text width inside the box (64 columns in all)

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

struct Rotated {
  uint64_t counter = 0;
  std::string ext, name;
  uintmax_t bytes = 0;
};

fs::path dirOf(const std::string& base) {
  fs::path p(base);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<DataSegment> dataSegments(const std::string& base, uint64_t capacity, int R) {
  std::vector<DataSegment> out;
  const std::string prefix = fs::path(base).filename().string() + "_segment_";
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dirOf(base), ec)) {
    if (!e.is_regular_file(ec)) continue;
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) != 0 || !allDigits(n.substr(prefix.size()))) continue;
    DataSegment s;
    s.index = std::stoull(n.substr(prefix.size()));
    s.name = n;
    s.bytes = fileBytes(e.path().string());
    s.records = R > 0 ? s.bytes / uintmax_t(R) : 0;
    s.begin = s.index * capacity;
    s.end = s.begin + s.records;
    bool has = false;
    s.shadowBytes = fileBytes(e.path().string() + ".shadow", &has);
    s.updates = has && R > 0 ? s.shadowBytes / uintmax_t(8 + R) : 0;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.index < b.index; });
  return out;
}

// `<stem><ext>.old<digits>` in the base's directory (storage.md §8.3).
std::vector<Rotated> rotatedFiles(const std::string& base) {
  std::vector<Rotated> out;
  const std::string stem = fs::path(base).filename().string();
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dirOf(base), ec)) {
    if (!e.is_regular_file(ec)) continue;
    std::string n = e.path().filename().string();
    if (n.rfind(stem, 0) != 0) continue;
    size_t at = n.find(".old", stem.size());
    if (at == std::string::npos || !allDigits(n.substr(at + 4))) continue;
    Rotated r;
    r.counter = std::stoull(n.substr(at + 4));
    r.ext = n.substr(stem.size(), at - stem.size());
    r.name = n;
    r.bytes = fileBytes(e.path().string());
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(),
            [](auto& a, auto& b) { return a.counter != b.counter ? a.counter > b.counter : a.ext < b.ext; });
  return out;
}

// '=' no NULL, '~' all data fields NULL, '-' some; data fields only.
char fillOf(const storage::MetaFileEntry& e, const std::vector<size_t>& dataIdx) {
  if (e.gap) return 'X';
  bool any = false, all = true;
  for (size_t i : dataIdx) {
    if (e.isNull(i)) any = true;
    else all = false;
  }
  if (!any || dataIdx.empty()) return '=';
  return all ? '~' : '-';
}

std::string label(const storage::MetaFileEntry& e, const std::vector<size_t>& dataIdx) {
  if (e.gap) return "[XXXX] " + std::to_string(e.count) + " records, gap";
  char f = fillOf(e, dataIdx);
  const char* state = f == '=' ? "no nulls" : f == '~' ? "all nulls" : "some nulls";
  return "[" + std::string(4, f) + "] " + std::to_string(e.count) + " records, " + state;
}

std::string bar(const std::vector<storage::MetaFileEntry>& entries, const std::vector<size_t>& dataIdx, int width) {
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
    const std::string lbl = entries[i].gap ? "gap:" + std::to_string(entries[i].count) : std::to_string(entries[i].count);
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

int show(const std::string& base) {
  const std::string descFile = base + ".desc", dataFile = base, metaFile = base + ".meta",
                    shadowFile = base + ".shadow";
  bool haveDesc = false;
  const uintmax_t descSize = fileBytes(descFile, &haveDesc);
  if (!haveDesc) {
    fmt::print(stderr, "Descriptor not found: {}\n", descFile);
    return 0;
  }
  Descriptor desc = Descriptor::load(descFile);  // DescError: reported by main
  const int R = desc.recordSize();
  const auto [capacity, segments] = desc.retention();
  const bool segmented = capacity != 0 || segments != 0;
  std::vector<size_t> dataIdx;
  for (size_t i = 0; i < desc.entries.size(); ++i)
    if (desc.entries[i].isData()) dataIdx.push_back(i);

  const auto segs = segmented ? dataSegments(base, uint64_t(capacity), R) : std::vector<DataSegment>{};
  bool hasDataFile = false, hasMeta = false, hasRootShadow = false;
  const uintmax_t currentBytes = fileBytes(dataFile, &hasDataFile);
  const uintmax_t metaBytes = fileBytes(metaFile, &hasMeta);
  const uintmax_t rootShadowBytes = fileBytes(shadowFile, &hasRootShadow);
  const uint64_t currentRecords = R > 0 ? currentBytes / uintmax_t(R) : 0;
  uintmax_t segBytes = 0, segShadowBytes = 0;
  uint64_t segRecords = 0, segUpdates = 0;
  for (auto& s : segs) {
    segBytes += s.bytes;
    segRecords += s.records;
    segShadowBytes += s.shadowBytes;
    segUpdates += s.updates;
  }
  uintmax_t dataBytes = segBytes + currentBytes;
  uint64_t dataRecords = segRecords + currentRecords;
  bool hasData = hasDataFile;
  uintmax_t shadowBytes = rootShadowBytes;
  uint64_t updates = hasRootShadow && R > 0 ? rootShadowBytes / uintmax_t(8 + R) : 0;
  bool hasShadow = hasRootShadow;
  if (segmented) {
    hasData = hasDataFile || !segs.empty();
    shadowBytes += segShadowBytes;
    updates += segUpdates;
    hasShadow = hasRootShadow || segShadowBytes > 0;
  }

  std::vector<storage::MetaFileEntry> entries;
  if (hasMeta) entries = storage::readMetaFile(metaFile, int(desc.entries.size())).entries;
  uint64_t metaRecords = 0;
  for (auto& e : entries)
    if (!e.gap) metaRecords += e.count;

  // The three map columns.
  std::vector<std::string> c1, c2, c3;
  const std::string noEntries = hasMeta ? "meta file is empty" : "meta missing";
  if (segmented) {
    for (auto& s : segs) {
      const std::string k = "s" + std::to_string(s.index);
      c1.push_back(s.updates > 0 ? k + " " + std::to_string(s.updates) + "u" : k);
      c2.push_back(k + " " + std::to_string(s.begin) + "-" + std::to_string(s.end));
      c3.emplace_back();
    }
    if (!entries.empty()) {
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i < c3.size()) {
          c3[i] = label(entries[i], dataIdx);
        } else {
          c1.emplace_back();
          c2.emplace_back();
          c3.push_back(label(entries[i], dataIdx));
        }
      }
    } else if (c3.empty()) {
      c1.emplace_back();
      c2.emplace_back();
      c3.push_back(noEntries);
    }
  } else if (!entries.empty()) {
    uint64_t at = 0;
    for (auto& e : entries) {
      c1.emplace_back();
      if (e.gap) {
        c2.emplace_back();
      } else {
        c2.push_back(std::to_string(at) + "-" + std::to_string(at + e.count));
        at += e.count;
      }
      c3.push_back(label(e, dataIdx));
    }
  } else {
    c1.emplace_back();
    c2.push_back(hasData && dataRecords > 0 ? "0-" + std::to_string(dataRecords) : "");
    c3.push_back(noEntries);
  }
  if (hasShadow && updates > 0) {
    if (c1.size() == 1) {
      c1[0] = std::to_string(updates) + " updates";
    } else {
      const uint64_t top = updates / 2, bottom = updates - top;
      if (top > 0) c1.front() = std::to_string(top) + " updates";
      if (bottom > 0) c1.back() = std::to_string(bottom) + " updates";
    }
  }

  std::string out;
  hline(out, "┌", "┐");
  row(out, "  Storage map: " + base);
  hline(out, "├", "┤");
  maprow(out, "[shadow]", "[binary data]", "[meta index]");
  maphline(out, "├", "┼", "┤");
  for (size_t i = 0; i < c3.size(); ++i) maprow(out, c1[i], c2[i], c3[i]);
  maphline(out, "├", "┴", "┤");

  size(out, "  DESCRIPTOR  ", descFile, descSize);
  for (auto& e : desc.entries) {
    if (!e.isData()) continue;
    std::string left = std::string("  ") + storage::descTypeName(e.type) + "  " + e.name;
    if (e.count > 1) left += "[" + std::to_string(e.count) + "]";
    value(out, left, std::to_string(e.byteSize()) + " B");
  }
  value(out, "  Record size:", std::to_string(R) + " B");
  hline(out, "├", "┤");

  if (segmented) {
    size(out, "  DATA TOTAL  ",
         "rec=" + std::to_string(dataRecords) + " src=" + std::to_string(currentRecords) +
             " seg=" + std::to_string(segRecords),
         dataBytes);
    row(out, "  Records: " + std::to_string(dataRecords));
    row(out, "  Source: " + dataFile + "   Segments: " + dataFile + "_segment_*");
    row(out, "  Segmented data (RETENTION): " + std::to_string(segs.size()));
    row(out, "  Policy: segments=" + std::to_string(segments) + " capacity=" + std::to_string(capacity));
    if (segments > 0 && capacity > 0) {
      const uint64_t cap = uint64_t(segments) * uint64_t(capacity);
      row(out, "  Retention cap records: " + std::to_string(cap));
      row(out, "  Retention cap bytes: " + std::to_string(cap * uint64_t(R)));
    } else {
      row(out, "  Retention cap: unbounded");
    }
    row(out, "  Total records: " + std::to_string(dataRecords));
    row(out, "    current=" + std::to_string(currentRecords) + "  segments=" + std::to_string(segRecords));
    row(out, "  Total bytes: " + std::to_string(dataBytes));
    row(out, "    current=" + std::to_string(currentBytes) + "  segments=" + std::to_string(segBytes));
    for (auto& s : segs)
      row(out, "    [" + std::to_string(s.index) + "] " + s.name + " rec:" + std::to_string(s.records) +
                   " range:" + std::to_string(s.begin) + "-" + std::to_string(s.end));
  } else {
    if (!hasDataFile) dataBytes = 0, dataRecords = 0;
    size(out, "  DATA        ", hasDataFile ? dataFile : dataFile + " (missing)", dataBytes);
    row(out, "  Records: " + std::to_string(dataRecords));
  }
  hline(out, "├", "┤");

  size(out, "  META        ", hasMeta ? metaFile : metaFile + " (missing)", metaBytes);
  if (hasMeta) {
    row(out, "  Segments: " + std::to_string(entries.size()) + "   Records: " + std::to_string(metaRecords));
    if (!entries.empty()) {
      row(out, "  " + bar(entries, dataIdx, kInner - 2));
      row(out, "  Legend: [====] data  [----] partial null");
      row(out, "          [~~~~] nullfill  [XXXX] gap");
    }
  }
  hline(out, "├", "┤");

  size(out, "  SHADOW      ", hasShadow ? shadowFile : shadowFile + " (missing)", shadowBytes);
  if (hasShadow) row(out, "  Updates: " + std::to_string(updates));

  const auto rotated = rotatedFiles(base);
  if (!rotated.empty()) {
    hline(out, "├", "┤");
    row(out, "  ROTATED FILES");
    std::optional<uint64_t> last;
    for (auto& r : rotated) {
      std::string lbl = (!last || *last != r.counter ? "[" + std::to_string(r.counter) + "] " : "    ") + r.name;
      last = r.counter;
      value(out, "  " + lbl, std::to_string(r.bytes) + " B");
    }
  }
  hline(out, "└", "┘");
  fmt::print("{}", out);
  return 0;
}

}  // namespace map

// ================================================================ session
struct Colors {
  std::string red, orange, yellow, blue, green, blink, reset;
};

enum class Status { clean, fetched, changed, stored, error };

struct Record {
  std::vector<uint8_t> data;
  std::vector<bool> nulls;  // per descriptor entry
};

class Session {
 public:
  Session(bool batch) : batch_(batch) {
    if (!batch) c_ = {"\x1B[31m", "\x1B[33m", "\x1B[93m", "\x1B[34m", "\x1B[32m", "\x1b[5m", "\033[0m"};
  }
  ~Session() { closeStore(); }
  int run();

 private:
  // ---------------------------------------------------------- input
  bool word(std::string& w) { return bool(std::cin >> w); }
  std::string restOfLine() {
    std::string r;
    std::getline(std::cin, r);
    return r;
  }
  // Integer argument by stream extraction in the current input base.
  bool integer(long long& v) {
    std::string t;
    if (!word(t)) return false;
    errno = 0;
    char* end = nullptr;
    v = strtoll(t.c_str(), &end, inBase_);
    if (end == t.c_str()) v = 0;
    return true;
  }
  bool integer32(int& v) {
    long long x;
    if (!integer(x)) return false;
    v = int(std::clamp<long long>(x, INT32_MIN, INT32_MAX));
    return true;
  }

  // ---------------------------------------------------------- store
  bool connected() const { return open_; }
  uint64_t count() const { return declared_ ? fired_ : store_->count(); }
  void openCmd();
  void closeStore();
  std::vector<uint8_t> bitmap(const std::vector<bool>& nulls) const;
  std::vector<bool> nullsOf(const std::vector<uint8_t>& bm) const;
  bool readAt(uint64_t i);                      // non-declared: payload = record i
  void readDeclared(uint64_t back, bool flux);  // declared: history or next record
  std::string metaPath() const { return joinPath(storageDir_, file_) + ".meta"; }

  // ---------------------------------------------------------- payload
  std::string valueText(size_t entry) const;
  std::string payloadLine() const;
  std::string payloadBlock() const;
  void setField();

  // ---------------------------------------------------------- commands
  bool execute(const std::string& cmd);
  void help();
  void meta();
  void metaRaw();

  bool batch_;
  Colors c_;
  std::string storageDir_, policy_ = "DEFAULT", file_;
  bool hex_ = false;
  int inBase_ = 10;
  bool rox_ = true;
  Status status_ = Status::clean;

  bool open_ = false;
  Descriptor desc_;
  std::vector<int> offset_;  // per descriptor entry
  int recSize_ = 0;
  std::string descPath_, dataPath_;
  bool declared_ = false;
  bool disposable_ = false;
  bool metaTailHidden_ = false;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<storage::MetaIndex> meta_;
  std::unique_ptr<storage::Source> source_;
  ir::Layout layout_;
  std::vector<int> elemEntry_;  // layout element -> descriptor entry
  std::deque<Record> history_;  // newest first
  size_t capacity_ = 1;
  uint64_t fired_ = 0;
  Record payload_;
};

std::vector<uint8_t> Session::bitmap(const std::vector<bool>& nulls) const {
  std::vector<uint8_t> bm((desc_.entries.size() + 7) / 8, 0);
  for (size_t i = 0; i < nulls.size(); ++i)
    if (nulls[i] && desc_.entries[i].isData()) bm[i / 8] |= uint8_t(1u << (i % 8));
  return bm;
}

std::vector<bool> Session::nullsOf(const std::vector<uint8_t>& bm) const {
  std::vector<bool> n(desc_.entries.size(), false);
  for (size_t i = 0; i < n.size(); ++i)
    n[i] = desc_.entries[i].isData() && i / 8 < bm.size() && (bm[i / 8] >> (i % 8) & 1);
  return n;
}

void Session::closeStore() {
  if (!open_) return;
  if (store_) store_->close(-1);
  store_.reset();
  meta_.reset();
  source_.reset();
  if (disposable_) {
    // Disposable: the family minus `.shadow` and segments (storage.md §10).
    // A declared source keeps its external data file.
    std::vector<std::string> drop = {descPath_};
    if (!declared_) drop.insert(drop.end(), {dataPath_, dataPath_ + ".meta", dataPath_ + ".meta.shadow"});
    for (auto& f : drop) std::remove(f.c_str());
  }
  open_ = false;
}

void Session::openCmd() {
  std::string name;
  if (!word(name)) return;
  file_ = name;
  if (contains(name, "{")) {
    std::cout << c_.red << "unrecognized or missing file:" << name << "\n" << c_.reset;
    return;
  }
  const size_t old = name.find(".old");
  const std::string base = old == std::string::npos ? name : name.substr(0, old);
  const std::string descPath = joinPath(storageDir_, base + ".desc");
  Descriptor d;
  std::error_code ec;
  if (fs::exists(descPath, ec)) {
    d = Descriptor::load(descPath);
    if (d.recordSize() == 0) {
      std::cerr << "Error, empty descriptor file:" << descPath << "\n";
      throw Fatal("storage: empty descriptor file");
    }
  } else {
    std::string schema, tok;
    while (word(tok)) {
      schema += tok + " ";
      if (contains(tok, "}")) break;
    }
    d = Descriptor::parse(schema);
    d.save(descPath);
  }
  closeStore();

  desc_ = d;
  descPath_ = descPath;
  recSize_ = desc_.recordSize();
  offset_.assign(desc_.entries.size(), 0);
  int at = 0;
  for (size_t i = 0; i < desc_.entries.size(); ++i) {
    offset_[i] = at;
    at += desc_.entries[i].byteSize();
  }
  const std::string profile = desc_.profile().value_or(policy_);
  auto ref = desc_.ref();
  dataPath_ = ref ? *ref : joinPath(storageDir_, name);
  if (dataPath_.empty())
    throw Fatal("storage: storage file not set in descriptor (missing REF field or :STORAGE directive)");
  declared_ = profile == "TEXTSOURCE" || profile == "DEVICE";
  metaTailHidden_ = false;
  history_.clear();
  fired_ = 0;
  capacity_ = 1;
  if (declared_) {
    std::vector<ir::Field> schema;
    std::vector<int> fieldEntry;
    for (size_t i = 0; i < desc_.entries.size(); ++i) {
      const DescEntry& e = desc_.entries[i];
      if (!e.isData()) continue;
      ir::Field f;
      f.name = e.name;
      f.type = e.type;
      f.rlen = elemSize(e);
      f.rarray = elemCount(e);
      schema.push_back(f);
      fieldEntry.push_back(int(i));
    }
    layout_ = ir::Layout::of(schema);
    elemEntry_.clear();
    for (auto& el : layout_.elems) elemEntry_.push_back(fieldEntry[size_t(el.field)]);
    // A DEVICE profile covers binary files too (the descriptor does not tell them apart).
    struct stat st {};
    const bool regular = ::stat(dataPath_.c_str(), &st) != 0 || S_ISREG(st.st_mode);
    try {
      source_ = storage::openSource(profile == "TEXTSOURCE" ? storage::SourceFormat::TEXT
                                    : regular               ? storage::SourceFormat::BINARY
                                                            : storage::SourceFormat::DEVICE,
                                    dataPath_, layout_, storage::SourceOptions{});
    } catch (const storage::SourceError& e) {
      throw Fatal(e.what());
    }
  } else {
    if (!storage::isWritableProfile(profile)) throw Fatal("storage: unsupported storage type '" + profile + "'");
    store_ = storage::openStore(profile, dataPath_, recSize_, desc_.retention(), desc_.retMemory());
    meta_ = std::make_unique<storage::MetaIndex>(dataPath_ + ".meta", int(desc_.entries.size()), store_->shadowed());
    meta_->align(store_->count());  // a crashed writer's index never runs ahead of its data
    // The reference takes the last run out of the `.meta` file at open and
    // writes it back on the next flush; listings show the file without it
    // until then (tools.md §3.5). The file itself stays whole here.
    auto view = storage::readMetaFile(dataPath_ + ".meta", int(desc_.entries.size()));
    metaTailHidden_ = !view.entries.empty() && !view.entries.back().gap;
  }
  open_ = true;
  disposable_ = false;
  status_ = Status::clean;
  payload_.data.assign(size_t(recSize_), 0);
  payload_.nulls.assign(desc_.entries.size(), false);
}

bool Session::readAt(uint64_t i) {
  bool ok = store_->read(i, payload_.data.data());
  payload_.nulls = nullsOf(meta_->bitmapAt(i));
  return ok;
}

void Session::readDeclared(uint64_t back, bool flux) {
  if (back == 0 && flux) {
    Record r;
    r.data.assign(size_t(recSize_), 0);
    std::vector<uint8_t> elemNull(std::max<size_t>(layout_.elems.size(), 1), 0);
    source_->next(r.data.data(), elemNull.data());
    r.nulls.assign(desc_.entries.size(), false);
    for (size_t e = 0; e < layout_.elems.size(); ++e)
      if (elemNull[e]) r.nulls[size_t(elemEntry_[e])] = true;
    payload_ = r;
    history_.push_front(std::move(r));
    while (history_.size() > capacity_) history_.pop_back();
    ++fired_;
    return;
  }
  if (back >= capacity_)
    throw Fatal(fmt::format("storage::revRead: recordIndexFromBack {} >= circularBuffer_.capacity() {} in '{}'", back,
                            capacity_, dataPath_));
  if (back >= history_.size()) {
    payload_.data.assign(size_t(recSize_), 0);
    payload_.nulls.assign(desc_.entries.size(), false);
    return;
  }
  payload_ = history_[size_t(back)];
}

// ---------------------------------------------------------------- payload text
std::string Session::valueText(size_t i) const {
  const DescEntry& e = desc_.entries[i];
  if (payload_.nulls[i]) return "null";
  const uint8_t* p = payload_.data.data() + offset_[i];
  if (e.type == ir::Type::STRING) {
    const char* s = reinterpret_cast<const char*>(p);
    return std::string(s, strnlen(s, size_t(e.count)));
  }
  std::string out;
  for (int k = 0; k < e.count; ++k) {
    if (k) out += ' ';
    const uint8_t* q = p + k * ir::typeSize(e.type);
    switch (e.type) {
      case ir::Type::BYTE: out += hex_ ? fmt::format("{:02x}", *q) : std::to_string(*q); break;
      case ir::Type::INTEGER: {
        int32_t v;
        memcpy(&v, q, 4);
        out += hex_ ? fmt::format("{:08x}", uint32_t(v)) : std::to_string(v);
        break;
      }
      case ir::Type::UINT: {
        uint32_t v;
        memcpy(&v, q, 4);
        out += hex_ ? fmt::format("{:08x}", v) : std::to_string(v);
        break;
      }
      case ir::Type::FLOAT: {
        float v;
        memcpy(&v, q, 4);
        out += fmt::sprintf("%g", double(v));
        break;
      }
      case ir::Type::DOUBLE: {
        double v;
        memcpy(&v, q, 8);
        out += fmt::sprintf("%g", v);
        break;
      }
      case ir::Type::RATIONAL: {
        vm::val::Rat r;
        memcpy(&r.num, q, 4);
        memcpy(&r.den, q + 4, 4);
        out += vm::val::fmtRat(vm::val::ratNormalize(r));  // another program's file may break the rule
        break;
      }
      default: break;
    }
  }
  return out;
}

std::string Session::payloadLine() const {
  std::string s = "{";
  for (size_t i = 0; i < desc_.entries.size(); ++i)
    if (desc_.entries[i].isData()) s += " " + desc_.entries[i].name + ":" + valueText(i);
  return s + " }";
}

std::string Session::payloadBlock() const {
  std::string s = "{";
  for (size_t i = 0; i < desc_.entries.size(); ++i)
    if (desc_.entries[i].isData()) s += "\t" + desc_.entries[i].name + ":" + valueText(i) + "\n";
  return s + "}\n";
}

// `set <field> <value...>`: one token per element; an unknown field is only
// logged and its value tokens are then read as commands.
void Session::setField() {
  std::string name;
  if (!word(name)) return;
  inBase_ = hex_ ? 16 : 10;  // the reference leaves stdin in this base
  size_t idx = desc_.entries.size();
  for (size_t i = 0; i < desc_.entries.size(); ++i)
    if (desc_.entries[i].isData() && desc_.entries[i].name == name) {
      idx = i;
      break;
    }
  if (idx == desc_.entries.size()) {
    logLine("set: field " + name + " not found");
    return;
  }
  const DescEntry& e = desc_.entries[idx];
  uint8_t* p = payload_.data.data() + offset_[idx];
  if (e.type == ir::Type::STRING) {
    std::string t;
    if (!word(t)) return;
    memset(p, 0, size_t(e.count));
    memcpy(p, t.data(), std::min(t.size(), size_t(e.count)));
    payload_.nulls[idx] = false;
    return;
  }
  const int es = ir::typeSize(e.type);
  for (int k = 0; k < e.count; ++k) {
    uint8_t* q = p + k * es;
    std::string t;
    if (!word(t)) return;
    const char* s = t.c_str();
    char* end = nullptr;
    switch (e.type) {
      case ir::Type::BYTE: {
        long long v = strtoll(s, &end, inBase_);
        uint8_t b = uint8_t(v);
        memcpy(q, &b, 1);
        break;
      }
      case ir::Type::INTEGER: {
        long long v = strtoll(s, &end, inBase_);
        int32_t x = int32_t(std::clamp<long long>(v, INT32_MIN, INT32_MAX));
        memcpy(q, &x, 4);
        break;
      }
      case ir::Type::UINT: {
        unsigned long long v = strtoull(s, &end, inBase_);
        uint32_t x = v > UINT32_MAX && t[0] != '-' ? UINT32_MAX : uint32_t(v);
        memcpy(q, &x, 4);
        break;
      }
      case ir::Type::FLOAT: {
        float x = strtof(s, &end);
        memcpy(q, &x, 4);
        break;
      }
      case ir::Type::DOUBLE: {
        double x = strtod(s, &end);
        memcpy(q, &x, 8);
        break;
      }
      case ir::Type::RATIONAL: {
        long long n = strtoll(s, &end, inBase_), d = 1;
        if (end && *end == '/') d = strtoll(end + 1, &end, inBase_);
        // Written by the RATIONAL rule: reduced, den > 0, rounded to the nearest when it does not fit.
        vm::val::Rat r = d == 0 ? vm::val::ratFromInt(n) : vm::val::ratFromWide(n, d);
        memcpy(q, &r.num, 4);
        memcpy(q + 4, &r.den, 4);
        break;
      }
      default: break;
    }
  }
  payload_.nulls[idx] = false;
}

// ---------------------------------------------------------------- meta listings
void Session::meta() {
  const std::string path = metaPath();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::cout << c_.red << "meta file not found: " << path << "\n" << c_.reset;
    return;
  }
  const int N = int(desc_.entries.size());
  auto view = storage::readMetaFile(path, N);
  if (metaTailHidden_ && !declared_ && path == dataPath_ + ".meta" && !view.entries.empty()) view.entries.pop_back();
  uint64_t total = 0;
  for (auto& e : view.entries)
    if (!e.gap) total += e.count;
  std::cout << c_.blue << "meta: " << path << "\n";
  std::cout << "interval: 1/1  total records: " << total << "\n" << c_.reset;
  size_t k = 0;
  for (auto& e : view.entries) {
    std::cout << c_.yellow << "[" << k++ << "] ";
    if (e.gap) {
      std::cout << "gap (duration:" << e.count << ")\n";
    } else {
      std::cout << "[";
      for (int i = 0; i < N; ++i) {
        if (i) std::cout << " ";
        std::cout << entryName(desc_.entries[size_t(i)]) << ":" << (e.isNull(size_t(i)) ? "null" : "ok");
      }
      std::cout << "] runs:" << e.count << "\n";
    }
    std::cout << c_.reset;
  }
  std::cout << c_.blue << view.entries.size() << " segment(s)\n" << c_.reset;
}

void Session::metaRaw() {
  const std::string path = metaPath();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::cout << c_.red << "meta file not found: " << path << "\n" << c_.reset;
    return;
  }
  const int N = int(desc_.entries.size());
  const uint64_t E = uint64_t(storage::metaEntrySize(N));
  auto view = storage::readMetaFile(path, N);
  uint64_t size = view.size;
  if (metaTailHidden_ && !declared_ && path == dataPath_ + ".meta" && !view.entries.empty()) {
    view.entries.pop_back();
    size -= E;
  }
  if (size < 8 || (size - 8) % E != 0) std::cout << c_.yellow << "warning: unexpected meta payload alignment\n" << c_.reset;
  std::cout << c_.blue << "meta raw: " << path << "\n" << c_.reset;
  std::cout << "header size: 8\n";
  std::cout << "entry size: " << E << "\n";
  std::cout << "sampling interval: 1/1\n";
  size_t k = 0;
  for (auto& e : view.entries) {
    std::cout << "entry[" << k << "] count:" << e.count << " gap:" << (e.gap ? 1 : 0) << " bitsetSize:" << e.bitCount
              << " bitsetHex:";
    for (size_t b = 0; b < (size_t(N) + 7) / 8; ++b) {
      unsigned v = 0;
      for (size_t bit = 0; bit < 8; ++bit) {
        const size_t i = b * 8 + bit;
        if (i < e.bitCount && e.isNull(i)) v |= 1u << bit;
      }
      std::cout << fmt::format("{:02x}", v);
    }
    std::cout << "\n";
    ++k;
  }
  if (view.trailing > 0) std::cout << c_.red << "truncated entry at index: " << k << "\n" << c_.reset;
  std::cout << "entries: " << k << "\n";
}

void Session::help() {
  static const std::pair<const char*, const char*> lines[] = {
      {"exit|quit|q", "exit"},
      {"quitdrop|qd", "exit & drop artifacts (data, .desc, .meta)"},
      {"storage [path]", "set storage path for database"},
      {"policy [name]", "set storage policy"},
      {"echo", "print message on terminal"},
      {"system", "execute system command"},
      {"#|rem [text]", "comment line"},
      {"help|h", "show this help"},
      {"append", "append payload to database"},
      {"cap [value]", "set device stream backread capacity"},
      {"dec|hex", "type of input/output of byte/number fields"},
      {"desc|descc", "show schema (descc: single line)"},
      {"dropfile [file1] ... }", "remove listed file(s), end with }"},
      {"dump", "show payload memory"},
      {"getpos [position]", "show payload field value"},
      {"input [[field][value]]", "fill payload"},
      {"list|rlist [n]", "print n records from the front/back"},
      {"meta", "show meta index (null patterns) for open db"},
      {"metaraw", "show internal meta file structure"},
      {"open file [schema]", "open or create database with schema"},
      {"", "example: open test_db { INTEGER dane STRING name[3] }"},
      {"print|printt", "show payload (printt: single line)"},
      {"purge", "remove all records from database"},
      {"read|rread [n]", "read record n from the front/back into payload"},
      {"rox", "remove on exit flip (data, .desc, .meta)"},
      {"set [field][value]", "set payload field value"},
      {"setpos [position][value]", "set payload field value by position"},
      {"size", "show database size in records"},
      {"status", "show status of payload"},
      {"write [n]", "from payload send record to database"},
  };
  std::cout << c_.green;
  for (auto& [cmd, text] : lines) std::cout << fmt::format("{:<32}{}\n", cmd, text);
  std::cout << "xtrdb - data accessing tool.\n" << c_.reset;
}

// Runs one command; true when it "succeeds" (interactive mode prints ok).
bool Session::execute(const std::string& cmd) {
  if (cmd == "open") {
    openCmd();
    return open_ && !contains(file_, "{");
  }
  if (cmd == "dropfile") {
    std::string tok;
    do {
      if (!word(tok)) break;
      std::string path = tok;
      if (!storageDir_.empty() && !contains(tok, storageDir_)) path = joinPath(storageDir_, tok);
      std::error_code ec;
      fs::remove(path, ec);
    } while (!contains(tok, "}"));
    return true;
  }
  if (cmd == "help" || cmd == "h") {
    help();
    return true;
  }
  static const char* const needsStore[] = {"size",  "desc",   "descc", "set",    "input",  "setpos", "getpos",
                                           "print", "printt", "read",  "rread",  "list",   "rlist",  "append",
                                           "write", "purge",  "status", "hex",   "dec",    "dump",   "cap",
                                           "rox",   "meta",   "metaraw", "system"};
  bool known = std::find_if(std::begin(needsStore), std::end(needsStore), [&](const char* n) { return cmd == n; }) !=
               std::end(needsStore);
  if (!open_) {
    std::cout << c_.red << "unconnected\n" << c_.reset;
    return false;
  }
  if (!known) {
    std::cout << c_.red << "?\n" << c_.reset;
    return false;
  }
  if (cmd == "size") {
    std::cout << count() << " Record(s)\n" << recSize_ << " Byte(s) per record.\n";
    return false;
  }
  if (cmd == "desc" || cmd == "descc") {
    std::cout << c_.yellow << (cmd == "desc" ? desc_.text() : desc_.textLine()) << c_.reset << "\n";
    return false;
  }
  if (cmd == "set") {
    setField();
    status_ = Status::changed;
    return false;
  }
  if (cmd == "input") {
    for (size_t i = 0; i < desc_.entries.size(); ++i) setField();
    return false;
  }
  if (cmd == "setpos") {
    long long pos;
    if (!integer(pos)) return false;
    const DescEntry* e = pos >= 0 && size_t(pos) < desc_.entries.size() ? &desc_.entries[size_t(pos)] : nullptr;
    if (!e || !e->isData() ||
        (e->type != ir::Type::INTEGER && e->type != ir::Type::DOUBLE && e->type != ir::Type::BYTE &&
         e->type != ir::Type::STRING)) {
      std::cerr << "field not found\n";
      status_ = Status::changed;
      return false;
    }
    uint8_t* p = payload_.data.data() + offset_[size_t(pos)];
    if (e->type == ir::Type::INTEGER) {
      int v = 0;
      if (!integer32(v)) return false;
      memcpy(p, &v, 4);
    } else if (e->type == ir::Type::DOUBLE) {
      std::string t;
      if (!word(t)) return false;
      double v = strtod(t.c_str(), nullptr);
      memcpy(p, &v, 8);
    } else if (e->type == ir::Type::BYTE) {
      char ch;  // one character, as `cin >> uint8_t` does
      if (!(std::cin >> ch)) return false;
      *p = uint8_t(ch);
    } else {
      std::string t;
      if (!word(t)) return false;
      memset(p, 0, size_t(e->count));
      memcpy(p, t.data(), std::min(t.size(), size_t(e->count)));
    }
    payload_.nulls[size_t(pos)] = false;
    status_ = Status::changed;
    return false;
  }
  if (cmd == "getpos") {
    long long pos;
    if (!integer(pos)) return false;
    if (pos < 0 || size_t(pos) >= desc_.entries.size()) return false;
    const DescEntry& e = desc_.entries[size_t(pos)];
    if (payload_.nulls[size_t(pos)]) {
      std::cout << entryName(e) << ": null\n";
      return false;
    }
    if (!e.isData() || (e.count != 1 && e.type != ir::Type::STRING)) return true;
    const uint8_t* p = payload_.data.data() + offset_[size_t(pos)];
    switch (e.type) {
      case ir::Type::STRING: {
        const char* s = reinterpret_cast<const char*>(p);
        std::cout << std::string(s, strnlen(s, size_t(e.count))) << "\n";
        break;
      }
      case ir::Type::INTEGER: {
        int32_t v;
        memcpy(&v, p, 4);
        std::cout << v << "\n";
        break;
      }
      case ir::Type::BYTE: std::cout << unsigned(*p) << "\n"; break;
      case ir::Type::FLOAT: {
        float v;
        memcpy(&v, p, 4);
        std::cout << fmt::sprintf("%g", double(v)) << "\n";
        break;
      }
      case ir::Type::DOUBLE: {
        double v;
        memcpy(&v, p, 8);
        std::cout << fmt::sprintf("%g", v) << "\n";
        break;
      }
      default: break;  // UINT, RATIONAL: nothing
    }
    return true;
  }
  if (cmd == "print") {
    std::cout << c_.orange << payloadBlock() << c_.reset;
    return false;
  }
  if (cmd == "printt") {
    std::cout << c_.orange << payloadLine() << c_.reset << "\n";
    return false;
  }
  if (cmd == "read" || cmd == "rread") {
    long long n;
    if (!integer(n)) return false;
    if (declared_) {
      if (cmd == "read") throw Fatal("storage::read: cannot read directly from declared (device/textsource) storage");
      if (n < 0) n = 0;
      readDeclared(uint64_t(n), true);
      status_ = Status::fetched;
      return true;
    }
    const uint64_t cnt = count();
    if (n < 0 || uint64_t(n) >= cnt) {
      std::cout << c_.red << "record out of range - read command\n" << c_.reset;
      return false;
    }
    const uint64_t i = cmd == "read" ? uint64_t(n) : cnt - 1 - uint64_t(n);
    status_ = readAt(i) ? Status::fetched : Status::error;
    return true;
  }
  if (cmd == "list" || cmd == "rlist") {
    long long n;
    if (!integer(n)) return false;
    for (long long i = 0; i < n; ++i) {
      const uint64_t cnt = count();
      if (uint64_t(i) >= cnt) {
        std::cout << c_.red << "record out of range - list command\n" << c_.reset;
        continue;
      }
      bool ok = true;
      if (declared_) {
        if (cmd == "list") throw Fatal("storage::read: cannot read directly from declared (device/textsource) storage");
        readDeclared(uint64_t(i), false);
      } else {
        ok = readAt(cmd == "list" ? uint64_t(i) : cnt - 1 - uint64_t(i));
      }
      status_ = ok ? Status::fetched : Status::error;
      if (!ok) {
        std::cout << c_.red << "fetch error\n" << c_.reset;
        continue;
      }
      std::cout << c_.orange << payloadLine() << c_.reset << "\n";
    }
    return false;
  }
  if (cmd == "append") {
    if (declared_) throw Fatal("storage::write: append to '" + dataPath_ + "' failed (declared source is read-only)");
    store_->append(payload_.data.data());
    meta_->append(bitmap(payload_.nulls));
    // An inspector writes through: the next command may read the files directly.
    store_->flush();
    meta_->flush();
    metaTailHidden_ = false;  // the flush wrote the last run back
    status_ = Status::stored;
    return true;
  }
  if (cmd == "write") {
    long long n;
    if (!integer(n)) return false;
    if (n < 0 || uint64_t(n) >= count()) {
      std::cout << c_.red << "record out of range - Check append command.\n" << c_.reset;
      return false;
    }
    if (declared_)
      throw Fatal("storage::write: overwrite to '" + dataPath_ + "' failed (declared source is read-only)");
    store_->update(uint64_t(n), payload_.data.data());
    const auto bm = bitmap(payload_.nulls);
    if (uint64_t(n) < meta_->records()) {
      const bool rewrites = !store_->shadowed() && meta_->bitmapAt(uint64_t(n)) != bm;
      meta_->update(uint64_t(n), bm);
      if (rewrites) metaTailHidden_ = false;  // the whole file was rewritten
    }
    status_ = Status::stored;
    return true;
  }
  if (cmd == "purge") {
    if (!declared_) {
      store_->purge();
      meta_->reset();
      metaTailHidden_ = false;
    }
    return true;
  }
  if (cmd == "status") {
    static const char* const names[] = {"clean", "fetched", "changed", "stored", "error"};
    std::cout << names[int(status_)] << "\n";
    return true;
  }
  if (cmd == "hex" || cmd == "dec") {
    hex_ = cmd == "hex";
    return true;
  }
  if (cmd == "dump") {
    for (uint8_t b : payload_.data) std::cout << fmt::format("{:02x} ", b);
    std::cout << "\n";
    return true;
  }
  if (cmd == "cap") {
    long long n;
    if (!integer(n)) return false;
    if (declared_) {
      capacity_ = size_t(std::max<long long>(n, 1));
      while (history_.size() > capacity_) history_.pop_back();
    }
    return true;
  }
  if (cmd == "rox") {
    rox_ = !rox_;
    disposable_ = rox_;
    return true;
  }
  if (cmd == "meta") {
    meta();
    return false;
  }
  if (cmd == "metaraw") {
    metaRaw();
    return false;
  }
  if (cmd == "system") {
    const std::string line = restOfLine();
    std::cout.flush();
    fflush(stdout);
    const int rc = std::system(line.c_str());
    if (rc != 0) std::cout << c_.red << "system command error: " << rc << "\n" << c_.reset;
    return true;
  }
  return false;
}

int Session::run() {
  const std::string prompt = batch_ ? "" : ".";
  const std::string ok = batch_ ? "" : "ok\n";
  std::string cmd;
  while (true) {
    if (cmd != "#") std::cout << prompt;
    if (!word(cmd)) break;  // end of input acts as quit
    if (cmd == "exit" || cmd == "quit" || cmd == "q") break;
    if (cmd == "#" || cmd == "rem") {
      restOfLine();
      if (cmd == "rem") std::cout << ok;
      continue;
    }
    if (cmd == "quitdrop" || cmd == "qd") {
      if (open_) disposable_ = true;
      break;
    }
    if (cmd == "echo") {
      std::cout << c_.blink << restOfLine() << "\n" << c_.reset;
      continue;
    }
    if (cmd == "storage") {
      word(storageDir_);
      continue;
    }
    if (cmd == "policy") {
      if (word(policy_)) policy_ = upper(policy_);
      continue;
    }
    if (execute(cmd)) std::cout << ok;
  }
  closeStore();
  std::cout.flush();
  return 0;
}

// Refuses to run while the default xretractor instance holds its lock.
bool engineRunning() {
  const std::string path = tmpPath("xretractor_service.lock");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool running = flock(fd, LOCK_SH | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EAGAIN);
  ::close(fd);
  return running;
}

void printHelp(const std::string& argv0) {
  fmt::print("{} - data accessing tool.\n\nUsage: {} [option]\n\n", argv0, argv0);
  fmt::print("Allowed options:\n"
             "  -h [ --help ]              produce help message\n"
             "  -s [ --storagemap ] arg    show storage structure for specified file\n"
             "  -n [ --noprompt ]          suppress prompt and ok output\n"
             "  noprompt                   same as -n (legacy)\n\n");
  fmt::print("retractor {} (C++20, meson)\nLog: {}\nLicense: MIT. This program comes with ABSOLUTELY NO WARRANTY.\n",
             RDB_VERSION, tmpPath("xtrdb.log"));
}

}  // namespace

int main(int argc, char** argv) {
  // The bare word `noprompt` is the legacy form of -n.
  bool noPrompt = false;
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "noprompt") noPrompt = true;
    else args.push_back(argv[i]);
  }
  CLI::App app{"xtrdb - data accessing tool."};
  app.set_help_flag();
  bool help = false, n = false;
  std::string mapBase;
  app.add_flag("-h,--help", help, "produce help message");
  app.add_option("-s,--storagemap", mapBase, "show storage structure for specified file");
  app.add_flag("-n,--noprompt", n, "suppress prompt and ok output");
  try {
    app.parse(int(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (help) {
    printHelp(argv[0]);
    return 0;
  }
  try {
    if (app.count("-s") > 0) return map::show(mapBase);
    if (engineRunning()) {
      std::cerr << "xretractor is running — stop it before using xtrdb.\n";
      return 1;
    }
    Session s(noPrompt || n);
    return s.run();
  } catch (const storage::DescError& e) {
    std::cout.flush();
    std::cerr << "Syntax error @Descriptor\nmsg:" << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    fmt::print(stderr, "\nFATAL: {}\n", e.what());
    return 1;
  }
}
