// The table of stream operators: one row each, in the files beside this one.
#include "operator.hpp"

#include "ir/passes/flat.hpp"
#include "ir/passes/passes.hpp"

namespace ir::ops {

const StreamOperator* streamOperator(Op op) {
  static const StreamOperator* const rows[] = {&kAdd,    &kHash,      &kDehashDiv, &kDehashMod, &kSubtract, &kTimemove,
                                               &kWindow, &kReduceAvg, &kReduceMin, &kReduceMax, &kReduceSum};
  for (const StreamOperator* r : rows)
    if (r->op == op) return r;
  return nullptr;
}

Operands operandsOf(const Plan& p, const Query& q) {
  const Query& s1 = p.get(std::get<std::string>(q.program[0].v));
  const StreamOperator* so = q.program.size() > 1 ? streamOperator(q.program.back().op) : nullptr;
  const Query* s2 = so && so->binary ? &p.get(std::get<std::string>(q.program[1].v)) : nullptr;
  return {so, s1, s2};
}

int64_t firstIndex(FnRef<int64_t(int64_t)> m, int64_t T, const Query& q) {
  if (T <= 0) return 0;
  if (m(0) >= T) return 0;
  int64_t hi = 1;
  while (m(hi) < T) {
    hi *= 2;
    if (hi > (int64_t(1) << 40)) throw CompileError("origin of stream '" + q.id + "' is out of range", q.loc);
  }
  int64_t lo = hi / 2;  // m(lo) < T (or lo == 0 checked above)
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (m(mid) >= T) hi = mid;
    else lo = mid;
  }
  return hi;
}

std::vector<Field> copiedSchema(const Site& s, passes::FlatIndex&) {
  std::vector<Field> out = passes::flattenSchema(s.s1);
  for (size_t i = 0; i < out.size(); ++i) out[i].program = {passes::indexRef(s.s1.id, int(i))};
  return out;
}

int64_t copiedOutputWidth(const Site& s, FnRef<int64_t(const Query&)> widthOf) { return widthOf(s.s1); }

void noCheck(const Site&, passes::FlatIndex&) {}

int64_t copiedInputWidth(const Site& s, passes::FlatIndex& flat) { return flat.width(s.s1); }

Field copiedInputSlot(const Site& s, passes::FlatIndex& flat, int i) { return *flat.slot(s.s1, i); }

}  // namespace ir::ops
