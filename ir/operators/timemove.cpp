// A > n: A shifted by n records.
#include "ir/passes/flat.hpp"
#include "operator.hpp"

namespace ir::ops {

namespace {

int32_t shift(const Token& op) { return std::get<int32_t>(op.v); }

Rational interval(const IntervalSite& s) { return s.d1; }

int64_t origin(const SweepSite& w) { return w.v1 + shift(w.at.op); }

int64_t tail(const SweepSite& w) { return std::max<int64_t>(0, w.v1 - shift(w.at.op)); }

void demand(const Site& s, DemandFn need) {
  need(s.s1, s.q.tail - s.s1.tail + shift(s.op) + 1 + (s.s1.program.empty() ? 2 : 0));
}

}  // namespace

const StreamOperator kTimemove{
    .op = Op::STREAM_TIMEMOVE,
    .binary = false,
    .interval = interval,
    .origin = origin,
    .tail = tail,
    .demand = demand,
    .check = noCheck,
    .outputWidth = copiedOutputWidth,
    .schema = copiedSchema,
    .inputWidth = copiedInputWidth,
    .inputSlot = copiedInputSlot,
    .uniformInput = false,
};

}  // namespace ir::ops
