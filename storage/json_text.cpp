// Record values as JSON text (json_text.hpp).
#include "json_text.hpp"

#include <cmath>
#include <cstdint>

namespace storage {

namespace {

constexpr char kReplacement[] = "\xef\xbf\xbd";  // U+FFFD in UTF-8

// The length of the well-formed character at s[i], or 0 when none starts
// there; then `bad` is the length of the maximal subpart to replace (>= 1).
// The ranges are those of the Unicode standard's table of well-formed UTF-8
// byte sequences: no overlong forms, no surrogates, nothing past U+10FFFF.
size_t character(std::string_view s, size_t i, size_t& bad) {
  const auto b = [&](size_t k) { return uint8_t(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t need;
  uint8_t lo = 0x80, hi = 0xbf;  // the second byte's range
  if (c >= 0xc2 && c <= 0xdf) need = 1;
  else if (c == 0xe0) need = 2, lo = 0xa0;
  else if (c == 0xed) need = 2, hi = 0x9f;
  else if (c >= 0xe1 && c <= 0xef) need = 2;
  else if (c == 0xf0) need = 3, lo = 0x90;
  else if (c == 0xf4) need = 3, hi = 0x8f;
  else if (c >= 0xf1 && c <= 0xf3) need = 3;
  else {
    bad = 1;  // 80..C1, F5..FF: never the first byte of a character
    return 0;
  }
  size_t k = 0;
  for (; k < need && i + 1 + k < s.size(); ++k) {
    const uint8_t x = b(i + 1 + k);
    if (x < (k == 0 ? lo : 0x80) || x > (k == 0 ? hi : 0xbf)) break;
  }
  if (k == need) return need + 1;
  bad = k + 1;  // the lead and the continuation bytes that fit: the next byte is read afresh
  return 0;
}

}  // namespace

std::string jsonText(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t bad = 0;
    const size_t n = character(bytes, i, bad);
    if (n) {
      out.append(bytes.data() + i, n);
      i += n;
    } else {
      out += kReplacement;
      i += bad;
    }
  }
  return out;
}

void appendJsonString(std::string& out, std::string_view bytes) {
  static const char hex[] = "0123456789abcdef";
  const std::string text = jsonText(bytes);
  out += '"';
  for (const char ch : text) {
    const auto c = uint8_t(ch);
    if (c == '"' || c == '\\') out += '\\', out += ch;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) out += "\\u00", out += hex[c >> 4], out += hex[c & 15];
    else out += ch;
  }
  out += '"';
}

const char* nonFiniteName(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return nullptr;
}

}  // namespace storage
