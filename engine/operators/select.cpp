// SELECT ... FROM A: record n reads record n of A.
#include "engine/operators/map_op.hpp"

namespace engine::ops {

namespace {
struct SelectMap {
  static constexpr int K = 1;
  explicit SelectMap(const Stream&) {}
  std::pair<int, int64_t> at(int64_t n, int) const { return {0, n}; }
  bool shifts(int, int64_t& m) const { return m = 0, true; }
};
}  // namespace

StepFn setUpSelect(Stream& s, const Streams& streams) { return mapStep<SelectMap>(s, streams); }

}  // namespace engine::ops
