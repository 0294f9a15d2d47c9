// A & r and A % r: the left and right de-interleave of A by the rational r,
// at Δ = ΔA·r/|ΔA - r|, never faster than A.
#include "ir/passes/flat.hpp"
#include "operator.hpp"

namespace ir::ops {

namespace {

using R = Rational;

int64_t mapDiv(const R& a, const R& b, int64_t i) { return i + ceilOf(R(i + 1) * a / b); }
int64_t mapMod(const R& a, const R& b, int64_t i) { return i + truncOf(R(i) * b / a); }

template <bool Div>
Rational interval(const IntervalSite& s) {
  if (s.d1.isZero()) return R(0);
  const R r = std::get<Rational>(s.q.program[1].v);
  if (r.isZero()) throw CompileError("DEHASH rational argument must not be zero for '" + s.q.id + "'", s.q.loc);
  if (r == s.d1)
    throw RefError("de-interleave of '" + s.q.id + "': the rational " + r.str() +
                       " equals the source interval, which leaves no stream",
                   s.q.loc);
  const R d = s.d1 * r / abs(s.d1 - r);
  if (d < s.d1)
    throw RefError(
        Div ? "You cannot make faster div from slower source" : "You cannot make faster mod from slower source",
        s.q.loc);
  return d;
}

template <bool Div>
int64_t origin(const SweepSite& w) {
  const Site& s = w.at;
  const R r = s.argument(), d = s.q.interval;
  if (Div) return firstIndex([&](int64_t n) { return mapDiv(d, r, n); }, w.v1, s.q);
  return firstIndex([&](int64_t n) { return mapMod(r, d, n); }, w.v1, s.q);
}

template <bool Div>
int64_t tail(const SweepSite& w) {
  const Site& s = w.at;
  const R d = s.q.interval, rho = d / s.s1.interval;
  if (!Div) return std::max<int64_t>(0, ceilOf(R(w.v1 + 1) / rho) - 1);
  const R sigma = d / s.argument();
  const R frac(sigma.num + sigma.den - 1, sigma.den);
  return std::max<int64_t>(0, ceilOf((frac + R(w.v1 + 1)) / rho) - 1);
}

void demand(const Site& s, DemandFn need) {
  need(s.s1, std::max<int64_t>(4, ceilOf(R(s.q.tail) * s.q.interval / s.s1.interval) - s.s1.tail + 2));
}

template <bool Div>
constexpr StreamOperator dehash() {
  return {
      .op = Div ? Op::STREAM_DEHASH_DIV : Op::STREAM_DEHASH_MOD,
      .binary = false,
      .interval = interval<Div>,
      .origin = origin<Div>,
      .tail = tail<Div>,
      .demand = demand,
      .check = noCheck,
      .outputWidth = copiedOutputWidth,
      .schema = copiedSchema,
      .inputWidth = copiedInputWidth,
      .inputSlot = copiedInputSlot,
      .uniformInput = false,
  };
}

}  // namespace

const StreamOperator kDehashDiv = dehash<true>();
const StreamOperator kDehashMod = dehash<false>();

}  // namespace ir::ops
