// The integer fold's exact range, one rule for the engine's reducer
// (engine/operators/reduce.cpp) and the chain's generated fold (jit/chain_fold.cpp):
// a reducer sums present INTEGER elements in 64-bit integers and converts
// the sum once. Into FLOAT/DOUBLE that is the fold in the type while the sum
// of the elements' magnitudes stays within exactSumBound(type) (every
// partial sum is then exact in the type); into RATIONAL the exact sum is
// rounded once whatever its partial sums (ir/exact_sum.hpp), and the quick
// result (the sum, smallest or largest as a numerator) needs only that
// value within the bound (INT32_MIN is not a RATIONAL's numerator).
// Beyond it both call the engine's fold in the type itself.
#pragma once

#include <cstdint>
#include <limits>

#include "ir/ir.hpp"

namespace ir {

constexpr int64_t exactSumBound(Type t) {
  if (t == Type::RATIONAL) return std::numeric_limits<int32_t>::max();  // a numerator
  if (t == Type::FLOAT) return int64_t(1) << 24;                        // float's significand
  return int64_t(1) << 53;                                              // double's
}

// What the bound limits: the folded value itself, or the sum of magnitudes.
constexpr bool boundsSumOnly(Type t) { return t == Type::RATIONAL; }

}  // namespace ir
