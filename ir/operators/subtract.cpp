// A - r: A re-timed to the interval r, never shorter than A's.
#include "ir/passes/flat.hpp"
#include "operator.hpp"

namespace ir::ops {

namespace {

using R = Rational;

// Record of the source (interval dSrc) read by record n at interval dT.
int64_t mapSub(const R& dSrc, const R& dT, int64_t n) { return dSrc == dT ? n : ceilOf(R(n) * dT / dSrc); }

Rational interval(const IntervalSite& s) {  // the argument itself, known before the operand's
  const R r = std::get<Rational>(s.op.v);
  if (r.num <= 0) throw CompileError("SUBTRACT target interval must be positive for '" + s.q.id + "'", s.q.loc);
  return r;
}

int64_t origin(const SweepSite& w) {
  const Site& s = w.at;
  return firstIndex([&](int64_t n) { return mapSub(s.s1.interval, s.q.interval, n); }, w.v1, s.q);
}

int64_t tail(const SweepSite& w) {
  const R rho = w.at.q.interval / w.at.s1.interval;
  const R frac(rho.den - 1, rho.den);
  return std::max<int64_t>(0, ceilOf((frac + R(w.v1 + 1)) / rho) - 1);
}

void demand(const Site& s, DemandFn need) {
  const R rho = s.q.interval / s.s1.interval;
  const int64_t Wq = s.q.tail;
  if (s.s1.program.empty()) need(s.s1, std::max(floorOf(R(Wq) * rho) + 2, floorOf(R(1 + Wq) * rho) + 2));
  else need(s.s1, ceilOf(R(Wq) * rho - R(s.s1.tail)));
}

void check(const Site& s, passes::FlatIndex&) {
  const R r = std::get<Rational>(s.op.v);
  if (r < s.s1.interval)
    throw CompileError("SUBTRACT interval constraint failed on " + s.q.id + ": the target interval " + r.str() +
                           " is shorter than the source interval " + s.s1.interval.str(),
                       s.q.loc);
}

}  // namespace

const StreamOperator kSubtract{
    .op = Op::STREAM_SUBTRACT,
    .binary = false,
    .interval = interval,
    .origin = origin,
    .tail = tail,
    .demand = demand,
    .check = check,
    .outputWidth = copiedOutputWidth,
    .schema = copiedSchema,
    .inputWidth = copiedInputWidth,
    .inputSlot = copiedInputSlot,
    .uniformInput = false,
};

}  // namespace ir::ops
