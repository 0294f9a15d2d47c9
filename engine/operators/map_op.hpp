// Operators whose record n is made of whole operand records at indices an
// index map gives (select, + # & % - >). The map is a small struct:
//   static constexpr int K;                       input slots (operands in the input record)
//   Map(const Stream&);                           constants, once per block
//   std::pair<int, int64_t> at(int64_t n, int k)  slot k reads operand .first's record .second
#pragma once

#include <utility>

#include "engine/operators/driver.hpp"
#include "engine/operators/operators.hpp"

namespace engine::ops {

template <class Map>
struct MapOp {
  BlockCtx& c;
  Stream& s;
  Map map;
  MapOp(BlockCtx& ctx, Stream& st) : c(ctx), s(st), map(st) {}
  Form form(const Stream& st) const { return st.operandPointers ? Form::Pointers : Form::Gather; }
  int operands(const Stream&) const { return Map::K; }
  void pointers(int64_t n, int j, const uint8_t** d, const uint8_t** nl) {
    for (int k = 0; k < Map::K; ++k) {
      auto [o, idx] = map.at(n, k);
      recordAt(s, c.src(s, size_t(o)), idx, j, d[k], nl[k]);
    }
  }
  void gather(int64_t n, int j, uint8_t* in, uint8_t* inNull) {
    for (int k = 0; k < Map::K; ++k) {
      auto [o, idx] = map.at(n, k);
      copyOperand(s, c.src(s, size_t(o)), o, idx, j, in, inNull);
    }
  }
  void direct(int64_t, int, uint8_t*, uint8_t*) {}
};

// floor(n * r) for a positive ratio, exactly.
inline int64_t floorMul(int64_t n, const ir::Rational& r) {
  if (n >= 0 && n < (int64_t(1) << 31) && r.num >= 0 && r.num < (int64_t(1) << 31)) return n * r.num / r.den;
  const __int128 p = __int128(n) * r.num;
  int64_t q = int64_t(p / r.den);
  if (p % r.den != 0 && p < 0) --q;
  return q;
}
inline int64_t ceilMul(int64_t n, const ir::Rational& r) {
  if (n >= 0 && n < (int64_t(1) << 31) && r.num >= 0 && r.num < (int64_t(1) << 31)) return (n * r.num + r.den - 1) / r.den;
  const __int128 p = __int128(n) * r.num;
  int64_t q = int64_t(p / r.den);
  if (p % r.den != 0 && p > 0) ++q;
  return q;
}

// The step of a map operator, with the input form chosen from the shapes.
template <class Map>
StepFn mapStep(Stream& s, const Streams& streams) {
  s.operandPointers = pointersFit(s, streams);
  s.slotBase.assign(s.operandBase.begin(), s.operandBase.begin() + Map::K);
  return &Driver<MapOp<Map>>::step;
}

}  // namespace engine::ops
