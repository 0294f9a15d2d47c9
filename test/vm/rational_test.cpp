// RATIONAL arithmetic against exact arithmetic: exact where the result fits,
// the nearest representable fraction otherwise, never a denominator <= 0.
#include <catch2/catch.hpp>

#include <random>

#include "ir/values.hpp"

using ir::val::Rat;
using i128 = __int128;

namespace {

constexpr int64_t M = ir::val::kRatMax;

bool valid(Rat r) {
  if (r.den <= 0 || r.num == INT32_MIN) return false;
  if (r.num == 0) return r.den == 1;
  return std::gcd(int64_t(r.num), int64_t(r.den)) == 1;
}

// Compares |x - p1/q1| with |x - p2/q2| for x = n/d (d > 0), exactly.
// Values here are small enough for 128-bit products (test operands only).
int closer(i128 n, i128 d, int64_t p1, int64_t q1, int64_t p2, int64_t q2) {
  auto absv = [](i128 v) { return v < 0 ? -v : v; };
  i128 e1 = absv(n * q1 - d * p1) * q2, e2 = absv(n * q2 - d * p2) * q1;
  return e1 < e2 ? -1 : e1 > e2 ? 1 : 0;
}

// Brute force: the fraction p/q, |p| <= lim, 1 <= q <= lim, nearest to n/d; ties to the smaller denominator.
std::pair<int64_t, int64_t> bruteNearest(i128 n, i128 d, int64_t lim) {
  bool neg = n < 0;
  if (neg) n = -n;
  int64_t bp = 0, bq = 1;
  for (int64_t q = 1; q <= lim; ++q) {
    i128 f = n * q / d;
    for (i128 p : {f, f + 1, i128(lim)}) {
      if (p > lim) continue;
      int64_t g = std::gcd(int64_t(p), q);
      int64_t rp = int64_t(p) / (g ? g : 1), rq = q / (g ? g : 1);
      if (p == 0) rp = 0, rq = 1;
      int c = closer(n, d, rp, rq, bp, bq);
      if (c < 0 || (c == 0 && rq < bq)) bp = rp, bq = rq;
    }
  }
  return {neg ? -bp : bp, bq};
}

}  // namespace

TEST_CASE("nearest fraction under both bounds equals a brute-force search (small bound)", "[vm][rational]") {
  std::mt19937_64 rng(20261201);
  for (int lim : {7, 50, 200}) {
    for (int i = 0; i < 3000; ++i) {
      i128 n = i128(rng() % 2000000) - 1000000, d = 1 + i128(rng() % 1000000);
      if (i % 5 == 0) d = 1 + i128(rng() % 500);  // many values above the bound too
      INFO("lim " << lim << " x = " << int64_t(n) << "/" << int64_t(d));
      bool neg = n < 0;
      Rat r = ir::val::ratFromParts(neg, ir::val::u128(neg ? -n : n), ir::val::u128(d), uint64_t(lim));
      auto [p, q] = bruteNearest(n, d, lim);
      CHECK(r.num == p);
      CHECK(r.den == q);
    }
  }
}

// The mean of an exact integer fold takes a 32-bit shortcut; it must be the
// reduced fraction the general division makes, for every sign, size and count.
TEST_CASE("the mean of an exact integer fold is the general division's reduced fraction", "[vm][rational]") {
  std::mt19937_64 rng(20261205);
  const std::vector<int64_t> sums = {0, 1, -1, 30, -30, 256, M, -M, M - 1, 1 << 30, 46341 * 2};
  const std::vector<int64_t> counts = {1, 2, 3, 30, 180, 256, 257, 65536, M};
  auto check = [](int64_t sum, int64_t n) {
    INFO(sum << " / " << n);
    const Rat fast = ir::val::ratMean(sum, n), general = ir::val::ratDiv(Rat{int32_t(sum), 1}, Rat{int32_t(n), 1});
    CHECK(fast.num == general.num);
    CHECK(fast.den == general.den);
  };
  for (int64_t sum : sums)
    for (int64_t n : counts) check(sum, n);
  for (int i = 0; i < 200000; ++i) {
    const int64_t n = i % 3 ? 1 + int64_t(rng() % 300) : 1 + int64_t(rng() % M);
    const int64_t mag = i % 2 ? int64_t(rng() % (M + 1)) : int64_t(rng() % 100000);
    check(rng() % 2 ? mag : -mag, n);
  }
}

TEST_CASE("every RATIONAL operation is exact when it fits and nearest otherwise", "[vm][rational]") {
  std::mt19937_64 rng(7);
  const std::vector<int64_t> edges = {0, 1, -1, 2, -2, M, -M, M - 1, 46341, 65536, 1000003};
  auto pick = [&](int i) -> Rat {
    int64_t n, d;
    switch ((i + int(rng() % 7)) % 5) {
      case 0: n = edges[rng() % edges.size()], d = 1 + int64_t(rng() % 3 ? rng() % 10 : M - 1); break;
      case 1: n = 1, d = M; break;
      default: n = int64_t(rng() % (2 * M + 1)) - M, d = 1 + int64_t(rng() % M);
    }
    Rat r = ir::val::ratFromWide(n, d);
    REQUIRE(valid(r));
    return r;
  };
  int exact = 0, rounded = 0;
  for (int i = 0; i < 20000; ++i) {
    Rat a = pick(i), b = pick(i + 1);
    struct Op {
      const char* name;
      Rat got;
      i128 n, d;
    };
    std::vector<Op> ops = {
        {"+", ir::val::ratAdd(a, b), i128(a.num) * b.den + i128(b.num) * a.den, i128(a.den) * b.den},
        {"-", ir::val::ratSub(a, b), i128(a.num) * b.den - i128(b.num) * a.den, i128(a.den) * b.den},
        {"*", ir::val::ratMul(a, b), i128(a.num) * b.num, i128(a.den) * b.den},
    };
    if (b.num != 0) ops.push_back({"/", ir::val::ratDiv(a, b), i128(a.num) * b.den, i128(a.den) * b.num});
    for (auto& op : ops) {
      INFO(a.num << "/" << a.den << " " << op.name << " " << b.num << "/" << b.den << " = " << op.got.num << "/"
                 << op.got.den);
      REQUIRE(valid(op.got));
      i128 n = op.n, d = op.d;
      if (d < 0) n = -n, d = -d;
      // exact value reduced
      i128 an = n < 0 ? -n : n, ad = d;
      i128 x = an, y = ad;
      while (y) {
        i128 t = x % y;
        x = y;
        y = t;
      }
      if (x > 1) n /= x, d /= x;
      if ((n < 0 ? -n : n) <= M && d <= M) {
        CHECK(i128(op.got.num) == n);
        CHECK(i128(op.got.den) == d);
        ++exact;
        continue;
      }
      ++rounded;
      if ((n < 0 ? -n : n) >= i128(M) * d) {  // saturation
        CHECK(op.got.den == 1);
        CHECK(int64_t(op.got.num) == (n < 0 ? -M : M));
        continue;
      }
      // Nearest: no fraction with a neighbouring denominator or numerator does better.
      // (Spot checks: the exhaustive method test is above, with small bounds.)
      for (int k = 0; k < 20; ++k) {
        int64_t q = 1 + int64_t(rng() % M);
        if (k == 0) q = op.got.den;
        if (k == 1 && op.got.den > 1) q = op.got.den - 1;
        if (k == 2 && op.got.den < M) q = op.got.den + 1;
        i128 f = n * q / d;
        for (i128 p = f - 1; p <= f + 1; ++p) {
          if (p > M || p < -M) continue;
          CHECK(closer(n, d, op.got.num, op.got.den, int64_t(p), q) <= 0);
        }
      }
    }
  }
  CHECK(exact > 1000);
  CHECK(rounded > 1000);
}

TEST_CASE("conversions to RATIONAL: integers saturate, doubles round to the nearest, sign-correct", "[vm][rational]") {
  using ir::val::rationalize;
  CHECK(ir::val::ratFromInt(INT32_MIN) == Rat{-int32_t(M), 1});
  CHECK(ir::val::ratFromInt(4294967295LL) == Rat{int32_t(M), 1});
  CHECK(ir::val::ratFromInt(-5) == Rat{-5, 1});
  CHECK(rationalize(-2.25) == Rat{-9, 4});
  CHECK(rationalize(-1.5) == Rat{-3, 2});
  CHECK(rationalize(0.1) == Rat{1, 10});  // the nearest to the double 0.1 under the bounds
  CHECK(rationalize(1e300) == Rat{int32_t(M), 1});
  CHECK(rationalize(-1e300) == Rat{-int32_t(M), 1});
  CHECK(rationalize(1e-300) == Rat{0, 1});
  CHECK(rationalize(1.0 / double(M)) == Rat{1, int32_t(M)});
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    double x = std::ldexp(double(rng() % (1ull << 53)), -int(rng() % 90)) * (rng() % 2 ? 1 : -1);
    Rat r = rationalize(x);
    INFO(x << " -> " << r.num << "/" << r.den);
    REQUIRE(valid(r));
    CHECK((r.num < 0) == (x < 0 && r.num != 0));
    if (std::fabs(x) < double(M)) CHECK(std::fabs(double(r.num) / r.den - x) <= std::fabs(x) * 1e-9 + 1.0 / double(M));
  }
}

TEST_CASE("text to RATIONAL rounds a value that does not fit by the same rule", "[vm][rational]") {
  Rat r;
  REQUIRE(ir::val::parseRational("7000000000/3", r));
  CHECK(r == Rat{int32_t(M), 1});  // beyond 2^31-1: saturates
  REQUIRE(ir::val::parseRational("5000000000/3", r));
  CHECK(r == Rat{1666666667, 1});  // the nearest: no numerator may exceed 2^31-1
  REQUIRE(ir::val::parseRational("1/4294967296", r));
  CHECK(r == Rat{0, 1});  // below half the smallest step
  REQUIRE(ir::val::parseRational("3000000000/4000000000", r));
  CHECK(r == Rat{3, 4});
  REQUIRE(ir::val::parseRational("-6/4", r));
  CHECK(r == Rat{-3, 2});
  REQUIRE(ir::val::parseRational("2147483648/2147483647", r));
  CHECK(valid(r));
  CHECK(r.den > 1);
  CHECK_FALSE(ir::val::parseRational("1/0", r));
}

TEST_CASE("a stored pair that breaks the rule is normalized on read", "[vm][rational]") {
  CHECK(ir::val::ratNormalize({6, -4}) == Rat{-3, 2});
  CHECK(ir::val::ratNormalize({INT32_MIN, 1}) == Rat{-int32_t(M), 1});
  CHECK(ir::val::ratNormalize({INT32_MIN, -1}) == Rat{int32_t(M), 1});
  CHECK(ir::val::ratNormalize({5, 0}) == Rat{5, 1});
  CHECK(ir::val::ratNormalize({0, 7}) == Rat{0, 1});
  CHECK(ir::val::ratNormalize({-1680322355, -1681000448}) == ir::val::ratFromWide(1680322355, 1681000448));
}
