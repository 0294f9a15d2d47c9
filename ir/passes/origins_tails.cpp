// Logical origin (first record index that exists at all) and tail (initial
// slots of a stream's own interval with no result yet), from exact rational
// index maps of each operator.
#include <algorithm>
#include <map>

#include "passes.hpp"

namespace ir::passes {

namespace {

using R = Rational;

int64_t mapAdd(const R& dOut, const R& dSrc, int64_t n) { return dOut == dSrc ? n : truncOf(R(n) * dOut / dSrc); }
int64_t mapSub(const R& dSrc, const R& dT, int64_t n) { return dSrc == dT ? n : ceilOf(R(n) * dT / dSrc); }
int64_t mapDiv(const R& a, const R& b, int64_t i) { return i + ceilOf(R(i + 1) * a / b); }
int64_t mapMod(const R& a, const R& b, int64_t i) { return i + truncOf(R(i) * b / a); }

// Smallest n >= 0 with m(n) >= T (m is monotone).
template <class M>
int64_t first(M m, int64_t T, const Query& q) {
  if (T <= 0) return 0;
  if (m(0) >= T) return 0;
  int64_t hi = 1;
  while (m(hi) < T) {
    hi *= 2;
    if (hi > (int64_t(1) << 40))
      throw CompileError("origin of stream '" + q.id + "' is out of range", q.loc);
  }
  int64_t lo = hi / 2;  // m(lo) < T (or lo == 0 checked above)
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (m(mid) >= T) hi = mid;
    else lo = mid;
  }
  return hi;
}

const std::string& src(const Query& q, size_t i) { return std::get<std::string>(q.program[i].v); }

int64_t originOf(const Plan& p, const Query& q, const std::map<std::string, int64_t>& O) {
  const Token& op = q.program.back();
  const Query& s1 = p.get(src(q, 0));
  int64_t o1 = O.at(s1.id);
  const R d = q.interval, d1 = s1.interval;
  if (q.program.size() == 1) return o1;
  switch (op.op) {
    case Op::STREAM_AVG:
    case Op::STREAM_MIN:
    case Op::STREAM_MAX:
    case Op::STREAM_SUM: return o1;
    case Op::STREAM_TIMEMOVE: return o1 + std::get<int32_t>(op.v);
    case Op::STREAM_AGSE: {
      auto [k, w] = std::get<std::pair<int32_t, int32_t>>(op.v);
      return ceilOf(R(o1 * flatWidth(s1) + std::abs(w) - 1, k));
    }
    case Op::STREAM_SUBTRACT: return first([&](int64_t n) { return mapSub(d1, d, n); }, o1, q);
    case Op::STREAM_DEHASH_DIV: {
      R r = std::get<Rational>(q.program[1].v);
      return first([&](int64_t n) { return mapDiv(d, r, n); }, o1, q);
    }
    case Op::STREAM_DEHASH_MOD: {
      R r = std::get<Rational>(q.program[1].v);
      return first([&](int64_t n) { return mapMod(r, d, n); }, o1, q);
    }
    case Op::STREAM_ADD: {
      const Query& s2 = p.get(src(q, 1));
      int64_t o2 = O.at(s2.id);
      return std::max(first([&](int64_t n) { return mapAdd(d, d1, n); }, o1, q),
                      first([&](int64_t n) { return mapAdd(d, s2.interval, n); }, o2, q));
    }
    case Op::STREAM_HASH: {
      const Query& s2 = p.get(src(q, 1));
      int64_t o2 = O.at(s2.id);
      R z = s2.interval / (d1 + s2.interval);
      return std::max(first([&](int64_t n) { return truncOf(z * R(n)); }, o1, q),
                      first([&](int64_t n) { return n - truncOf(z * R(n)); }, o2, q));
    }
    default: throw FatalError(std::string("compiler::computeLogicalOrigin: unsupported operator ") + opName(op.op));
  }
}

int64_t hashTail(const R& dA, int64_t wA, const R& dB, int64_t wB, const R& dC) {
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

int64_t tailOf(const Plan& p, const Query& q, const std::map<std::string, int64_t>& W) {
  const Token& op = q.program.back();
  const Query& s1 = p.get(src(q, 0));
  int64_t w1 = W.at(s1.id);
  const R d = q.interval, d1 = s1.interval;
  if (q.program.size() == 1) return w1;
  switch (op.op) {
    case Op::STREAM_AVG:
    case Op::STREAM_MIN:
    case Op::STREAM_MAX:
    case Op::STREAM_SUM: return w1 > 0 ? ceilOf(R(w1) * d1 / d) : 0;
    case Op::STREAM_TIMEMOVE: return std::max<int64_t>(0, w1 - std::get<int32_t>(op.v));
    case Op::STREAM_ADD: {
      const Query& s2 = p.get(src(q, 1));
      int64_t w2 = W.at(s2.id);
      return std::max(ceilOf(R(1 + w1) * d1 / d) - 1, ceilOf(R(1 + w2) * s2.interval / d) - 1);
    }
    case Op::STREAM_HASH: {
      const Query& s2 = p.get(src(q, 1));
      return hashTail(d1, w1, s2.interval, W.at(s2.id), d);
    }
    case Op::STREAM_SUBTRACT: {
      R rho = d / d1;
      R frac(rho.den - 1, rho.den);
      return std::max<int64_t>(0, ceilOf((frac + R(w1 + 1)) / rho) - 1);
    }
    case Op::STREAM_DEHASH_DIV: {
      R r = std::get<Rational>(q.program[1].v);
      R sigma = d / r, rho = d / d1;
      R frac(sigma.num + sigma.den - 1, sigma.den);
      return std::max<int64_t>(0, ceilOf((frac + R(w1 + 1)) / rho) - 1);
    }
    case Op::STREAM_DEHASH_MOD: {
      R rho = d / d1;
      return std::max<int64_t>(0, ceilOf(R(w1 + 1) / rho) - 1);
    }
    case Op::STREAM_AGSE: {
      auto [k, w] = std::get<std::pair<int32_t, int32_t>>(op.v);
      (void)w;
      return ceilOf(R((1 + w1) * flatWidth(s1), k)) - 1;
    }
    default: throw FatalError(std::string("compiler::computeStartupLatency: unsupported operator ") + opName(op.op));
  }
}

template <class F>
std::map<std::string, int64_t> sweep(const Plan& p, F f, const char* what) {
  std::map<std::string, int64_t> val;
  for (auto& q : p.queries)
    if (q.program.empty()) val[q.id] = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& q : p.queries) {
      if (val.count(q.id)) continue;
      bool ready = true;
      for (auto& d : q.dependencies())
        if (!val.count(d)) ready = false;
      if (!ready) continue;
      int64_t v = f(q, val);
      if (v > INT32_MAX || v < 0)
        throw CompileError(std::string(what == std::string("computeLogicalOrigin") ? "origin" : "tail") + " of stream '" +
                               q.id + "' is out of range",
                           q.loc);
      val[q.id] = v;
      progress = true;
    }
  }
  for (auto& q : p.queries)
    if (!val.count(q.id)) throw FatalError(std::string("compiler::") + what + ": unresolved for '" + q.id + "'");
  return val;
}

int toInt(int64_t v, const Query& q, const char* what) {
  if (v > INT32_MAX) throw CompileError(std::string(what) + " of stream '" + q.id + "' is out of range", q.loc);
  return int(v);
}

}  // namespace

void computeLogicalOrigins(Plan& p) {
  auto O = sweep(p, [&](const Query& q, const auto& m) { return originOf(p, q, m); }, "computeLogicalOrigin");
  for (auto& q : p.queries) q.origin = toInt(O[q.id], q, "origin");
}

void computeStartupLatencies(Plan& p) {
  auto W = sweep(p, [&](const Query& q, const auto& m) { return tailOf(p, q, m); }, "computeStartupLatency");
  for (auto& q : p.queries) q.tail = toInt(W[q.id], q, "tail");
}

}  // namespace ir::passes
