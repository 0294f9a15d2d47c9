// Property test: for random rational intervals, every operator's output
// (read back from disk) equals a direct evaluation of its index formula, and
// the record count follows from the slot grid, origin and tail.
#include <catch2/catch.hpp>

#include <random>

#include "grammar/front.hpp"
#include "ir/compile.hpp"
#include "run_support.hpp"

using ir::Rational;

namespace {

struct Case {
  std::string from;  // FROM expression over A and B
  int width;         // output elements per record
};

// Expected element values of record n (A's record j holds 1000+j, B's 2000+j).
std::vector<int32_t> expected(const std::string& op, const ir::Plan& p, int64_t n, int k, int w, Rational r) {
  const Rational dA = p.get("A").interval, dB = p.get("B").interval, d = p.get("out").interval;
  auto a = [](int64_t j) { return int32_t(1000 + j); };
  auto b = [](int64_t j) { return int32_t(2000 + j); };
  if (op == "+") {
    auto idx = [&](Rational ds) { return d == ds ? n : ir::floorOf(Rational(n) * d / ds); };
    return {a(idx(dA)), b(idx(dB))};
  }
  if (op == "#") {
    Rational z = dB / (dA + dB);
    int64_t f0 = ir::floorOf(z * Rational(n)), f1 = ir::floorOf(z * Rational(n + 1));
    return {f0 == f1 ? b(n - f0) : a(f0)};
  }
  if (op == "&") return {a(n + ir::ceilOf(Rational(n + 1) * d / r))};
  if (op == "%") return {a(n + ir::floorOf(Rational(n) * d / r))};
  if (op == "-") return {a(r == dA ? n : ir::ceilOf(Rational(n) * r / dA))};
  if (op == ">") return {a(n - k)};
  std::vector<int32_t> out;  // @(k, w) over a one-element stream
  int W = std::abs(w);
  for (int i = 0; i < W; ++i) out.push_back(a(w > 0 ? n * k - i : n * k - (W - 1) + i));
  return out;
}

}  // namespace

TEST_CASE("every operator matches its formula on random intervals", "[engine][property]") {
  std::mt19937 rng(20261130);
  const std::vector<Rational> deltas = {Rational(1, 10), Rational(1, 5), Rational(3, 10), Rational(1, 4),
                                        Rational(1, 3),  Rational(1, 2), Rational(2, 3),  Rational(1)};
  const std::vector<std::string> ops = {"+", "#", "&", "%", "-", ">", "@"};
  int checkedRecords = 0;
  for (int iter = 0; iter < 28; ++iter) {
    const std::string op = ops[size_t(iter) % ops.size()];
    Rational dA = deltas[rng() % deltas.size()], dB = deltas[rng() % deltas.size()];
    int k = 1 + int(rng() % 3), w = (rng() % 2 ? 1 : -1) * (1 + int(rng() % 4));
    Rational r;
    std::string from;
    if (op == "+") from = "A+B";
    else if (op == "#") from = "A#B";
    else if (op == ">") from = "A>" + std::to_string(k);
    else if (op == "@") from = "A@(" + std::to_string(k) + "," + std::to_string(w) + ")";
    else if (op == "-") {
      r = dA * Rational(1 + int(rng() % 3), 1 + int(rng() % 2));
      if (r < dA) r = dA;
      from = "A-" + std::to_string(r.num) + "/" + std::to_string(r.den);
    } else {
      // De-interleave removes a component slower than the stream (r > ΔA); with
      // r < ΔA the formula reads records that do not exist yet (NULL, as specified).
      do r = deltas[rng() % deltas.size()] * Rational(1 + int(rng() % 3));
      while (!(dA < r));
      from = std::string("A") + op + std::to_string(r.num) + "/" + std::to_string(r.den);
    }
    const std::string query = testing::twoSourceQuery(dA, dB, from);
    INFO("query: " << query);
    ir::Plan plan = ir::compile(rql::parseText(query), ir::defaultOptions());
    const ir::Query& out = plan.get("out");
    testing::RunDir d;
    d.write("a.txt", testing::sequence(1000, 5000));
    d.write("b.txt", testing::sequence(2000, 5000));
    const int limit = 200;
    REQUIRE(d.run(query, "--no-clock -m " + std::to_string(limit)) == 0);
    const int width = op == "+" ? 2 : op == "@" ? std::abs(w) : 1;
    auto recs = d.records("out", size_t(width));
    // Records within the run: due slots of `out` among the processed grid points.
    std::vector<Rational> all = {dA, dB, out.interval};
    int64_t den = 1;
    for (auto& x : all) den = std::lcm(den, x.den);
    std::vector<int64_t> ticks;
    for (auto& x : all) ticks.push_back(x.num * (den / x.den));
    std::vector<int64_t> cnt(ticks.size(), 1);
    int64_t dueOut = 0;
    const int64_t outTick = out.interval.num * (den / out.interval.den);
    for (int slot = 0; slot < limit - 1; ++slot) {
      int64_t t = INT64_MAX;
      for (size_t i = 0; i < ticks.size(); ++i) t = std::min(t, ticks[i] * cnt[i]);
      for (size_t i = 0; i < ticks.size(); ++i)
        if (ticks[i] * cnt[i] == t) ++cnt[i];
      if (t % outTick == 0) ++dueOut;
    }
    const int64_t expectCount = std::max<int64_t>(0, dueOut - out.tail - out.origin);
    CHECK(int64_t(recs.size()) == expectCount);
    for (size_t p = 0; p < recs.size(); ++p) {
      const int64_t n = out.origin + int64_t(p);
      INFO("record " << p << " (logical " << n << ")");
      CHECK(recs[p] == expected(op, plan, n, k, w, r));
      ++checkedRecords;
    }
  }
  CHECK(checkedRecords > 500);
}
