// The integer fold's exact range, one rule for the engine's reducer
// (engine/operators/reduce.cpp) and the chain's generated fold (jit/chain_fold.cpp):
// a reducer sums present INTEGER elements in 64-bit integers and converts
// the sum once; that is the fold in its input type exactly while the sum of
// the elements' magnitudes stays within exactSumBound(type) (every partial
// sum is then exact in the type). Beyond it both call the engine's fold in
// the type itself.
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

}  // namespace ir
