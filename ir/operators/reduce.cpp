// A.avg .min .max .sumc (AVG(A) ...): each record of A folded into one value,
// at A's interval; exact types fold as RATIONAL.
#include "ir/passes/flat.hpp"
#include "operator.hpp"

namespace ir::ops {

namespace {

using R = Rational;

Rational interval(const IntervalSite& s) { return s.d1; }

int64_t origin(const SweepSite& w) { return w.v1; }

int64_t tail(const SweepSite& w) { return w.v1 > 0 ? ceilOf(R(w.v1) * w.at.s1.interval / w.at.q.interval) : 0; }

void demand(const Site&, DemandFn) {}  // reads the record of its own slot only

void check(const Site& s, passes::FlatIndex&) {
  for (auto& f : s.s1.schema)
    if (f.type == Type::STRING)
      throw CompileError(
          "Stream '" + s.q.id + "': a stream reducer cannot fold the STRING field '" + f.name + "' of " + s.s1.id,
          s.q.loc);
}

int64_t outputWidth(const Site&, FnRef<int64_t(const Query&)>) { return 1; }

template <Op Which>
std::vector<Field> schema(const Site& s, passes::FlatIndex& flat) {
  static const char* names[] = {"avg", "min", "max", "sum"};
  Field f = passes::reductionSlotOf(flat.widest(s.s1).first);
  f.name = names[int(Which) - int(Op::STREAM_AVG)];
  f.program = {Token(Op::PUSH_ID, IdxPair(s.s1.id, 0))};
  return {std::move(f)};
}

int64_t inputWidth(const Site&, passes::FlatIndex&) { return 1; }

Field inputSlot(const Site& s, passes::FlatIndex& flat, int) {
  return passes::reductionSlotOf(flat.widest(s.s1).first);
}

// The four reducers differ in their fold (engine/operators/reduce.cpp) and the field's name only.
template <Op Which>
constexpr StreamOperator reducer() {
  return {
      .op = Which,
      .binary = false,
      .interval = interval,
      .origin = origin,
      .tail = tail,
      .demand = demand,
      .check = check,
      .outputWidth = outputWidth,
      .schema = schema<Which>,
      .inputWidth = inputWidth,
      .inputSlot = inputSlot,
      .uniformInput = true,
  };
}

}  // namespace

const StreamOperator kReduceAvg = reducer<Op::STREAM_AVG>();
const StreamOperator kReduceMin = reducer<Op::STREAM_MIN>();
const StreamOperator kReduceMax = reducer<Op::STREAM_MAX>();
const StreamOperator kReduceSum = reducer<Op::STREAM_SUM>();

}  // namespace ir::ops
