// A + B: record n joins record floor(n·Δ/ΔA) of A with floor(n·Δ/ΔB) of B.
#include "engine/operators/map_op.hpp"

namespace engine::ops {

namespace {
struct AddMap {
  static constexpr int K = 2;
  ir::Rational ra, rb;
  bool unitA, unitB;
  explicit AddMap(const Stream& s)
      : ra(s.operandRatio[0]), rb(s.operandRatio[1]), unitA(ra.num == ra.den), unitB(rb.num == rb.den) {}
  std::pair<int, int64_t> at(int64_t n, int k) const {
    if (k == 0) return {0, unitA ? n : floorMul(n, ra)};
    return {1, unitB ? n : floorMul(n, rb)};
  }
  bool shifts(int k, int64_t& m) const { return m = 0, k == 0 ? unitA : unitB; }
};
}  // namespace

StepFn setUpAdd(Stream& s, const Streams& streams) {
  if (s.srcs.size() != 2) throw std::runtime_error("+ needs two operands");
  return mapStep<AddMap>(s, streams);
}

}  // namespace engine::ops
