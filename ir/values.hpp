// Value semantics of the language, shared by the compiler's constant folder,
// the VM, the JIT's runtime helpers and storage: conversions, exact
// rationals, text forms (the rules: docs/rql.md; semantics.hpp builds on these).
#pragma once

#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>

namespace ir::val {

// ------------------------------------------------------------ rationals
// A RATIONAL is a reduced fraction num/den with den > 0 and |num|, den <= 2^31-1
// (so INT32_MIN never appears and negation never overflows). Every operation
// computes its exact result in wider integers and reduces it; a result that
// does not fit becomes the representable fraction nearest to it (best rational
// approximation under both bounds; on a tie the smaller denominator), and a
// magnitude beyond 2^31-1 saturates to +-(2^31-1)/1. This is the only
// implementation: the VM, the JIT's helpers, the engine's reducers and the
// conversions all call it. `ratRounded()` counts the results that had to round.
struct Rat {
  int32_t num = 0, den = 1;
};
inline bool operator==(Rat a, Rat b) { return a.num == b.num && a.den == b.den; }

constexpr int64_t kRatMax = INT32_MAX;
using u128 = unsigned __int128;

// Results rounded to a representable fraction, per thread (the engine sums them per stream).
inline uint64_t& ratRounded() {
  static thread_local uint64_t n = 0;
  return n;
}

namespace detail {

// Binary gcd in the width of U (32-bit divisions are the cheaper ones).
template <class U>
U gcdBinary(U a, U b) {
  // Parts of very different size (a sum over a count): one remainder first,
  // so the binary steps run on small numbers only.
  if ((a >> 8) > b && b != 0) a %= b;
  else if ((b >> 8) > a && a != 0) b %= a;
  if (a == 0) return b;
  if (b == 0) return a;
  int s = std::countr_zero(U(a | b));
  a >>= std::countr_zero(a);
  do {
    b >>= std::countr_zero(b);
    if (a > b) std::swap(a, b);
    b -= a;
  } while (b);
  return a << s;
}
inline uint64_t gcd64(uint64_t a, uint64_t b) { return gcdBinary(a, b); }

// 256-bit products for comparing distances exactly.
struct U256 {
  u128 hi = 0, lo = 0;
};
inline U256 mul(u128 a, u128 b) {
  const u128 m = ~uint64_t(0);
  u128 a0 = a & m, a1 = a >> 64, b0 = b & m, b1 = b >> 64;
  u128 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  u128 mid = (p00 >> 64) + (p01 & m) + (p10 & m);
  U256 r;
  r.lo = (p00 & m) | (mid << 64);
  r.hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
  return r;
}
inline int cmp(U256 a, U256 b) {
  if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
  if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
  return 0;
}
inline u128 absDiff(u128 a, u128 b) { return a > b ? a - b : b - a; }

// The fraction p/q (p <= lim, 1 <= q <= lim) nearest to x = a/b > 0, for
// x < lim. Continued fractions: the last convergent inside the bounds, or the
// largest semiconvergent after it, whichever is nearer (a tie keeps the
// smaller denominator). a and b are below 2^96, so a*q and b*p fit 128 bits.
// `exact` (when given) tells whether x itself was within the bounds: the
// expansion ended there, in lowest terms, so a and b need not be reduced.
inline void nearest(u128 a, u128 b, uint64_t lim, uint64_t& P, uint64_t& Q, bool* exact = nullptr) {
  const u128 A = a, Bd = b;
  u128 p0 = 0, q0 = 1, p1 = 1, q1 = 0;  // convergents k-2 and k-1
  if (exact) *exact = false;
  for (;;) {
    // Once both parts fit 64 bits, 64-bit divisions (no 128-bit library call).
    u128 t = ((a | b) >> 64) == 0 ? u128(uint64_t(a) / uint64_t(b)) : a / b;
    u128 p2 = t * p1 + p0, q2 = t * q1 + q0;
    // t can be huge: test the bounds without overflowing
    bool over = (p1 && t > (lim - p0) / p1) || (q1 && t > (lim - q0) / q1) || p2 > lim || q2 > lim;
    if (over) {
      u128 tp = p1 ? (lim - p0) / p1 : ~u128(0), tq = q1 ? (lim - q0) / q1 : ~u128(0);
      u128 ts = tp < tq ? tp : tq;  // the largest semiconvergent inside the bounds
      P = uint64_t(p1), Q = uint64_t(q1);
      if (ts == 0) return;
      u128 sp = ts * p1 + p0, sq = ts * q1 + q0;
      // |x - p/q| = |a q - b p| / (b q): compare |a q1 - b p1| * sq with |a sq - b sp| * q1
      U256 dConv = mul(absDiff(A * q1, Bd * p1), sq), dSemi = mul(absDiff(A * sq, Bd * sp), q1);
      int c = cmp(dSemi, dConv);
      if (c < 0 || (c == 0 && sq < q1)) P = uint64_t(sp), Q = uint64_t(sq);
      return;
    }
    p0 = p1, q0 = q1, p1 = p2, q1 = q2;
    u128 r = a - t * b;
    if (r == 0) {
      P = uint64_t(p1), Q = uint64_t(q1);
      if (exact) *exact = true;
      return;
    }
    a = b;
    b = r;
  }
}

// The end of nearest64() for x = A/B once the next convergent leaves the
// bounds: the last convergent p1/q1 or the largest semiconvergent after it,
// whichever is nearer (a tie keeps the smaller denominator).
inline void nearestSemi(uint64_t A, uint64_t Bd, uint64_t lim, uint64_t p0, uint64_t q0, uint64_t p1, uint64_t q1,
                        uint64_t& P, uint64_t& Q) {
  P = p1, Q = q1;
  uint64_t tp = p1 ? (lim - p0) / p1 : ~uint64_t(0), tq = q1 ? (lim - q0) / q1 : ~uint64_t(0);
  uint64_t ts = tp < tq ? tp : tq;
  if (ts == 0) return;
  uint64_t sp = ts * p1 + p0, sq = ts * q1 + q0;
  // |A q - B p| < 2^95 and times a denominator < 2^126: 128 bits suffice
  u128 dConv = absDiff(u128(A) * q1, u128(Bd) * p1) * sq, dSemi = absDiff(u128(A) * sq, u128(Bd) * sp) * q1;
  if (dSemi < dConv || (dSemi == dConv && sq < q1)) P = sp, Q = sq;
}

// nearest() for a and b below 2^64 (every binary operation): 64-bit steps and
// 128-bit distances. `exact` tells whether the expansion ended inside the
// bounds (the value itself, reduced: convergents are in lowest terms).
inline void nearest64(uint64_t a, uint64_t b, uint64_t lim, uint64_t& P, uint64_t& Q, bool& exact) {
  const uint64_t A = a, Bd = b;
  uint64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;
  exact = false;
  for (;;) {
    uint64_t t = a / b, r = a - t * b;
    // One division a step: the bound test multiplies in 128 bits instead.
    bool over = u128(t) * p1 + p0 > lim || u128(t) * q1 + q0 > lim;
    if (!over) {
      uint64_t p2 = t * p1 + p0, q2 = t * q1 + q0;
      p0 = p1, q0 = q1, p1 = p2, q1 = q2;
      if (r == 0) {
        P = p1, Q = q1, exact = true;
        return;
      }
      a = b;
      b = r;
      continue;
    }
    nearestSemi(A, Bd, lim, p0, q0, p1, q1, P, Q);
    return;
  }
}

}  // namespace detail

// A result of nearest64(): counted when it rounded, signed.
inline Rat ratOfNearest(bool neg, uint64_t P, uint64_t Q, bool exact) {
  if (!exact) ++ratRounded();
  if (P == 0) return {0, 1};
  return {neg ? -int32_t(P) : int32_t(P), int32_t(Q)};
}

// The RATIONAL nearest to (neg ? -1 : 1) * a / b, b > 0, a and b below 2^96;
// `lim` is the bound of both parts (2^31-1; smaller in tests of the method).
inline Rat ratFromParts(bool neg, u128 a, u128 b, uint64_t lim = uint64_t(kRatMax)) {
  if (a == 0) return {0, 1};
  if ((a >> 64) == 0 && (b >> 64) == 0 && (a > lim || b > lim)) {
    // Large parts: the continued fraction finds the reduced value when it fits
    // and the nearest one when it does not, with no gcd of the big numbers.
    uint64_t P, Q;
    bool exact;
    if (a >= u128(lim) * b) P = lim, Q = 1, exact = a == u128(lim) * b;
    else detail::nearest64(uint64_t(a), uint64_t(b), lim, P, Q, exact);
    return ratOfNearest(neg, P, Q, exact);
  }
  if ((a >> 64) == 0 && (b >> 64) == 0) {  // 64-bit parts: 64-bit divisions (no 128-bit library call)
    const uint64_t g = detail::gcd64(uint64_t(a), uint64_t(b));
    if (g > 1) a = uint64_t(a) / g, b = uint64_t(b) / g;
  } else {
    // Wide parts: as above, the continued fraction reduces them on its way.
    uint64_t P, Q;
    bool exact;
    if (a >= u128(lim) * b) P = lim, Q = 1, exact = a == u128(lim) * b;
    else detail::nearest(a, b, lim, P, Q, &exact);
    return ratOfNearest(neg, P, Q, exact);
  }
  uint64_t P, Q;
  if (a <= lim && b <= lim) {
    P = uint64_t(a), Q = uint64_t(b);
  } else {
    ++ratRounded();
    if (a >= u128(lim) * b) P = lim, Q = 1;  // beyond the largest magnitude: saturate
    else detail::nearest(a, b, lim, P, Q);
  }
  if (P == 0) return {0, 1};
  return {neg ? -int32_t(P) : int32_t(P), int32_t(Q)};
}
inline Rat ratFromWide(__int128 n, __int128 d) {
  if (d == 0) return {0, 1};  // never a value: only the unused result of a NULL operand
  bool neg = (n < 0) != (d < 0);
  u128 a = n < 0 ? u128(-n) : u128(n), b = d < 0 ? u128(-d) : u128(d);
  return ratFromParts(neg, a, b);
}
inline Rat ratNorm(int64_t n, int64_t d) { return ratFromWide(n, d); }
// sum / n for |sum| <= 2^31-1 and 1 <= n <= 2^31-1 (the mean of an exact
// integer fold): always exact, the reduced fraction ratFromParts makes, by a
// 32-bit gcd.
inline Rat ratMean(int64_t sum, int64_t n) {
  if (sum == 0) return {0, 1};
  const uint32_t a = uint32_t(sum < 0 ? -sum : sum), b = uint32_t(n);
  const uint32_t g = b == 1 ? 1 : detail::gcdBinary(a, b);
  if (g == 1) return {int32_t(sum), int32_t(b)};  // already in lowest terms: no division
  const int32_t num = int32_t(a / g);
  return {sum < 0 ? -num : num, int32_t(b / g)};
}
inline Rat ratFromInt(int64_t v) {
  if (v > kRatMax || v < -kRatMax) {
    ++ratRounded();
    return {v < 0 ? -int32_t(kRatMax) : int32_t(kRatMax), 1};
  }
  return {int32_t(v), 1};
}
// A stored pair that may break the rule (another program's file): made valid.
inline Rat ratNormalize(Rat r) {
  if (r.den > 0 && r.num != INT32_MIN &&
      (r.den == 1 || detail::gcd64(uint64_t(r.num < 0 ? -int64_t(r.num) : r.num), uint64_t(r.den)) == 1))
    return r.num == 0 ? Rat{0, 1} : r;
  if (r.den == 0) return ratFromInt(r.num);  // no value: read as the numerator
  return ratFromWide(r.num, r.den);
}

inline Rat ratAdd(Rat a, Rat b) {
  if (a.den == b.den) {
    int64_t n = int64_t(a.num) + b.num;
    if (a.den == 1) return ratFromInt(n);
    return ratFromWide(n, a.den);
  }
  return ratFromWide(__int128(a.num) * b.den + __int128(b.num) * a.den, __int128(a.den) * b.den);
}
inline Rat ratSub(Rat a, Rat b) {
  if (a.den == b.den) {
    int64_t n = int64_t(a.num) - b.num;
    if (a.den == 1) return ratFromInt(n);
    return ratFromWide(n, a.den);
  }
  return ratFromWide(__int128(a.num) * b.den - __int128(b.num) * a.den, __int128(a.den) * b.den);
}
inline Rat ratMul(Rat a, Rat b) {
  if (a.den == 1 && b.den == 1) return ratFromInt(int64_t(a.num) * b.num);
  return ratFromWide(__int128(a.num) * b.num, __int128(a.den) * b.den);
}
inline Rat ratDiv(Rat a, Rat b) {  // b.num != 0 (division by zero is NULL before this)
  if (b.num == 0) return {0, 1};
  return ratFromWide(__int128(a.num) * b.den, __int128(a.den) * b.num);
}
inline Rat ratNeg(Rat a) { return {-a.num, a.den}; }  // |num| <= 2^31-1: never overflows
inline Rat ratAbs(Rat a) { return {a.num < 0 ? -a.num : a.num, a.den}; }
// num/den truncated toward zero (den > 0 always).
inline int32_t ratToInt(Rat r) { return r.den == 1 ? r.num : r.num / r.den; }
inline int ratCmp(Rat a, Rat b) {  // exact: both products fit 64 bits
  int64_t l = int64_t(a.num) * b.den, r = int64_t(b.num) * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

// The RATIONAL nearest to a double, sign-correct (NaN and infinities give 0/1:
// callers treat non-finite values first).
inline Rat rationalize(double x) {
  if (!std::isfinite(x) || x == 0) return {0, 1};
  bool neg = x < 0;
  double m = std::fabs(x);
  if (m >= double(kRatMax)) {
    if (m > double(kRatMax)) ++ratRounded();
    return {neg ? -int32_t(kRatMax) : int32_t(kRatMax), 1};
  }
  // Below half the smallest step (1/(2^31-1)) the nearest is 0.
  if (m < 0.5 / double(kRatMax)) {
    ++ratRounded();
    return {0, 1};
  }
  // m = mant * 2^e exactly, mant < 2^53, and e >= -32-53: fits 2^96.
  int e;
  double f = std::frexp(m, &e);  // m = f * 2^e, 0.5 <= f < 1
  uint64_t mant = uint64_t(std::ldexp(f, 53));
  e -= 53;
  if (e >= 0) return ratFromParts(neg, u128(mant) << e, 1);
  int tz = __builtin_ctzll(mant);
  int sh = std::min(tz, -e);
  mant >>= sh;
  e += sh;
  return ratFromParts(neg, mant, u128(1) << (-e));
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

// "n" or "n/d" with decimal integers of any length; a value that does not fit
// is rounded by the RATIONAL rule. False when there is no number or d is 0.
inline bool parseRational(const std::string& s, Rat& out) {
  auto part = [](std::string_view t, bool& neg, u128& v) {
    size_t i = 0;
    neg = false;
    if (i < t.size() && t[i] == '-') neg = true, ++i;
    size_t start = i;
    v = 0;
    const u128 cap = u128(1) << 95;  // beyond it only the ratio matters: saturates below
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (v < cap) v = v * 10 + u128(t[i] - '0');
      ++i;
    }
    return i != start;
  };
  bool nn, dn = false;
  u128 n, d = 1;
  auto slash = s.find('/');
  if (!part(std::string_view(s).substr(0, slash), nn, n)) return false;
  if (slash != std::string::npos && !part(std::string_view(s).substr(slash + 1), dn, d)) return false;
  if (d == 0) return false;
  while (n >= (u128(1) << 95) || d >= (u128(1) << 95)) n >>= 1, d >>= 1;  // keeps the ratio to 2^-64
  if (d == 0) d = 1;
  out = ratFromParts(nn != dn, n, d);
  return true;
}

// ------------------------------------------------------------ text forms
inline std::string fmtFixed(double d) {
  char buf[512];
  snprintf(buf, sizeof buf, "%f", d);
  return buf;
}
inline std::string fmtRat(Rat r) { return std::to_string(r.num) + "/" + std::to_string(r.den); }

}  // namespace ir::val
