// A + B: records of both operands side by side, at the faster interval.
#include "ir/limits.hpp"
#include "ir/passes/flat.hpp"
#include "operator.hpp"

namespace ir::ops {

namespace {

using R = Rational;

// Record of an operand of interval dSrc read by record n of the sum.
int64_t mapAdd(const R& dOut, const R& dSrc, int64_t n) { return dOut == dSrc ? n : truncOf(R(n) * dOut / dSrc); }

Rational interval(const IntervalSite& s) {
  if (s.d1.isZero()) return R(0);
  const R d2 = s.d2();
  if (d2.isZero()) return R(0);
  return s.d1 < d2 ? s.d1 : d2;
}

int64_t origin(const SweepSite& w) {
  const Site& s = w.at;
  const R d = s.q.interval;
  return std::max(firstIndex([&](int64_t n) { return mapAdd(d, s.s1.interval, n); }, w.v1, s.q),
                  firstIndex([&](int64_t n) { return mapAdd(d, s.s2->interval, n); }, w.v2, s.q));
}

int64_t tail(const SweepSite& w) {
  const Site& s = w.at;
  const R d = s.q.interval;
  return std::max(ceilOf(R(1 + w.v1) * s.s1.interval / d) - 1, ceilOf(R(1 + w.v2) * s.s2->interval / d) - 1);
}

void demand(const Site& s, DemandFn need) {
  for (const Query* o : {&s.s1, s.s2})
    need(*o, ceilOf(R(1 + s.q.tail) * s.q.interval / o->interval) - o->tail + (o->program.empty() ? 2 : 0));
}

int64_t outputWidth(const Site& s, FnRef<int64_t(const Query&)> widthOf) { return widthOf(s.s1) + widthOf(*s.s2); }

std::vector<Field> schema(const Site& s, passes::FlatIndex& flat) {
  const int64_t total = int64_t(flat.width(s.s1)) + flat.width(*s.s2);
  if (total > kMaxRecordElements)
    throw CompileError("a record of " + s.s1.id + " + " + s.s2->id + " has " + std::to_string(total) +
                       " elements; the limit is " + std::to_string(kMaxRecordElements));
  std::vector<Field> out;
  int k = 0;
  for (const Query* o : {&s.s1, s.s2}) {
    int element = 0;
    for (auto& f : o->schema)
      for (int e = 0; e < f.flatCount(); ++e) {
        Field nf = passes::slotField(f, o->id + "_" + std::to_string(k++));
        nf.program = {Token(Op::PUSH_ID, IdxPair(o->id, element++))};
        out.push_back(std::move(nf));
      }
  }
  return out;
}

int64_t inputWidth(const Site& s, passes::FlatIndex& flat) { return flat.width(s.s1) + (s.s2 ? flat.width(*s.s2) : 0); }

Field inputSlot(const Site& s, passes::FlatIndex& flat, int i) {
  const int w1 = flat.width(s.s1);
  return i < w1 ? *flat.slot(s.s1, i) : *flat.slot(*s.s2, i - w1);
}

}  // namespace

const StreamOperator kAdd{
    .op = Op::STREAM_ADD,
    .binary = true,
    .interval = interval,
    .origin = origin,
    .tail = tail,
    .demand = demand,
    .check = noCheck,
    .outputWidth = outputWidth,
    .schema = schema,
    .inputWidth = inputWidth,
    .inputSlot = inputSlot,
    .uniformInput = false,
};

}  // namespace ir::ops
