// A > m: A shifted m records into the past. Record n is record n - m of A.
#include "engine/operators/map_op.hpp"

namespace engine::ops {

namespace {
struct TimemoveMap {
  static constexpr int K = 1;
  int64_t m;
  explicit TimemoveMap(const Stream& s) : m(std::get<int32_t>(s.q->program.back().v)) {}
  std::pair<int, int64_t> at(int64_t n, int) const { return {0, n - m}; }
  bool shifts(int, int64_t& shift) const { return shift = m, true; }
};
}  // namespace

StepFn setUpTimemove(Stream& s, const Streams& streams) { return mapStep<TimemoveMap>(s, streams); }

}  // namespace engine::ops
