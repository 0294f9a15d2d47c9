// Logical origin (first record index that exists at all) and tail (initial
// slots of a stream's own interval with no result yet), from exact rational
// index maps of each operator.
#include <algorithm>
#include <map>

#include "passes.hpp"

#include "ir/operators/operator.hpp"

namespace ir::passes {

namespace {

using R = Rational;

// Values already computed, by plan position, and flat widths once needed.
struct Values {
  const Plan& p;
  std::vector<int64_t> v;
  mutable std::vector<int> width;
  size_t posOf(const Query& q) const { return size_t(&q - p.queries.data()); }
  int64_t at(const Query& q) const { return v[posOf(q)]; }
  int flat(const Query& q) const {
    int& w = width[posOf(q)];
    if (w < 0) w = flatWidth(q);
    return w;
  }
};

// The operator's rule over the operands' values so far.
template <class Rule>
int64_t sweepRule(const Plan& p, const Query& q, const Values& V, Rule rule, const char* what) {
  const auto [so, s1, s2] = ops::operandsOf(p, q);
  if (q.program.size() == 1) return V.at(s1);
  const Token& op = q.program.back();
  if (!so) throw FatalError(std::string("compiler::") + what + ": unsupported operator " + opName(op.op));
  auto width1 = [&] { return V.flat(s1); };
  return rule(*so)(ops::SweepSite{ops::Site{q, op, s1, s2, width1}, V.at(s1), s2 ? V.at(*s2) : 0});
}

int64_t originOf(const Plan& p, const Query& q, const Values& O) {
  return sweepRule(
      p, q, O, [](const ops::StreamOperator& so) { return so.origin; }, "computeLogicalOrigin");
}

}  // namespace

int64_t hashTailScan(const R& dA, int64_t wA, const R& dB, int64_t wB, const R& dC) {
  R ratio = dA / dB;  // p/q
  int64_t period = ratio.num + ratio.den;
  if (period > 100000) {
    R inv = dB / dA;
    int64_t own = (inv.den + inv.num - 2) / inv.den + 1;
    auto conv = [&](int64_t w, const R& ds) -> int64_t { return w > 0 ? ceilOf(R(w) * ds / dC) : 0; };
    return std::max(conv(wA, dA), conv(wB, dB) + own);
  }
  R z = dB / (dA + dB);
  int64_t best = 0;
  // The loop below in integers, when no product can leave 62 bits (so the
  // rational version could not have overflowed either): the same values.
  {
    const R rA = dA / dC, rB = dB / dC;
    const __int128 lim = __int128(1) << 62;
    const __int128 xmax = __int128(period) + std::max(wA, wB) + 2;
    auto fits = [&](__int128 a, __int128 b) { return a >= 0 && b >= 0 && (b == 0 || a <= lim / b); };
    if (z.num > 0 && fits(z.num, period + 1) && fits(xmax, rA.num) && fits(xmax, rB.num) && rA.num > 0 && rB.num > 0 &&
        fits(rA.num, rA.den) && fits(rB.num, rB.den) && wA >= 0 && wB >= 0) {
      const int64_t zn = z.num, zd = z.den;
      for (int64_t i = 0; i < period; ++i) {
        int64_t a = zn * i / zd, b = zn * (i + 1) / zd;
        int64_t x;
        const R* r;
        if (a == b) {
          x = i - a + 1 + wB;
          r = &rB;
        } else {
          x = a + 1 + wA;
          r = &rA;
        }
        // ceil(x * r) for x >= 1, r > 0
        int64_t c = int64_t((__int128(x) * r->num + r->den - 1) / r->den);
        best = std::max(best, c - 1 - i);
      }
      return best;
    }
  }
  for (int64_t i = 0; i < period; ++i) {
    int64_t a = truncOf(z * R(i)), b = truncOf(z * R(i + 1));
    int64_t j, ws;
    R ds;
    if (a == b) {
      j = i - a;
      ws = wB;
      ds = dB;
    } else {
      j = a;
      ws = wA;
      ds = dA;
    }
    int64_t req = ceilOf(R(j + 1 + ws) * ds / dC) - 1 - i;
    best = std::max(best, req);
  }
  return best;
}

// hashTailScan() without the scan. With ΔA/ΔB = m/n (reduced), P = m + n and
// ΔC = ΔA·ΔB/(ΔA+ΔB) (the interval of A # B), the slots of one period are n
// slots of A and m of B, ΔA/ΔC = P/n and ΔB/ΔC = P/m. The u-th A slot (u in
// 1..n) is at i = ceil(uP/n) - 1 and needs ceil((u+wA)P/n) - ceil(uP/n),
// largest at u = n: ceil(wA·P/n). The v-th B slot (v in 1..m) is at
// i = floor((v-1)P/m) and needs ceil((v+wB)P/m) - 1 - floor((v-1)P/m) =
// ceil(φ + (1+wB)P/m) - 1 for the fraction φ of (v-1)P/m, which takes every
// k/m (gcd(P, m) = 1): largest at (m-1)/m.
int64_t hashTail(const R& dA, int64_t wA, const R& dB, int64_t wB, const R& dC) {
  const R ratio = dA / dB;
  const int64_t m = ratio.num, n = ratio.den, P = m + n;
  if (P > 100000 || m <= 0 || n <= 0 || wA < 0 || wB < 0 || wA > INT32_MAX || wB > INT32_MAX ||
      dC != dA * dB / (dA + dB))
    return hashTailScan(dA, wA, dB, wB, dC);
  auto ceilDiv = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  const int64_t bestA = ceilDiv(wA * P, n);
  const int64_t bestB = ceilDiv(m - 1 + (1 + wB) * P, m) - 1;
  return std::max<int64_t>({0, bestA, bestB});
}

namespace {

int64_t tailOf(const Plan& p, const Query& q, const Values& W) {
  return sweepRule(
      p, q, W, [](const ops::StreamOperator& so) { return so.tail; }, "computeStartupLatency");
}

// The reference sweeps the plan in order until nothing changes, computing a
// stream once all its FROM operands have values. The same evaluation order,
// without the repeated sweeps: a stream is computed in the sweep after the
// last of its operands (the same sweep when that operand comes before it), in
// plan order within a sweep. So the first error is the one the sweeps meet.
template <class F>
std::vector<int64_t> sweep(const Plan& p, F f, const char* what) {
  const size_t n = p.queries.size();
  Values val{p, std::vector<int64_t>(n, 0), std::vector<int>(n, -1)};
  constexpr int64_t kNever = -1, kPending = -2, kVisiting = -3;
  std::vector<int64_t> round(n, kPending);    // sweep of each stream; 0 = has a value from the start
  std::vector<std::vector<int64_t>> deps(n);  // operand positions, -1 = no such stream
  for (size_t i = 0; i < n; ++i) {
    const Query& q = p.queries[i];
    if (q.program.empty()) {
      round[i] = 0;
      continue;
    }
    for (auto& d : q.dependencies()) {
      const Query* dq = p.find(d);
      deps[i].push_back(dq ? dq - p.queries.data() : -1);
    }
  }
  // Rounds in dependency order (iterative depth-first search).
  std::vector<std::pair<size_t, size_t>> stack;
  for (size_t r = 0; r < n; ++r) {
    if (round[r] != kPending) continue;
    stack.push_back({r, 0});
    round[r] = kVisiting;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i < deps[v].size()) {
        int64_t u = deps[v][i++];
        if (u >= 0 && round[size_t(u)] == kPending) {
          round[size_t(u)] = kVisiting;
          stack.push_back({size_t(u), 0});
        }
        continue;
      }
      int64_t s = 1;
      for (int64_t u : deps[v]) {
        // No stream, a stream on a cycle or one that never gets a value: never ready.
        if (u < 0 || u == int64_t(v) || round[size_t(u)] == kNever || round[size_t(u)] == kVisiting) {
          s = kNever;
          break;
        }
        s = std::max(s, round[size_t(u)] + (size_t(u) > v && !p.queries[size_t(u)].program.empty() ? 1 : 0));
      }
      round[v] = s;
      stack.pop_back();
    }
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (round[i] > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return round[a] < round[b]; });
  for (size_t i : order) {
    const Query& q = p.queries[i];
    int64_t v = f(q, val);
    if (v > INT32_MAX || v < 0)
      throw CompileError(std::string(what == std::string("computeLogicalOrigin") ? "origin" : "tail") + " of stream '" +
                             q.id + "' is out of range",
                         q.loc);
    val.v[i] = v;
  }
  for (size_t i = 0; i < n; ++i)
    if (round[i] < 0) throw FatalError(std::string("compiler::") + what + ": unresolved for '" + p.queries[i].id + "'");
  return std::move(val.v);
}

int toInt(int64_t v, const Query& q, const char* what) {
  if (v > INT32_MAX) throw CompileError(std::string(what) + " of stream '" + q.id + "' is out of range", q.loc);
  return int(v);
}

}  // namespace

void computeLogicalOrigins(Plan& p) {
  auto O = sweep(
      p, [&](const Query& q, const Values& m) { return originOf(p, q, m); }, "computeLogicalOrigin");
  for (size_t i = 0; i < p.queries.size(); ++i) p.queries[i].origin = toInt(O[i], p.queries[i], "origin");
}

void computeStartupLatencies(Plan& p) {
  auto W = sweep(
      p, [&](const Query& q, const Values& m) { return tailOf(p, q, m); }, "computeStartupLatency");
  for (size_t i = 0; i < p.queries.size(); ++i) p.queries[i].tail = toInt(W[i], p.queries[i], "tail");
}

}  // namespace ir::passes
