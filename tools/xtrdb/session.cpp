// xtrdb session: input tokens, opening and closing a family, records, the payload and its text.
#include "session.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common.hpp"
#include "ir/values.hpp"

namespace xtrdb {

namespace fs = std::filesystem;
using storage::ArtifactPaths;
using storage::DescEntry;
using storage::Descriptor;

Session::Session(bool batch) : batch_(batch) {
  if (!batch) c_ = {"\x1B[31m", "\x1B[33m", "\x1B[93m", "\x1B[34m", "\x1B[32m", "\x1b[5m", "\033[0m"};
}

// ---------------------------------------------------------------- input
bool Session::word(std::string& w) { return bool(std::cin >> w); }

std::string Session::restOfLine() {
  std::string r;
  std::getline(std::cin, r);
  return r;
}

// Integer argument by stream extraction in the current input base.
bool Session::integer(long long& v) {
  std::string t;
  if (!word(t)) return false;
  errno = 0;
  char* end = nullptr;
  v = strtoll(t.c_str(), &end, inBase_);
  if (end == t.c_str()) v = 0;
  return true;
}

bool Session::integer32(int& v) {
  long long x;
  if (!integer(x)) return false;
  v = int(std::clamp<long long>(x, INT32_MIN, INT32_MAX));
  return true;
}

// ---------------------------------------------------------------- open, close
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
  if (fam_.store) fam_.store->close(-1);
  fam_ = {};
  source_.reset();
  // Disposable: the family minus `.shadow` and segments (storage.md §10).
  // A declared source keeps its external data file.
  if (disposable_)
    paths_.remove(storage::kDesc | (declared_ ? 0 : storage::kData | storage::kMeta | storage::kMetaShadow));
  open_ = false;
}

// The stored descriptor, or the schema that follows on the input (then saved there).
Descriptor Session::descriptorOf(const std::string& descPath) {
  std::error_code ec;
  if (fs::exists(descPath, ec)) {
    Descriptor d = Descriptor::load(descPath);
    if (d.recordSize() == 0) {
      std::cerr << "Error, empty descriptor file:" << descPath << "\n";
      throw Fatal("storage: empty descriptor file");
    }
    return d;
  }
  std::string schema, tok;
  while (word(tok)) {
    schema += tok + " ";
    if (contains(tok, "}")) break;
  }
  Descriptor d = Descriptor::parse(schema);
  d.save(descPath);
  return d;
}

void Session::adopt(const Descriptor& d, const std::string& descPath, const std::string& name) {
  desc_ = d;
  recSize_ = desc_.recordSize();
  offset_.assign(desc_.entries.size(), 0);
  int at = 0;
  for (size_t i = 0; i < desc_.entries.size(); ++i) {
    offset_[i] = at;
    at += desc_.entries[i].byteSize();
  }
  auto ref = desc_.ref();
  // An archive `X.old<N>` opens with the index and shadows of its session (X.meta.old<N>, ...).
  paths_ = ref ? ArtifactPaths(*ref, descPath) : ArtifactPaths::forFile(storageDir_, name);
  if (paths_.data().empty())
    throw Fatal("storage: storage file not set in descriptor (missing REF field or :STORAGE directive)");
  metaTailHidden_ = false;
  history_.clear();
  fired_ = 0;
  capacity_ = 1;
}

void Session::openDeclared(const std::string& profile) {
  std::vector<int> fieldEntry;  // data field -> descriptor entry
  for (size_t i = 0; i < desc_.entries.size(); ++i)
    if (desc_.entries[i].isData()) fieldEntry.push_back(int(i));
  layout_ = ir::Layout::of(storage::schemaOf(desc_));
  elemEntry_.clear();
  for (auto& el : layout_.elems) elemEntry_.push_back(fieldEntry[size_t(el.field)]);
  // A DEVICE profile covers binary files too (the descriptor does not tell them apart).
  struct stat st {};
  const bool regular = ::stat(paths_.data().c_str(), &st) != 0 || S_ISREG(st.st_mode);
  try {
    source_ = storage::openSource(profile == "TEXTSOURCE" ? storage::SourceFormat::TEXT
                                  : regular               ? storage::SourceFormat::BINARY
                                                          : storage::SourceFormat::DEVICE,
                                  paths_.data(), layout_, storage::SourceOptions{});
  } catch (const storage::SourceError& e) {
    throw Fatal(e.what());
  }
}

void Session::openWritable(const std::string& profile) {
  if (!storage::isWritableProfile(profile)) throw Fatal("storage: unsupported storage type '" + profile + "'");
  fam_ = storage::openFamily(paths_, desc_, profile, recSize_);
  // The reference takes the last run out of the `.meta` file at open and
  // writes it back on the next flush; listings show the file without it
  // until then (tools.md §3.5). The file itself stays whole here.
  auto view = storage::readMetaFile(paths_.meta(), int(desc_.entries.size()));
  metaTailHidden_ = !view.entries.empty() && !view.entries.back().gap;
}

void Session::openFile() {
  std::string name;
  if (!word(name)) return;
  file_ = name;
  if (contains(name, "{")) {
    std::cout << c_.red << "unrecognized or missing file:" << name << "\n" << c_.reset;
    return;
  }
  const std::string descPath = ArtifactPaths::forFile(storageDir_, name).desc();
  Descriptor d = descriptorOf(descPath);
  closeStore();
  adopt(d, descPath, name);
  const std::string profile = desc_.profile().value_or(policy_);
  declared_ = profile == "TEXTSOURCE" || profile == "DEVICE";
  if (declared_) openDeclared(profile);
  else openWritable(profile);
  open_ = true;
  disposable_ = false;
  status_ = Status::clean;
  payload_.data.assign(size_t(recSize_), 0);
  payload_.nulls.assign(desc_.entries.size(), false);
}

// `open file [schema]`: "ok" while a file is open and the name was one.
Session::Outcome Session::cmdOpen(const std::string&) {
  openFile();
  return open_ && !contains(file_, "{") ? Outcome::ok : Outcome::quiet;
}

// ---------------------------------------------------------------- records
bool Session::readAt(uint64_t i) {
  bool ok = fam_.store->read(i, payload_.data.data());
  payload_.nulls = nullsOf(fam_.meta->bitmapAt(i));
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
                            capacity_, paths_.data()));
  if (back >= history_.size()) {
    payload_.data.assign(size_t(recSize_), 0);
    payload_.nulls.assign(desc_.entries.size(), false);
    return;
  }
  payload_ = history_[size_t(back)];
}

// The `.meta` file that `meta` and `metaraw` list: the one of the name last opened.
std::string Session::metaPath() const { return ArtifactPaths::forFile(storageDir_, file_).meta(); }

// False while the open index's last run is held back from listings (see openWritable).
bool Session::metaTailShown(const std::string& path) const {
  return !(metaTailHidden_ && !declared_ && path == paths_.meta());
}

// ---------------------------------------------------------------- payload
std::string Session::valueText(size_t i) const {
  if (payload_.nulls[i]) return "null";
  return storage::entryText(desc_.entries[i], payload_.data.data() + offset_[i],
                            hex_ ? storage::IntBase::HEX : storage::IntBase::DEC);
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

// One element of `set` from its token, in the current input base.
void Session::setElement(ir::Type t, uint8_t* q, const std::string& token) {
  const char* s = token.c_str();
  char* end = nullptr;
  switch (t) {
    case ir::Type::BYTE: {
      uint8_t b = uint8_t(strtoll(s, &end, inBase_));
      memcpy(q, &b, 1);
      break;
    }
    case ir::Type::INTEGER: {
      int32_t x = int32_t(std::clamp<long long>(strtoll(s, &end, inBase_), INT32_MIN, INT32_MAX));
      memcpy(q, &x, 4);
      break;
    }
    case ir::Type::UINT: {
      unsigned long long v = strtoull(s, &end, inBase_);
      uint32_t x = v > UINT32_MAX && token[0] != '-' ? UINT32_MAX : uint32_t(v);
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
      ir::val::Rat r = d == 0 ? ir::val::ratFromInt(n) : ir::val::ratFromWide(n, d);
      memcpy(q, &r.num, 4);
      memcpy(q + 4, &r.den, 4);
      break;
    }
    default: break;
  }
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
  for (int k = 0; k < e.count; ++k) {
    std::string t;
    if (!word(t)) return;
    setElement(e.type, p + k * ir::typeSize(e.type), t);
  }
  payload_.nulls[idx] = false;
}

// `setpos <position> <value>`: INTEGER, DOUBLE, BYTE (one character) and STRING fields.
bool Session::setPosition(size_t pos) {
  const DescEntry& e = desc_.entries[pos];
  uint8_t* p = payload_.data.data() + offset_[pos];
  if (e.type == ir::Type::INTEGER) {
    int v = 0;
    if (!integer32(v)) return false;
    memcpy(p, &v, 4);
  } else if (e.type == ir::Type::DOUBLE) {
    std::string t;
    if (!word(t)) return false;
    double v = strtod(t.c_str(), nullptr);
    memcpy(p, &v, 8);
  } else if (e.type == ir::Type::BYTE) {
    char ch;  // one character, as `cin >> uint8_t` does
    if (!(std::cin >> ch)) return false;
    *p = uint8_t(ch);
  } else {
    std::string t;
    if (!word(t)) return false;
    memset(p, 0, size_t(e.count));
    memcpy(p, t.data(), std::min(t.size(), size_t(e.count)));
  }
  payload_.nulls[pos] = false;
  return true;
}

}  // namespace xtrdb
