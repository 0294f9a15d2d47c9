// What travels on the socket: frames and the INFO tree text inside them.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "ipc.hpp"

namespace ipc {

// ---------------------------------------------------------------- tree
Tree& Tree::add(const std::string& key, const std::string& v) {
  children.emplace_back(key, Tree(v));
  return children.back().second;
}

const Tree* Tree::child(const std::string& key) const {
  for (auto& [k, t] : children)
    if (k == key) return &t;
  return nullptr;
}

const Tree* Tree::path(const std::string& dotted) const {
  const Tree* t = this;
  size_t pos = 0;
  while (t && pos <= dotted.size()) {
    size_t dot = dotted.find('.', pos);
    if (dot == std::string::npos) dot = dotted.size();
    t = t->child(dotted.substr(pos, dot - pos));
    pos = dot + 1;
  }
  return t;
}

void recordOf(const Tree& m, std::vector<std::string>& values, std::vector<bool>& nulls) {
  const size_t n = size_t(std::max(0L, atol(m.get("count").c_str())));
  const std::string map = m.get("nullmap");
  values.assign(n, std::string());
  nulls.assign(n, false);
  for (size_t k = 0; k < n; ++k) {
    values[k] = m.get(std::to_string(k));
    nulls[k] = k < map.size() && map[k] == '1';
  }
}

std::string Tree::get(const std::string& dotted, const std::string& def) const {
  const Tree* t = path(dotted);
  return t ? t->value : def;
}

namespace {

bool bareSafe(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '{' || c == '}' || c == '\\' || c == ';') return false;
  return true;
}

void appendToken(std::string& out, const std::string& s) {
  if (bareSafe(s)) {
    out += s;
    return;
  }
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\0': out += "\\0"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  out += '"';
}

void appendTree(std::string& out, const Tree& t, int depth) {
  for (auto& [k, c] : t.children) {
    out.append(size_t(depth) * 2, ' ');
    appendToken(out, k);
    if (!c.value.empty()) {
      out += ' ';
      appendToken(out, c.value);
    }
    if (!c.children.empty()) {
      out += " {\n";
      appendTree(out, c, depth + 1);
      out.append(size_t(depth) * 2, ' ');
      out += '}';
    }
    out += '\n';
  }
}

struct Parser {
  const std::string& s;
  size_t i = 0;
  std::string err;

  bool fail(const std::string& why) {
    if (err.empty()) err = why + " at offset " + std::to_string(i);
    return false;
  }
  void skipBlanks() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  void skipSpace() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
  }
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool token(std::string& out) {
    out.clear();
    if (i >= s.size()) return fail("token expected");
    if (s[i] == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') {
        char c = s[i++];
        if (c == '\n') return fail("newline in a quoted string");
        if (c != '\\') {
          out += c;
          continue;
        }
        if (i >= s.size()) return fail("unterminated escape");
        char e = s[i++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case '0': out += '\0'; break;
          case 'x': {
            if (i + 2 > s.size() || hex(s[i]) < 0 || hex(s[i + 1]) < 0) return fail("bad \\x escape");
            out += char(hex(s[i]) * 16 + hex(s[i + 1]));
            i += 2;
            break;
          }
          default: return fail("unknown escape");
        }
      }
      if (i >= s.size()) return fail("unterminated string");
      ++i;
      return true;
    }
    size_t b = i;
    while (i < s.size()) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '{' || c == '}' || c == '"' || c == ';') break;
      if (c < 0x20 || c == 0x7f) return fail("control character");
      ++i;
    }
    if (i == b) return fail("token expected");
    out.assign(s, b, i - b);
    return true;
  }
  bool entries(Tree& t, int depth, bool closed) {
    if (depth > 64) return fail("nesting too deep");
    for (;;) {
      skipSpace();
      if (i >= s.size()) return closed ? fail("missing '}'") : true;
      if (s[i] == '}') {
        if (!closed) return fail("unexpected '}'");
        ++i;
        return true;
      }
      if (s[i] == '{') return fail("unexpected '{'");
      std::string key, value;
      if (!token(key)) return false;
      skipBlanks();
      if (i < s.size() && s[i] != '\n' && s[i] != '{' && s[i] != '}' && s[i] != ';') {
        if (!token(value)) return false;
        skipBlanks();
      }
      Tree& c = t.add(key, value);
      if (i < s.size() && s[i] == '{') {
        ++i;
        if (!entries(c, depth + 1, true)) return false;
        skipBlanks();
      }
      if (i < s.size() && s[i] == ';') {  // `a 1; b 2` on one line
        ++i;
        continue;
      }
      if (i < s.size() && s[i] != '\n' && s[i] != '}') return fail("end of line expected");
    }
  }
};

}  // namespace

std::string Tree::text() const {
  std::string out;
  appendTree(out, *this, 0);
  return out;
}

std::optional<Tree> Tree::parse(const std::string& text, std::string* error) {
  Parser p{text, 0, {}};
  Tree t;
  if (!p.entries(t, 0, false)) {
    if (error) *error = p.err;
    return std::nullopt;
  }
  return t;
}

// ---------------------------------------------------------------- frames
std::string encodeFrame(Kind kind, const std::string& payload) {
  if (payload.size() > kMaxPayload)
    throw std::length_error("ipc: payload of " + std::to_string(payload.size()) + " bytes");
  std::string f(kHeaderSize, '\0');
  memcpy(f.data(), kMagic, 4);
  f[4] = char(kVersion);
  f[5] = char(kind);
  const uint32_t n = uint32_t(payload.size());
  f[8] = char(n >> 24);
  f[9] = char(n >> 16);
  f[10] = char(n >> 8);
  f[11] = char(n);
  f += payload;
  return f;
}

void FrameReader::feed(const char* data, size_t n) {
  if (off_ > 0 && off_ == buf_.size()) {
    buf_.clear();
    off_ = 0;
  } else if (off_ > 65536 && off_ * 2 > buf_.size()) {
    buf_.erase(0, off_);
    off_ = 0;
  }
  buf_.append(data, n);
}

FrameReader::Result FrameReader::next(Frame& out, std::string& error) {
  const size_t have = buf_.size() - off_;
  const auto* h = reinterpret_cast<const unsigned char*>(buf_.data() + off_);
  // Check what has arrived of the header at once: garbage is refused early.
  for (size_t k = 0; k < 4 && k < have; ++k)
    if (h[k] != static_cast<unsigned char>(kMagic[k])) {
      error = "bad magic";
      return Result::Bad;
    }
  if (have > 4 && h[4] != kVersion) {
    error = "unsupported protocol version " + std::to_string(h[4]);
    return Result::Bad;
  }
  if (have > 5 && (h[5] < 1 || h[5] > 4)) {
    error = "unknown frame kind " + std::to_string(h[5]);
    return Result::Bad;
  }
  if (have < kHeaderSize) return Result::NeedMore;
  const uint32_t n = uint32_t(h[8]) << 24 | uint32_t(h[9]) << 16 | uint32_t(h[10]) << 8 | uint32_t(h[11]);
  if (n > kMaxPayload) {
    error = "frame of " + std::to_string(n) + " bytes exceeds the limit of " + std::to_string(kMaxPayload);
    return Result::Bad;
  }
  if (have < kHeaderSize + n) return Result::NeedMore;
  out.kind = Kind(h[5]);
  out.payload.assign(buf_, off_ + kHeaderSize, n);
  off_ += kHeaderSize + n;
  return Result::Frame;
}

// ---------------------------------------------------------------- names
std::string socketPath(const std::string& dir, const std::string& name) {
  std::filesystem::path d = dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(dir);
  return (d / (name.empty() ? std::string("xretractor_service.sock") : "xretractor_" + name + "_service.sock"))
      .string();
}

}  // namespace ipc
