// A & r and A % r: the two halves a merge with a stream of interval r would
// have split. With q = Δ/r, record n of A & r is record n + ceil((n+1)·q) of
// A; of A % r it is record n + floor(n·q).
#include "engine/operators/map_op.hpp"

namespace engine::ops {

namespace {
template <bool Div>
struct DehashMap {
  static constexpr int K = 1;
  ir::Rational q;
  explicit DehashMap(const Stream& s) : q(s.indexRatio) {}
  std::pair<int, int64_t> at(int64_t n, int) const {
    if constexpr (Div) return {0, n + ceilMul(n + 1, q)};
    else return {0, n + floorMul(n, q)};
  }
  bool shifts(int, int64_t&) const { return false; }
};
}  // namespace

StepFn setUpDehash(Stream& s, const Streams& streams) {
  s.indexRatio = s.q->interval / std::get<ir::Rational>(s.q->program[1].v);
  if (s.q->program.back().op == ir::Op::STREAM_DEHASH_DIV) return mapStep<DehashMap<true>>(s, streams);
  return mapStep<DehashMap<false>>(s, streams);
}

}  // namespace engine::ops
