// The `.desc` schema: accessors, canonical text, parser, whole-file save.
#include "descriptor.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "artifacts.hpp"

namespace storage {

const char* descTypeName(ir::Type t) { return ir::typeName(t); }

int Descriptor::recordSize() const {
  int r = 0;
  for (auto& e : entries) r += e.byteSize();
  return r;
}

std::vector<const DescEntry*> Descriptor::dataFields() const {
  std::vector<const DescEntry*> out;
  for (auto& e : entries)
    if (e.isData()) out.push_back(&e);
  return out;
}

std::optional<std::string> Descriptor::ref() const {
  for (auto& e : entries)
    if (e.kind == DescEntry::Kind::REF) return e.name;
  return std::nullopt;
}

std::optional<std::string> Descriptor::profile() const {
  for (auto& e : entries)
    if (e.kind == DescEntry::Kind::TYPE) {
      std::string p = e.name;
      for (auto& c : p) c = char(toupper((unsigned char)c));
      return p;
    }
  return std::nullopt;
}

std::pair<int, int> Descriptor::retention() const {
  for (auto& e : entries)
    if (e.kind == DescEntry::Kind::RETENTION) return {e.capacity, e.segments};
  return {0, 0};
}

int Descriptor::retMemory() const {
  for (auto& e : entries)
    if (e.kind == DescEntry::Kind::RETMEMORY) return e.capacity;
  return 0;
}

static std::string body(const DescEntry& e) {
  switch (e.kind) {
    case DescEntry::Kind::DATA: {
      std::string s = descTypeName(e.type);
      s += ' ';
      s += e.name;
      if (e.count > 1 || e.type == ir::Type::STRING) (s += '[').append(std::to_string(e.count)) += ']';
      return s;
    }
    case DescEntry::Kind::REF: return "REF \"" + e.name + "\"";
    case DescEntry::Kind::TYPE: return "TYPE " + e.name;
    case DescEntry::Kind::RETENTION:
      return "RETENTION " + std::to_string(e.capacity) + " " + std::to_string(e.segments);
    case DescEntry::Kind::RETMEMORY: return "RETMEMORY " + std::to_string(e.capacity);
  }
  return "";
}

static bool omitted(const DescEntry& e) {
  return (e.kind == DescEntry::Kind::RETENTION && e.capacity == 0 && e.segments == 0) ||
         (e.kind == DescEntry::Kind::RETMEMORY && e.capacity == 0);
}

std::string Descriptor::text() const {
  if (entries.empty()) return "{Empty}";
  std::string s = "{";
  for (auto& e : entries)
    if (!omitted(e)) (s += '\t').append(body(e)) += '\n';
  return s + "}";
}

std::string Descriptor::textLine() const {
  if (entries.empty()) return "{Empty}";
  std::string s = "{";
  for (auto& e : entries)
    if (!omitted(e)) (s += ' ').append(body(e));
  return s + " }";
}

namespace {

struct Scanner {
  const std::string& s;
  size_t i = 0;

  void skip() {
    for (;;) {
      while (i < s.size() && isspace((unsigned char)s[i])) ++i;
      if (s.compare(i, 2, "/*") == 0) {
        int depth = 0;
        while (i < s.size()) {
          if (s.compare(i, 2, "/*") == 0) ++depth, i += 2;
          else if (s.compare(i, 2, "*/") == 0) {
            i += 2;
            if (--depth == 0) break;
          } else ++i;
        }
        continue;
      }
      if (s.compare(i, 2, "//") == 0 || s.compare(i, 2, "# ") == 0) {
        while (i < s.size() && s[i] != '\n') ++i;
        continue;
      }
      return;
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw DescError("descriptor: " + what + " at offset " + std::to_string(i));
  }
  std::string word() {
    skip();
    size_t b = i;
    while (i < s.size() && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '$')) ++i;
    if (b == i) fail("expected a word");
    return s.substr(b, i - b);
  }
  int number() {
    skip();
    size_t b = i;
    while (i < s.size() && isdigit((unsigned char)s[i])) ++i;
    if (b == i) fail("expected a number");
    int64_t v = 0;
    for (size_t k = b; k < i; ++k)
      if ((v = v * 10 + (s[k] - '0')) > INT32_MAX) fail("number " + s.substr(b, i - b) + " out of range");
    return int(v);
  }
  bool peek(char c) {
    skip();
    return i < s.size() && s[i] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++i;
  }
};

std::optional<ir::Type> typeWord(const std::string& w) {
  static const std::pair<const char*, ir::Type> words[] = {
      {"BYTE", ir::Type::BYTE},    {"INTEGER", ir::Type::INTEGER}, {"UINT", ir::Type::UINT},
      {"FLOAT", ir::Type::FLOAT},  {"DOUBLE", ir::Type::DOUBLE},   {"RATIONAL", ir::Type::RATIONAL},
      {"STRING", ir::Type::STRING}};
  for (auto& [n, t] : words)
    if (w == n) return t;
  return std::nullopt;
}

}  // namespace

Descriptor Descriptor::parse(const std::string& text) {
  // The stores allocate whole records: no record beyond the compiler's limit.
  constexpr int64_t kMaxRecord = 1 << 20;
  int64_t record = 0;
  Descriptor d;
  Scanner sc{text};
  sc.expect('{');
  while (!sc.peek('}')) {
    if (sc.i >= text.size()) sc.fail("missing '}'");
    std::string w = sc.word();
    DescEntry e;
    if (auto t = typeWord(w)) {
      e.kind = DescEntry::Kind::DATA;
      e.type = *t;
      e.name = sc.word();
      if (sc.peek('[')) {
        sc.expect('[');
        e.count = sc.number();
        sc.expect(']');
      } else if (*t == ir::Type::STRING) {
        sc.fail("STRING needs a size");
      }
      if (e.count <= 0) sc.fail("array size must be positive");
      record += int64_t(e.count) * (*t == ir::Type::STRING ? 1 : ir::typeSize(*t));
      if (record > kMaxRecord) sc.fail("record larger than 1 MiB");
    } else if (w == "REF") {
      e.kind = DescEntry::Kind::REF;
      sc.expect('"');
      size_t b = sc.i;
      while (sc.i < text.size() && text[sc.i] != '"') ++sc.i;
      if (sc.i >= text.size()) sc.fail("unterminated REF path");
      e.name = text.substr(b, sc.i - b);
      ++sc.i;
    } else if (w == "TYPE") {
      e.kind = DescEntry::Kind::TYPE;
      e.name = sc.word();
    } else if (w == "RETENTION") {
      e.kind = DescEntry::Kind::RETENTION;
      e.capacity = sc.number();
      e.segments = sc.number();
    } else if (w == "RETMEMORY") {
      e.kind = DescEntry::Kind::RETMEMORY;
      e.capacity = sc.number();
    } else {
      sc.fail("unknown word '" + w + "'");
    }
    d.entries.push_back(std::move(e));
  }
  return d;
}

Descriptor Descriptor::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DescError("cannot open descriptor " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse(ss.str());
  } catch (const DescError& e) {
    throw DescError(path + ": " + e.what());
  }
}

void Descriptor::save(const std::string& path) const {
  // Written whole to a temporary file, then renamed over the old one: a full
  // disk leaves the old descriptor (or none), never a torn one.
  std::string tmp = ArtifactPaths::tmpOf(path);
  auto failed = [&](int err) {
    std::remove(tmp.c_str());
    return DescError("cannot write descriptor " + path + (err ? std::string(": ") + strerror(err) : std::string()));
  };
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw failed(errno);
    out << text();
    out.close();  // the bytes reach the file here: check this write too
    if (out.fail()) throw failed(errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw failed(errno);
}

bool Descriptor::compatibleWith(const Descriptor& stored) const {
  auto a = dataFields(), b = stored.dataFields();
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i]->byteSize() < b[i]->byteSize() || a[i]->type < b[i]->type) return false;
  return true;
}

}  // namespace storage
