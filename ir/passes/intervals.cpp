// Interval resolution: every stream's Δ from its operator and sources;
// a sweep that resolves nothing while something is open means a cycle.
#include <algorithm>

#include "passes.hpp"

namespace ir::passes {

namespace {

Rational narrow(const Rational& r, const Query& q) {
  if (!r.fitsInt32())
    throw RefError("Stream interval out of representable range — simplify the plan or use coarser intervals (stream '" +
                       q.id + "')",
                   q.loc);
  return r;
}

// Δ of q, or 0 while a source is unresolved.
Rational intervalOf(const Plan& p, const Query& q) {
  const Program& prog = q.program;
  const Query& s1 = p.get(std::get<std::string>(prog[0].v));
  const Rational d1 = s1.interval;
  if (prog.size() == 1) return d1;
  const Token& op = prog.back();
  if (op.op == Op::STREAM_SUBTRACT) {
    Rational r = std::get<Rational>(op.v);
    if (r.num <= 0) throw CompileError("SUBTRACT target interval must be positive for '" + q.id + "'", q.loc);
    return r;
  }
  if (d1.isZero()) return Rational(0);
  switch (op.op) {
    case Op::STREAM_ADD:
    case Op::STREAM_HASH: {
      const Rational d2 = p.get(std::get<std::string>(prog[1].v)).interval;
      if (d2.isZero()) return Rational(0);
      if (op.op == Op::STREAM_ADD) return d1 < d2 ? d1 : d2;
      return d1 * d2 / (d1 + d2);
    }
    case Op::STREAM_DEHASH_DIV:
    case Op::STREAM_DEHASH_MOD: {
      Rational r = std::get<Rational>(prog[1].v);
      if (r.isZero()) throw CompileError("DEHASH rational argument must not be zero for '" + q.id + "'", q.loc);
      if (r == d1)
        throw RefError("de-interleave of '" + q.id + "': the rational " + r.str() +
                           " equals the source interval, which leaves no stream",
                       q.loc);
      Rational d = d1 * r / abs(d1 - r);
      if (d < d1)
        throw RefError(op.op == Op::STREAM_DEHASH_DIV ? "You cannot make faster div from slower source"
                                                      : "You cannot make faster mod from slower source",
                       q.loc);
      return d;
    }
    case Op::STREAM_TIMEMOVE:
    case Op::STREAM_AVG:
    case Op::STREAM_MIN:
    case Op::STREAM_MAX:
    case Op::STREAM_SUM: return d1;
    case Op::STREAM_AGSE: {
      auto [k, w] = std::get<std::pair<int32_t, int32_t>>(op.v);
      if (k <= 0)
        throw CompileError("AGSE step must be > 0, got " + std::to_string(k) + " for query '" + q.id + "'", q.loc);
      // Δout = (Δ / W)·k with W the flattened element count (seed chapter on AGSE).
      int width = flatWidth(s1);
      if (width == 0) return Rational(0);
      return d1 * Rational(k) / Rational(width);
    }
    default: throw RefError("Undefined token/command on list", q.loc);
  }
}

// Names the streams that lie on a dependency cycle (not the ones that merely
// read from it), pointing at the first of them in the query file.
[[noreturn]] void reportCycle(const Plan& p) {
  std::vector<const Query*> open;
  for (auto& q : p.queries)
    if (!q.program.empty() && q.interval.isZero()) open.push_back(&q);
  auto reaches = [&](const Query* from, const std::string& target) {
    std::set<std::string> seen;
    std::vector<std::string> todo = from->dependencies();
    while (!todo.empty()) {
      std::string s = todo.back();
      todo.pop_back();
      if (s == target) return true;
      if (!seen.insert(s).second) continue;
      if (const Query* q = p.find(s)) for (auto& d : q->dependencies()) todo.push_back(d);
    }
    return false;
  };
  std::vector<const Query*> cycle;
  for (auto* q : open)
    if (reaches(q, q->id)) cycle.push_back(q);
  if (cycle.empty()) cycle = open;
  std::stable_sort(cycle.begin(), cycle.end(), [](const Query* a, const Query* b) {
    return a->loc.line != b->loc.line ? a->loc.line < b->loc.line : a->loc.col < b->loc.col;
  });
  std::string names;
  const Query* first = nullptr;
  for (auto* q : cycle) {
    if (q->isSubstrat) continue;
    names += (names.empty() ? "" : ", ") + q->id;
    if (!first) first = q;
  }
  throw CompileError("Circular dependency in stream definitions (" + names + ")", first ? first->loc : SrcLoc{});
}

}  // namespace

void resolveStreamIntervals(Plan& p) {
  for (;;) {
    intervalSort(p);
    bool again = false;
    int resolvedNow = 0;
    for (auto& q : p.queries) {
      if (q.program.empty()) continue;
      Rational d = intervalOf(p, q);
      if (d.isZero()) {
        again = true;
        continue;
      }
      if (q.interval.isZero()) ++resolvedNow;
      q.interval = narrow(d, q);
    }
    if (!again) break;
    if (resolvedNow == 0) reportCycle(p);
    intervalSort(p);  // the reference sorts here and again at the top of the next sweep
  }
  intervalSort(p);
}

}  // namespace ir::passes
