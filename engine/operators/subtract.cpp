// A - r: A resampled at interval r. Record n is record ceil(n·r/ΔA) of A.
#include "engine/operators/map_op.hpp"

namespace engine::ops {

namespace {
struct SubtractMap {
  static constexpr int K = 1;
  ir::Rational q;
  bool unit;
  explicit SubtractMap(const Stream& s) : q(s.indexRatio), unit(q.num == q.den) {}
  std::pair<int, int64_t> at(int64_t n, int) const { return {0, unit ? n : ceilMul(n, q)}; }
  bool shifts(int, int64_t& m) const { return m = 0, unit; }
};
}  // namespace

StepFn setUpSubtract(Stream& s, const Streams& streams) {
  s.indexRatio = std::get<ir::Rational>(s.q->program.back().v) / streams[size_t(s.srcs[0])]->q->interval;
  return mapStep<SubtractMap>(s, streams);
}

}  // namespace engine::ops
