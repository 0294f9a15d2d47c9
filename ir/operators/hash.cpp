// A # B: the records of both operands interleaved, at Δ = ΔA·ΔB/(ΔA+ΔB).
#include "ir/passes/flat.hpp"
#include "operator.hpp"

namespace ir::ops {

namespace {

using R = Rational;

Rational interval(const IntervalSite& s) {
  if (s.d1.isZero()) return R(0);
  const R d2 = s.d2();
  if (d2.isZero()) return R(0);
  return s.d1 * d2 / (s.d1 + d2);
}

int64_t origin(const SweepSite& w) {
  const Site& s = w.at;
  const R z = s.s2->interval / (s.s1.interval + s.s2->interval);
  return std::max(firstIndex([&](int64_t n) { return truncOf(z * R(n)); }, w.v1, s.q),
                  firstIndex([&](int64_t n) { return n - truncOf(z * R(n)); }, w.v2, s.q));
}

int64_t tail(const SweepSite& w) {
  const Site& s = w.at;
  return passes::hashTail(s.s1.interval, w.v1, s.s2->interval, w.v2, s.q.interval);
}

void demand(const Site& s, DemandFn need) {
  for (const Query* o : {&s.s1, s.s2})
    need(*o, std::max<int64_t>(4, ceilOf(R(s.q.tail) * s.q.interval / o->interval) - o->tail + 2));
}

void check(const Site& s, passes::FlatIndex& flat) {
  if (flat.width(s.s1) != flat.width(*s.s2))
    throw CompileError("HASH operation constraint failed on " + s.q.id + ": '" + s.s1.id + "' has " +
                           std::to_string(flatWidth(s.s1)) + " elements, '" + s.s2->id + "' has " +
                           std::to_string(flatWidth(*s.s2)),
                       s.q.loc);
}

std::vector<Field> schema(const Site& s, passes::FlatIndex& flat) {
  if (flat.width(s.s1) != flat.width(*s.s2)) throw RefError("Hash operation needs same schemas on arguments stream");
  std::vector<Field> out = passes::interleaveSlots(s.s1, *s.s2);
  for (size_t i = 0; i < out.size(); ++i) out[i].program = {passes::indexRef(s.s1.id, int(i))};
  return out;
}

// Each position takes the larger type and element size of both operands (as interleaveSlots).
Field inputSlot(const Site& s, passes::FlatIndex& flat, int i) {
  Field a = *flat.slot(s.s1, i);
  if (!s.s2) return a;
  auto b = flat.slot(*s.s2, i);
  if (!b) return a;
  const int width = std::max(a.byteSize(), b->byteSize());
  a.type = std::max(a.type, b->type);
  a.rlen = a.type == Type::STRING ? 1 : std::max(a.rlen, b->rlen);
  a.rarray = a.type == Type::STRING ? width : 1;
  return a;
}

}  // namespace

const StreamOperator kHash{
    .op = Op::STREAM_HASH,
    .binary = true,
    .interval = interval,
    .origin = origin,
    .tail = tail,
    .demand = demand,
    .check = check,
    .outputWidth = copiedOutputWidth,
    .schema = schema,
    .inputWidth = copiedInputWidth,
    .inputSlot = inputSlot,
    .uniformInput = false,
};

}  // namespace ir::ops
