// Per-value semantics written once: the arithmetic, NULL-producing cases
// (a zero divisor), INT_MIN / -1, canonical NaN and the numeric conversion
// matrix. The interpreter (vm/exec.cpp), the constant folder (ir/passes/eval.cpp)
// and the engine's record conversions (engine/convert.hpp) call these; the
// JIT's runtime helpers call values.hpp underneath them. Operands: l op r.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "values.hpp"

namespace ir::val {

template <class C>
constexpr bool kIsFloat = std::is_floating_point_v<C>;

// + - * (INTEGER wraps; RATIONAL rounds to the nearest representable).
inline int32_t add(int32_t l, int32_t r) { return int32_t(uint32_t(l) + uint32_t(r)); }
inline int32_t sub(int32_t l, int32_t r) { return int32_t(uint32_t(l) - uint32_t(r)); }
inline int32_t mul(int32_t l, int32_t r) { return int32_t(uint32_t(l) * uint32_t(r)); }
inline Rat add(Rat l, Rat r) { return ratAdd(l, r); }
inline Rat sub(Rat l, Rat r) { return ratSub(l, r); }
inline Rat mul(Rat l, Rat r) { return ratMul(l, r); }
template <class C>
C add(C l, C r) {
  return C(l + r);
}
template <class C>
C sub(C l, C r) {
  return C(l - r);
}
template <class C>
C mul(C l, C r) {
  return C(l * r);
}

inline bool isZero(Rat v) { return v.num == 0; }
template <class C>
bool isZero(C v) {
  return v == 0;
}

// l / r; false when the result is NULL (a zero divisor). INT_MIN / -1 wraps.
template <class C>
bool div(C l, C r, C& out) {
  if (isZero(r)) return false;
  if constexpr (std::is_same_v<C, Rat>) out = ratDiv(l, r);
  else if constexpr (std::is_same_v<C, int32_t>) out = (l == INT32_MIN && r == -1) ? INT32_MIN : l / r;
  else out = C(l / r);
  return true;
}

// Negation: BYTE and UINT complement their bits; INTEGER wraps.
template <class C>
C neg(C v) {
  if constexpr (std::is_same_v<C, Rat>) return ratNeg(v);  // |num| <= 2^31-1: no overflow
  else if constexpr (std::is_same_v<C, int32_t>) return int32_t(0u - uint32_t(v));
  else if constexpr (std::is_unsigned_v<C>) return C(~v);
  else return -v;
}
// Absolute value: INTEGER wraps (INT_MIN stays); BYTE and UINT are never negative.
template <class C>
C abs(C v) {
  if constexpr (std::is_same_v<C, Rat>) return v.num < 0 ? Rat{int32_t(0u - uint32_t(v.num)), v.den} : v;
  else if constexpr (std::is_same_v<C, int32_t>) return v < 0 ? int32_t(0u - uint32_t(v)) : v;
  else if constexpr (kIsFloat<C>) return std::fabs(v);
  else return v;
}

// What a stored float holds: NaN sign and payload are not portable across optimisers.
template <class C>
C canonical(C v) {
  if constexpr (kIsFloat<C>)
    if (std::isnan(v)) return std::numeric_limits<C>::quiet_NaN();
  return v;
}

// The numeric conversion matrix (C types uint8_t int32_t uint32_t Rat float double).
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (kIsFloat<From>) {
    const double d = double(v);
    if constexpr (std::is_same_v<To, uint8_t>) return f2u8(d);
    else if constexpr (std::is_same_v<To, int32_t>) return f2i32(d);
    else if constexpr (std::is_same_v<To, uint32_t>) return f2u32(d);
    else if constexpr (std::is_same_v<To, Rat>) return rationalize(d);
    else return To(d);
  } else if constexpr (std::is_same_v<From, Rat>) {
    if constexpr (kIsFloat<To>) return To(v.num) / To(v.den);
    else return To(ratToInt(v));
  } else if constexpr (std::is_same_v<To, Rat>) {
    return ratFromInt(int64_t(v));
  } else {
    return To(v);  // integer to integer or float: static_cast
  }
}

// base^e for e >= 0 by squaring: INTEGER and UINT wrap as mul does (the same
// value as the product written out); RATIONAL rounds each product.
template <class C>
C powBySquaring(C base, uint64_t e) {
  C acc = C(1);
  if constexpr (std::is_same_v<C, Rat>) acc = Rat{1, 1};
  while (e) {
    if (e & 1) acc = mul(acc, base);
    e >>= 1;
    if (e) base = mul(base, base);
  }
  return acc;
}

// l ^ r; false when the result is NULL. An integral power of an exact type is
// repeated multiplication (a negative one of a RATIONAL: of its reciprocal,
// NULL for zero); every other case is computed in floating point and a result
// that is not finite gives NULL.
template <class C>
bool pow(C l, C r, C& out) {
  if constexpr (kIsFloat<C>) {
    const C v = std::pow(l, r);
    if (!std::isfinite(v)) return false;
    out = v;
  } else if constexpr (std::is_same_v<C, Rat>) {
    if (r.den != 1) {
      const double d = std::pow(double(l.num) / double(l.den), double(r.num) / double(r.den));
      if (!std::isfinite(d)) return false;
      out = rationalize(d);
    } else if (r.num < 0) {
      if (l.num == 0) return false;
      out = powBySquaring(ratDiv(Rat{1, 1}, l), uint64_t(-int64_t(r.num)));
    } else {
      out = powBySquaring(l, uint64_t(r.num));
    }
  } else {
    if constexpr (std::is_signed_v<C>)
      if (r < 0) {
        const double d = std::pow(double(l), double(r));
        if (!std::isfinite(d)) return false;
        out = convert<C>(d);
        return true;
      }
    out = powBySquaring(l, uint64_t(r));
  }
  return true;
}

}  // namespace ir::val
