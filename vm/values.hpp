// Value semantics shared by the VM and the JIT's runtime helpers:
// conversions, exact rationals, text forms. See docs/semantics.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <climits>
#include <numeric>
#include <string>
#include <string_view>

namespace vm::val {

// ------------------------------------------------------------ rationals
struct Rat {
  int32_t num = 0, den = 1;
};

// Exact rationals over 32-bit ints, with the algorithms of boost::rational<int>
// (cross-cancelling gcds first); a result that still does not fit wraps
// silently, as it does there.
inline int32_t gcd32(int32_t a, int32_t b) {
  uint32_t x = a < 0 ? 0u - uint32_t(a) : uint32_t(a), y = b < 0 ? 0u - uint32_t(b) : uint32_t(b);
  while (y) {
    uint32_t t = x % y;
    x = y;
    y = t;
  }
  return int32_t(x);
}
inline int32_t wmul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); }
inline int32_t wadd(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
inline int32_t wsub(int32_t a, int32_t b) { return int32_t(uint32_t(a) - uint32_t(b)); }

inline Rat ratNorm(int64_t n, int64_t d) {
  if (d < 0) n = -n, d = -d;
  int64_t g = std::gcd(n < 0 ? -n : n, d);
  if (g > 1) n /= g, d /= g;
  if (n == 0) d = 1;
  return {int32_t(uint32_t(n)), int32_t(uint32_t(d))};
}
inline Rat ratAdd(Rat a, Rat b) {
  int32_t g = gcd32(a.den, b.den);
  if (g == 0) return {0, 1};
  int32_t den = a.den / g;
  int32_t num = wadd(wmul(a.num, b.den / g), wmul(b.num, den));
  g = gcd32(num, g);
  if (g == 0) g = 1;
  num /= g;
  den = wmul(den, b.den / g);
  return {num, den};
}
inline Rat ratSub(Rat a, Rat b) {
  int32_t g = gcd32(a.den, b.den);
  if (g == 0) return {0, 1};
  int32_t den = a.den / g;
  int32_t num = wsub(wmul(a.num, b.den / g), wmul(b.num, den));
  g = gcd32(num, g);
  if (g == 0) g = 1;
  num /= g;
  den = wmul(den, b.den / g);
  return {num, den};
}
inline Rat ratMul(Rat a, Rat b) {
  int32_t g1 = gcd32(a.num, b.den), g2 = gcd32(b.num, a.den);
  if (g1 == 0) g1 = 1;
  if (g2 == 0) g2 = 1;
  Rat r{wmul(a.num / g1, b.num / g2), wmul(a.den / g2, b.den / g1)};
  if (r.num == 0) r.den = 1;
  return r;
}
inline Rat ratDiv(Rat a, Rat b) {  // b.num != 0 (division by zero is NULL before this)
  int32_t g1 = gcd32(a.num, b.num), g2 = gcd32(b.den, a.den);
  if (g1 == 0) g1 = 1;
  if (g2 == 0) g2 = 1;
  Rat r{wmul(a.num / g1, b.den / g2), wmul(a.den / g2, b.num / g1)};
  if (r.den < 0) r.num = int32_t(0u - uint32_t(r.num)), r.den = int32_t(0u - uint32_t(r.den));
  if (r.num == 0) r.den = 1;
  return r;
}
// num/den truncated toward zero. An overflowed rational (denominator 0 or
// INT_MIN/-1) never traps: it reads as its numerator / as INT_MIN.
inline int32_t ratToInt(Rat r) {
  if (r.den == 0) return r.num;
  if (r.den == -1 && r.num == INT32_MIN) return INT32_MIN;
  return r.num / r.den;
}
inline int ratCmp(Rat a, Rat b) {
  int64_t l = int64_t(a.num) * b.den, r = int64_t(b.num) * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

// Continued-fraction approximation (tolerance 1e-6, at most 12 terms).
// Negative inputs come out truncated toward zero (compatible behaviour).
inline Rat rationalize(double x) {
  if (!std::isfinite(x)) return {0, 1};
  if (x < 0) {
    double t = std::trunc(x);
    if (t < INT32_MIN) return {INT32_MIN, 1};
    return {int32_t(t), 1};
  }
  int64_t qs[12];
  int n = 0;
  double v = x;
  for (;;) {
    double fl = std::floor(v);
    if (fl > 2147483647.0) fl = 2147483647.0;
    int64_t q = int64_t(fl);
    qs[n++] = q;
    if (n == 12) break;
    double f = v - double(q);
    if (f < 1e-6) break;
    v = 1.0 / f;
    if (v > 1e6) break;
  }
  int64_t num = qs[n - 1], den = 1;
  for (int i = n - 2; i >= 0; --i) {
    // r = q + 1/r  ->  (q*num + den) / num
    int64_t nn = qs[i] * num + den;
    den = num;
    num = nn;
    if (num > INT32_MAX || den > INT32_MAX) break;
  }
  return ratNorm(num, den);
}

// ------------------------------------------------------------ to integers
inline int32_t f2i32(double d) {
  if (std::isnan(d) || d >= 2147483648.0 || d <= -2147483649.0) return INT32_MIN;  // x86 "indefinite"
  return int32_t(d);
}
inline uint32_t f2u32(double d) {
  if (std::isnan(d) || std::fabs(d) >= 9.2e18) return 0;
  return uint32_t(uint64_t(int64_t(d)));
}
inline uint8_t f2u8(double d) { return uint8_t(uint32_t(f2i32(d))); }

// Longest prefix "-?[0-9]+" as a 32-bit int; false when there is none or it overflows.
inline bool parseIntPrefix(std::string_view s, int32_t& out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && s[i] == '-') neg = true, ++i;
  size_t start = i;
  int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    v = v * 10 + (s[i] - '0');
    if (v > int64_t(INT32_MAX) + 1) return false;
    ++i;
  }
  if (i == start) return false;
  if (neg) v = -v;
  if (v > INT32_MAX || v < INT32_MIN) return false;
  out = int32_t(v);
  return true;
}

// Longest prefix parsed as a double (decimal, exponent, inf, nan).
inline bool parseDoublePrefix(const std::string& s, double& out) {
  const char* b = s.c_str();
  char* e = nullptr;
  out = strtod(b, &e);
  return e != b;
}

inline bool parseRational(const std::string& s, Rat& out) {
  int32_t n = 0, d = 1;
  auto slash = s.find('/');
  if (!parseIntPrefix(std::string_view(s).substr(0, slash), n)) return false;
  if (slash != std::string::npos && !parseIntPrefix(std::string_view(s).substr(slash + 1), d)) return false;
  if (d == 0) return false;
  out = ratNorm(n, d);
  return true;
}

// ------------------------------------------------------------ text forms
inline std::string fmtFixed(double d) {
  char buf[512];
  snprintf(buf, sizeof buf, "%f", d);
  return buf;
}
inline std::string fmtRat(Rat r) { return std::to_string(r.num) + "/" + std::to_string(r.den); }

}  // namespace vm::val
