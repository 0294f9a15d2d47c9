// The exact sum of a reducer's elements, rounded once (docs/rql.md, "Numerics"):
// SUMC and AVG over exact types (INTEGER, BYTE, UINT, RATIONAL) add every
// present element exactly and round the sum (or the sum over the count) to the
// nearest RATIONAL once. This is the only implementation: the engine's
// reducers, fused and chained windows, and the JIT's slow path all call it.
//
// ExactSum keeps the sum in O(1) per element, added or taken out (sliding
// windows): while every denominator divides one common D <= 2^32 the sum is
// the exact integer N over D; past that it keeps each element's fixed-point
// image floor(x * 2^96), whose sum is exact within one unit per element. Such
// an interval almost always holds one nearest fraction: then that is the
// result. When it does not (the sum within 2^-80 of a midpoint between two
// fractions, or possibly a fraction itself), result() says so and the caller
// folds the elements with ExactFold, in GMP's exact rationals.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "values.hpp"

namespace ir::val {

// A signed 256-bit integer (two's complement, four limbs, lowest first).
struct I256 {
  uint64_t w[4] = {0, 0, 0, 0};
  static I256 of(__int128 v);
  bool negative() const { return int64_t(w[3]) < 0; }
  bool isZero() const { return (w[0] | w[1] | w[2] | w[3]) == 0; }
  I256& operator+=(const I256& o);
  I256& operator-=(const I256& o);
  I256 operator-() const;
};
int cmp(const I256& a, const I256& b);

class ExactSum {
 public:
  // One present element in (sign +1) or out (sign -1).
  void add(int64_t v, int sign);  // an integer (INTEGER, BYTE, UINT)
  void add(Rat r, int sign);
  int64_t present() const { return present_; }
  // Past the common denominator the sum is kept as images only from the
  // elements added since the last reset(true): the caller adds the window's
  // elements again (rebuild).
  bool needsRebuild() const { return rebuild_; }
  // Empty; `images` starts in the image mode (no common denominator tried).
  void reset(bool images = false);
  bool imageMode() const { return images_; }
  // The sum (avg: over the present count), rounded once; nullopt when only
  // the exact fold can tell (the caller runs ExactFold). Counts a rounding in
  // ratRounded() as every RATIONAL operation does.
  std::optional<Rat> result(bool avg) const;

 private:
  bool images_ = false, rebuild_ = false;
  __int128 num_ = 0;  // common-denominator mode: the sum is num_ / den_
  uint64_t den_ = 1;
  I256 image_;           // image mode: the sum of floor(x * 2^96)
  int64_t inexact_ = 0;  // images that are not exact: the sum is within [image_, image_ + inexact_]
  int64_t present_ = 0;
};

// The rare path: the elements summed in exact (GMP) rationals, then rounded.
class ExactFold {
 public:
  ExactFold();
  ~ExactFold();
  ExactFold(const ExactFold&) = delete;
  ExactFold& operator=(const ExactFold&) = delete;
  void add(int64_t v);
  void add(Rat r);
  int64_t present() const { return present_; }
  Rat result(bool avg);

 private:
  struct Big;
  std::unique_ptr<Big> big_;
  int64_t present_ = 0;
};

// The RATIONAL nearest to num/den (any size, den != 0), by the rule of every
// RATIONAL operation; counts a rounding. num and den are GMP integers (mpz_t)
// passed as pointers to keep gmp.h out of this header.
Rat ratNearestBig(const void* num, const void* den);

// How many sums went the exact (GMP) way, per thread: for tests and benchmarks.
uint64_t& exactFolds();

}  // namespace ir::val
