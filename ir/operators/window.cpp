// A @ (k, w): a sliding window of |w| flat elements of A, moved k elements a
// record, at Δ = ΔA·k / (A's flat width) (the seed chapter on AGSE windows).
#include "ir/passes/flat.hpp"
#include "operator.hpp"

namespace ir::ops {

namespace {

using R = Rational;

std::pair<int32_t, int32_t> stepWidth(const Token& op) { return std::get<std::pair<int32_t, int32_t>>(op.v); }

Rational interval(const IntervalSite& s) {
  if (s.d1.isZero()) return R(0);
  auto [k, w] = stepWidth(s.op);
  if (k <= 0)
    throw CompileError("AGSE step must be > 0, got " + std::to_string(k) + " for query '" + s.q.id + "'", s.q.loc);
  const int width = s.width1();
  if (width == 0) return R(0);
  return s.d1 * R(k) / R(width);
}

int64_t origin(const SweepSite& w) {
  auto [k, width] = stepWidth(w.at.op);
  return ceilOf(R(w.v1 * w.at.width1() + std::abs(width) - 1, k));
}

int64_t tail(const SweepSite& w) {
  const int32_t k = stepWidth(w.at.op).first;
  return ceilOf(R((1 + w.v1) * w.at.width1(), k)) - 1;
}

void demand(const Site& s, DemandFn need) {
  auto [k, w] = stepWidth(s.op);
  need(s.s1, passes::windowDemand(s.width1(), k, w, s.q.origin, s.q.tail, s.s1.tail) + (s.s1.program.empty() ? 2 : 1));
}

int64_t outputWidth(const Site& s, FnRef<int64_t(const Query&)>) {
  if (auto* kw = std::get_if<std::pair<int32_t, int32_t>>(&s.op.v)) return std::abs(int64_t(kw->second));
  return 0;
}

std::vector<Field> schema(const Site& s, passes::FlatIndex& flat) {
  const int w = std::abs(stepWidth(s.op).second);
  const Field slot = passes::windowSlotOf(flat.widest(s.s1));
  std::vector<Field> out;
  out.reserve(size_t(w));
  for (int i = 0; i < w; ++i) {
    Field f = slot;
    f.name = s.s1.id + "_" + std::to_string(i);
    f.program = {passes::indexRef(s.s1.id, i)};
    out.push_back(std::move(f));
  }
  return out;
}

int64_t inputWidth(const Site& s, passes::FlatIndex&) { return std::abs(stepWidth(s.op).second); }

Field inputSlot(const Site& s, passes::FlatIndex& flat, int) { return passes::windowSlotOf(flat.widest(s.s1)); }

}  // namespace

const StreamOperator kWindow{
    .op = Op::STREAM_AGSE,
    .binary = false,
    .interval = interval,
    .origin = origin,
    .tail = tail,
    .demand = demand,
    .check = noCheck,
    .outputWidth = outputWidth,
    .schema = schema,
    .inputWidth = inputWidth,
    .inputSlot = inputSlot,
    .uniformInput = true,
};

}  // namespace ir::ops
