// Operators whose record n is made of whole operand records at indices an
// index map gives (select, + # & % - >). The map is a small struct:
//   static constexpr int K;                       input slots (operands in the input record)
//   Map(const Stream&);                           constants, once per block
//   std::pair<int, int64_t> at(int64_t n, int k)  slot k reads operand .first's record .second
//   bool shifts(int k, int64_t& m)                whether slot k reads record n - m of operand k
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
  // The pointers of a whole run (record i at d[i*K + slot]).
  void pointersRun(const int64_t* ns, const int* js, int count, const uint8_t** d, const uint8_t** nl) {
    for (int k = 0; k < Map::K; ++k) {
      int64_t shift;
      if (!map.shifts(k, shift)) {  // a general index map: record by record
        for (int i = 0; i < count; ++i) {
          auto [o, idx] = map.at(ns[i], k);
          recordAt(s, c.src(s, size_t(o)), idx, js[i], d[i * Map::K + k], nl[i * Map::K + k]);
        }
        continue;
      }
      // Record n reads record n - shift of operand k: the ring lookups inline.
      const Stream& p = c.src(s, size_t(k));
      const History& h = p.hist;
      // Locals, so that the stores through d and nl cannot make them reload.
      const int64_t off = shift + h.base, window = h.window, mask = h.mask, cap = h.cap;
      const int64_t rec = h.rec, elems = h.elems;
      const uint8_t* data = h.data.data();
      const uint8_t* nulls = h.nulls.data();
      const int64_t* vis = p.vis.data();
      const uint8_t* zero = s.zeroRec.data();
      const uint8_t* none = s.nullFlags.data();
      for (int i = 0; i < count; ++i) {
        const int64_t r = ns[i] - off, v = vis[js[i]];
        const bool held = r >= 0 && r < v && r >= v - window;
        const int64_t at = mask >= 0 ? (r & mask) : (held ? r % cap : 0);
        d[i * Map::K + k] = held ? data + at * rec : zero;
        nl[i * Map::K + k] = held ? nulls + at * elems : none;
      }
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
  if (n >= 0 && n < (int64_t(1) << 31) && r.num >= 0 && r.num < (int64_t(1) << 31))
    return (n * r.num + r.den - 1) / r.den;
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
