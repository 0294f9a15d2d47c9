// A # B: the merge of both in time order. With z = ΔB/(ΔA+ΔB), record n is
// record floor(z·n) of A when floor(z·n) < floor(z·(n+1)), else record
// n - floor(z·n) of B.
#include "engine/operators/map_op.hpp"

namespace engine::ops {

namespace {
struct HashMap {
  static constexpr int K = 1;
  ir::Rational z;
  explicit HashMap(const Stream& s) : z(s.indexRatio) {}
  std::pair<int, int64_t> at(int64_t n, int) const {
    const int64_t f0 = floorMul(n, z), f1 = floorMul(n + 1, z);
    if (f0 == f1) return {1, n - f0};
    return {0, f0};
  }
  bool shifts(int, int64_t&) const { return false; }
};
}  // namespace

StepFn setUpHash(Stream& s, const Streams& streams) {
  if (s.srcs.size() != 2) throw std::runtime_error("# needs two operands");
  const ir::Rational da = streams[size_t(s.srcs[0])]->q->interval, db = streams[size_t(s.srcs[1])]->q->interval;
  s.indexRatio = db / (da + db);
  return mapStep<HashMap>(s, streams);
}

}  // namespace engine::ops
