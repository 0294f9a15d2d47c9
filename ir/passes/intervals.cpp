// Interval resolution: every stream's Δ from its operator and sources;
// a sweep that resolves nothing while something is open means a cycle.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "order.hpp"
#include "passes.hpp"

#include "ir/operators/operator.hpp"

namespace ir::passes {

namespace {

Rational narrow(const Rational& r, const Query& q) {
  if (!r.fitsInt32())
    throw RefError("Stream interval out of representable range — simplify the plan or use coarser intervals (stream '" +
                       q.id + "')",
                   q.loc);
  return r;
}

// The FROM operands of a query, looked up once. A name that no entry has is
// looked up again (and reported) when the query is evaluated.
struct Operands {
  const Query* s1 = nullptr;
  const Query* s2 = nullptr;  // second stream operand of + and #
  int width1 = -1;            // flatWidth(s1), once needed (schemas do not change here)
};

Operands operandsOf(const Plan& p, const Query& q) {
  Operands o;
  const Program& prog = q.program;
  o.s1 = p.find(std::get<std::string>(prog[0].v));
  if (prog.size() == 3 && (prog[2].op == Op::STREAM_ADD || prog[2].op == Op::STREAM_HASH) &&
      prog[1].op == Op::PUSH_STREAM)
    o.s2 = p.find(std::get<std::string>(prog[1].v));
  return o;
}

// Δ of q from the Δ of its first operand, or 0 while a source is
// unresolved; d2() and width() are asked only when the operator needs them.
template <class D2, class Width>
Rational intervalFrom(const Query& q, const Rational d1, D2 d2of, Width widthOf) {
  const Program& prog = q.program;
  if (prog.size() == 1) return d1;
  const Token& op = prog.back();
  const ops::StreamOperator* so = ops::streamOperator(op.op);
  if (!so) throw RefError("Undefined token/command on list", q.loc);
  return so->interval(ops::IntervalSite{q, op, d1, d2of, widthOf});
}

// Δ of q from the current Δ of its operands.
Rational intervalOf(const Plan& p, const Query& q, Operands& ops) {
  const Program& prog = q.program;
  const Query& s1 = ops.s1 ? *ops.s1 : p.get(std::get<std::string>(prog[0].v));
  return intervalFrom(
      q, s1.interval, [&] { return (ops.s2 ? *ops.s2 : p.get(std::get<std::string>(prog[1].v))).interval; },
      [&] {
        if (ops.width1 < 0 || !ops.s1) ops.width1 = flatWidth(s1);
        return ops.width1;
      });
}

// Every Δ the sweeps will assign, computed ahead in dependency order, or
// nothing when the plan holds anything unusual (a missing operand, a cycle,
// an error, a preset Δ that would change): the sweeps then run on exact keys.
std::optional<std::vector<Rational>> finalIntervals(const Plan& p, std::vector<Operands>& ops) {
  const size_t n = p.queries.size();
  std::vector<Rational> fin(n);
  std::vector<int> width(n, -1);  // flat widths, once needed
  std::vector<char> state(n, 0);  // 0 new, 1 on the stack, 2 done
  auto posOf = [&](const Query* q) { return size_t(q - p.queries.data()); };
  std::vector<std::pair<size_t, int>> stack;
  try {
    for (size_t r = 0; r < n; ++r) {
      if (state[r]) continue;
      stack.push_back({r, 0});
      state[r] = 1;
      while (!stack.empty()) {
        auto& [v, stage] = stack.back();
        const Query& q = p.queries[v];
        if (q.program.empty()) {
          fin[v] = q.interval;
          state[v] = 2;
          stack.pop_back();
          continue;
        }
        const Operands& o = ops[v];
        if (!o.s1) return std::nullopt;
        const bool sub = q.program.size() > 1 && q.program.back().op == Op::STREAM_SUBTRACT;
        const bool two =
            q.program.size() == 3 && (q.program[2].op == Op::STREAM_ADD || q.program[2].op == Op::STREAM_HASH);
        if (two && !o.s2) return std::nullopt;
        // Operands first (a SUBTRACT does not wait for its source).
        const Query* need[2] = {sub ? nullptr : o.s1, two ? o.s2 : nullptr};
        if (stage < 2) {
          const Query* u = need[stage++];
          if (u) {
            size_t ui = posOf(u);
            if (state[ui] == 1) return std::nullopt;  // a cycle
            if (state[ui] == 0) {
              state[ui] = 1;
              stack.push_back({ui, 0});
            }
          }
          continue;
        }
        Rational d = intervalFrom(
            q, sub ? Rational(1) : fin[posOf(o.s1)], [&] { return fin[posOf(o.s2)]; },
            [&] {
              int& w = width[posOf(o.s1)];
              if (w < 0) w = flatWidth(*o.s1);
              return w;
            });
        if (d.isZero() || !d.fitsInt32()) return std::nullopt;
        if (!q.interval.isZero() && q.interval != d) return std::nullopt;
        fin[v] = d;
        state[v] = 2;
        stack.pop_back();
      }
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return fin;
}

// Names the streams that lie on a dependency cycle (not the ones that merely
// read from it), pointing at the first of them in the query file. A stream
// lies on a cycle when its strongly connected component of the FROM graph has
// more than one member or it reads itself.
[[noreturn]] void reportCycle(const Plan& p) {
  const size_t n = p.queries.size();
  std::unordered_map<std::string, uint32_t> pos;
  pos.reserve(n);
  for (size_t i = 0; i < n; ++i) pos.emplace(p.queries[i].id, uint32_t(i));
  std::vector<std::vector<uint32_t>> adj(n);
  std::vector<char> selfLoop(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (auto& d : p.queries[i].dependencies()) {
      if (d == p.queries[i].id) selfLoop[i] = 1;
      auto it = pos.find(d);
      if (it != pos.end()) adj[i].push_back(it->second);
    }
  // Tarjan's algorithm, iterative.
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1), compSize;
  std::vector<char> onStack(n, 0);
  std::vector<uint32_t> st;
  std::vector<std::pair<uint32_t, size_t>> call;
  int counter = 0;
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    call.push_back({root, 0});
    while (!call.empty()) {
      auto& [v, i] = call.back();
      if (i == 0 && index[v] < 0) {
        index[v] = low[v] = counter++;
        st.push_back(v);
        onStack[v] = 1;
      }
      if (i < adj[v].size()) {
        uint32_t u = adj[v][i++];
        if (index[u] < 0) call.push_back({u, 0});
        else if (onStack[u]) low[v] = std::min(low[v], index[u]);
        continue;
      }
      if (low[v] == index[v]) {
        int c = int(compSize.size());
        compSize.push_back(0);
        for (;;) {
          uint32_t w = st.back();
          st.pop_back();
          onStack[w] = 0;
          comp[w] = c;
          ++compSize[size_t(c)];
          if (w == v) break;
        }
      }
      const uint32_t done = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
    }
  }
  std::vector<const Query*> open, cycle;
  for (size_t i = 0; i < n; ++i) {
    const Query& q = p.queries[i];
    if (q.program.empty() || !q.interval.isZero()) continue;
    open.push_back(&q);
    if (selfLoop[i] || compSize[size_t(comp[i])] > 1) cycle.push_back(&q);
  }
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

// The reference sorts the plan by interval before every sweep and after it,
// and its (unstable) sort makes the final order depend on that sequence, so
// the sweeps run exactly as written: in the order of the keys, sorting keys
// instead of whole queries, with the queries themselves staying in place.
// When every Δ is known ahead (finalIntervals), the keys are the ranks of the
// intervals packed with the position in 64 bits: the same comparisons, so the
// same permutations, at a fraction of the cost.
namespace {

bool resolveWithRanks(Plan& p, std::vector<Operands>& ops) {
  const size_t n = p.queries.size();
  auto fin = finalIntervals(p, ops);
  if (!fin) return false;
  std::vector<Rational> values;
  values.reserve(2 * n + 1);
  values.push_back(Rational(0));
  for (size_t i = 0; i < n; ++i) {
    values.push_back(p.queries[i].interval);
    values.push_back((*fin)[i]);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  auto rank = [&](const Rational& r) {
    return uint64_t(std::lower_bound(values.begin(), values.end(), r) - values.begin());
  };
  std::vector<uint64_t> finRank(n);
  std::vector<char> resolved(n);
  std::vector<uint64_t> keys(n);
  auto posOf = [&](const Query* q) { return size_t(q - p.queries.data()); };
  for (size_t i = 0; i < n; ++i) {
    finRank[i] = rank((*fin)[i]);
    resolved[i] = !p.queries[i].interval.isZero();
    keys[i] = rank(p.queries[i].interval) << 32 | i;
  }
  auto sortKeys = [&] {
    std::sort(keys.begin(), keys.end(), [](uint64_t a, uint64_t b) { return (a >> 32) < (b >> 32); });
  };
  sortKeys();
  for (;;) {
    bool again = false;
    for (auto& k : keys) {
      const size_t i = size_t(k & 0xffffffffu);
      const Query& q = p.queries[i];
      if (q.program.empty()) continue;
      const Operands& o = ops[i];
      const size_t m = q.program.size();
      bool ready;
      if (m > 1 && q.program.back().op == Op::STREAM_SUBTRACT) ready = true;
      else if (m == 3 && (q.program[2].op == Op::STREAM_ADD || q.program[2].op == Op::STREAM_HASH))
        ready = resolved[posOf(o.s1)] && resolved[posOf(o.s2)];
      else ready = resolved[posOf(o.s1)];
      if (!ready) {
        again = true;
        continue;
      }
      resolved[i] = 1;
      k = finRank[i] << 32 | i;
    }
    if (!again) break;
    // Every Δ is reachable, so each sweep resolves something: no cycle here.
    sortKeys();
    sortKeys();
  }
  sortKeys();
  for (size_t i = 0; i < n; ++i) p.queries[i].interval = (*fin)[i];
  std::vector<Query> sorted;
  sorted.reserve(n);
  for (uint64_t k : keys) sorted.push_back(std::move(p.queries[size_t(k & 0xffffffffu)]));
  p.queries = std::move(sorted);
  return true;
}

}  // namespace

void resolveStreamIntervals(Plan& p) {
  const size_t n = p.queries.size();
  std::vector<Operands> ops(n);
  for (size_t i = 0; i < n; ++i)
    if (!p.queries[i].program.empty()) ops[i] = operandsOf(p, p.queries[i]);
  if (n < (size_t(1) << 32) && resolveWithRanks(p, ops)) return;
  std::vector<IntervalKey> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; ++i) keys.push_back(IntervalKey::of(p.queries[i].interval, uint32_t(i)));
  bool applied = false;
  try {
    sortKeys(keys);
    for (;;) {
      bool again = false;
      int resolvedNow = 0;
      for (auto& k : keys) {
        Query& q = p.queries[k.pos];
        if (q.program.empty()) continue;
        Rational d = intervalOf(p, q, ops[k.pos]);
        if (d.isZero()) {
          again = true;
          continue;
        }
        if (q.interval.isZero()) ++resolvedNow;
        q.interval = narrow(d, q);
        k = IntervalKey::of(q.interval, k.pos);
      }
      if (!again) break;
      if (resolvedNow == 0) {
        applyOrder(p, keys);
        applied = true;
        reportCycle(p);
      }
      sortKeys(keys);  // the reference sorts here and again at the top of the next sweep
      sortKeys(keys);
    }
    sortKeys(keys);
  } catch (...) {
    if (!applied) applyOrder(p, keys);
    throw;
  }
  applyOrder(p, keys);
}

}  // namespace ir::passes
