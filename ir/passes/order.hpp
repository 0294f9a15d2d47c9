// Interval-sort keys: the plan's interval order computed on small keys, so a
// pass can sort repeatedly without moving whole queries.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.hpp"

namespace ir::passes {

struct IntervalKey {
  double approx;   // the interval, correctly rounded (one division of exact doubles) when `fast`
  Rational exact;  // decides ties of approx and every key that is not `fast`
  uint32_t pos;    // position of the query in the plan when the keys were made
  bool fast;       // numerator and denominator below 2^53
  static IntervalKey of(const Rational& r, uint32_t pos);
  // The same answer as a.exact < b.exact: a correctly rounded quotient is
  // monotone, so unequal roundings order the exact values the same way.
  static bool less(const IntervalKey& a, const IntervalKey& b) {
    if (a.fast && b.fast) {
      if (a.approx != b.approx) return a.approx < b.approx;
      if (a.exact.num == b.exact.num && a.exact.den == b.exact.den) return false;
    }
    return a.exact < b.exact;
  }
};

// std::sort by interval, exactly the permutation intervalSort() makes.
void sortKeys(std::vector<IntervalKey>& keys);
// Reorders p.queries to the key order (keys[i].pos = old position).
void applyOrder(Plan& p, const std::vector<IntervalKey>& keys);

}  // namespace ir::passes
