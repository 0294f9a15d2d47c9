// History each stream must keep so that every consumer can read what it
// needs (records). Not printed; the engine sizes its ring buffers from it.
#include <algorithm>
#include <numeric>

#include "passes.hpp"

namespace ir::passes {

namespace {
using R = Rational;
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
}  // namespace

void computeRequiredCapacities(Plan& p) {
  auto& cap = p.maxCapacity;
  cap.clear();
  for (auto& q : p.queries)
    if (q.program.empty()) cap[q.id] = 1;
  auto demand = [&](const std::string& id, int64_t d) {
    int v = int(std::clamp<int64_t>(d, 1, INT32_MAX));
    auto it = cap.find(id);
    if (it == cap.end()) cap[id] = v;
    else it->second = std::max(it->second, v);
  };
  for (auto& q : p.queries) {
    if (q.program.empty()) continue;
    if (!cap.count(q.id)) cap[q.id] = 1;
    Args a = getArgs(q.program);
    const Query& s1 = p.get(a.a1);
    const bool decl1 = s1.program.empty();
    const int64_t Wq = q.tail, Ws = s1.tail;
    const R d = q.interval;
    switch (a.op.op) {
      case Op::STREAM_TIMEMOVE: demand(s1.id, Wq - Ws + std::get<int32_t>(a.op.v) + 1 + (decl1 ? 2 : 0)); break;
      case Op::STREAM_AGSE: {
        auto [k, w] = std::get<std::pair<int32_t, int32_t>>(a.op.v);
        int64_t F = flatWidth(s1);
        int64_t period = F / std::gcd(F, int64_t(k));
        int64_t best = 0;
        for (int64_t n = q.origin; n < q.origin + period; ++n) {
          int64_t newest = floorDiv((n + 1 + Wq) * k, F) - Ws - 1;
          int64_t oldest = floorDiv(n * k - std::abs(w) + 1, F);
          best = std::max(best, newest - oldest);
        }
        demand(s1.id, best + (decl1 ? 2 : 1));
        break;
      }
      case Op::STREAM_HASH: {
        for (const std::string& sid : {a.a1, a.a2}) {
          const Query& s = p.get(sid);
          demand(sid, std::max<int64_t>(4, ceilOf(R(Wq) * d / s.interval) - s.tail + 2));
        }
        break;
      }
      case Op::STREAM_DEHASH_DIV:
      case Op::STREAM_DEHASH_MOD:
        demand(s1.id, std::max<int64_t>(4, ceilOf(R(Wq) * d / s1.interval) - Ws + 2));
        break;
      case Op::STREAM_ADD: {
        for (const std::string& sid : {a.a1, a.a2}) {
          const Query& s = p.get(sid);
          demand(sid, ceilOf(R(1 + Wq) * d / s.interval) - s.tail + (s.program.empty() ? 2 : 0));
        }
        break;
      }
      case Op::STREAM_SUBTRACT: {
        R rho = d / s1.interval;
        if (decl1)
          demand(s1.id, std::max(floorOf(R(Wq) * rho) + 2, floorOf(R(1 + Wq) * rho) + 2));
        else
          demand(s1.id, ceilOf(R(Wq) * rho - R(Ws)));
        break;
      }
      default: break;
    }
    for (auto& r : q.rules)
      if (r.action == RuleAction::DUMP && r.dumpFrom < 0) demand(s1.id, -int64_t(r.dumpFrom));
  }
}

void applyCapacitiesToStreams(Plan& p) {
  for (auto& [id, c] : p.maxCapacity)
    if (Query* q = p.find(id); q && q->policyCapacity != 0) q->policyCapacity = c;
}

}  // namespace ir::passes
