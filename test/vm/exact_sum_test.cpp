// SUMC and AVG as one operation: ExactSum (and its GMP fallback, as the
// engine's reducers use them) against an independent model: the exact sum
// in GMP rationals, and a check that the result is the nearest RATIONAL
// through its two neighbours in the bounded set (modular inverses, no
// continued fraction), on random and crafted windows that slide.
#include <gmp.h>

#include <catch2/catch.hpp>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "ir/exact_sum.hpp"

using ir::val::Rat;

namespace {

constexpr int64_t M = ir::val::kRatMax;

struct Elem {
  bool isInt;
  int64_t v;  // an integer element
  Rat r;      // a RATIONAL element
};

// Exact rational arithmetic for the model.
struct Q {
  mpq_t q;
  Q() { mpq_init(q); }
  Q(int64_t n, int64_t d) {
    mpq_init(q);
    mpz_set_si(mpq_numref(q), long(n));
    mpz_set_si(mpq_denref(q), long(d));
    mpq_canonicalize(q);
  }
  Q(const Q& o) {
    mpq_init(q);
    mpq_set(q, o.q);
  }
  Q& operator=(const Q& o) {
    mpq_set(q, o.q);
    return *this;
  }
  ~Q() { mpq_clear(q); }
};
Q operator-(const Q& a, const Q& b) {
  Q r;
  mpq_sub(r.q, a.q, b.q);
  return r;
}
Q absq(const Q& a) {
  Q r;
  mpq_abs(r.q, a.q);
  return r;
}
int cmpq(const Q& a, const Q& b) { return mpq_cmp(a.q, b.q); }

int64_t modInverse(int64_t a, int64_t m) {  // a^-1 mod m, gcd(a, m) = 1, m > 1
  __int128 t = 0, nt = 1, r = m, nr = ((a % m) + m) % m;
  while (nr) {
    const __int128 k = r / nr;
    std::tie(t, nt) = std::make_tuple(nt, t - k * nt);
    std::tie(r, nr) = std::make_tuple(nr, r - k * nr);
  }
  return int64_t(((t % m) + m) % m);
}

// The neighbours of p/q (p >= 0, reduced) among the fractions a/b with
// 0 <= a <= M, 1 <= b <= M: Farey neighbours satisfy c q - p d = 1 (above)
// and p d - c q = 1 (below); the adjacent one has the largest d in bounds.
// false when there is none on that side.
bool neighbour(int64_t p, int64_t q, bool above, int64_t& c, int64_t& d) {
  if (q == 1) {  // an integer p: (p d + 1)/d above, (p d - 1)/d below, d as large as allowed
    d = above ? (p == 0 ? M : std::min<int64_t>(M, (M - 1) / p))
              : std::min<int64_t>(M, (M + 1) / std::max<int64_t>(p, 1));
    if (!above && p == 0) return false;
    if (above && p >= M) return false;
    c = above ? p * d + 1 : p * d - 1;
    return d >= 1;
  }
  int64_t d0 = above ? (q - modInverse(p, q)) % q : modInverse(p, q);
  int64_t c0 = above ? (1 + p * d0) / q : (p * d0 - 1) / q;
  int64_t k = (M - d0) / q;
  if (p > 0) k = std::min(k, (M - c0) / p);
  c = c0 + k * p;
  d = d0 + k * q;
  return d >= 1 && c >= 0;
}

// Whether `got` is the RATIONAL the rule makes of x: valid, and no
// representable fraction nearer (a tie: the smaller denominator, then the
// smaller magnitude), saturating beyond M.
bool isNearest(const Q& x, Rat got) {
  if (got.den <= 0 || got.num == INT32_MIN) return false;
  if (got.num != 0 && std::gcd(int64_t(got.num), int64_t(got.den)) != 1) return false;
  if (got.num == 0 && got.den != 1) return false;
  const bool neg = mpq_sgn(x.q) < 0 || (mpq_sgn(x.q) == 0 && got.num < 0);
  if ((got.num < 0) != neg && got.num != 0) return false;
  Q ax = absq(x);
  const int64_t p = got.num < 0 ? -int64_t(got.num) : got.num, q = got.den;
  const Q f(p, q), lim(M, 1);
  if (cmpq(ax, lim) >= 0) return p == M && q == 1;
  const Q dist = absq(ax - f);
  for (bool above : {false, true}) {
    int64_t c, d;
    if (!neighbour(p, q, above, c, d)) continue;
    const Q g(c, d);
    const int k = cmpq(absq(ax - g), dist);
    if (k < 0) return false;
    if (k == 0 && (d < q || (d == q && c < p))) return false;
  }
  return true;
}

// Elements [from, to) summed pairwise (the sizes of the denominators grow
// along a tree, not a line).
Q treeSum(const std::vector<Elem>& w, size_t from, size_t to) {
  if (to - from == 1) return w[from].isInt ? Q(w[from].v, 1) : Q(w[from].r.num, w[from].r.den);
  const size_t mid = from + (to - from) / 2;
  Q a = treeSum(w, from, mid), b = treeSum(w, mid, to), r;
  mpq_add(r.q, a.q, b.q);
  return r;
}

Q exactOf(const std::vector<Elem>& w, size_t from, size_t to, bool avg, int64_t& present) {
  present = int64_t(to - from);
  Q s = treeSum(w, from, to);
  if (avg && present > 1) {
    Q n(present, 1);
    mpq_div(s.q, s.q, n.q);
  }
  return s;
}

// The engine's way (reduce.cpp): slide, rebuild as images when the common
// denominator overflows, GMP when the sum cannot tell.
Rat engineResult(ir::val::ExactSum& s, const std::vector<Elem>& w, size_t from, size_t to, bool avg) {
  auto addAll = [&](bool images) {
    s.reset(images);
    for (size_t i = from; i < to; ++i) w[i].isInt ? s.add(w[i].v, +1) : s.add(w[i].r, +1);
  };
  if (s.needsRebuild()) addAll(true);
  std::optional<Rat> r = s.result(avg);
  if (!r && s.imageMode()) {
    addAll(false);
    if (s.needsRebuild()) addAll(true);
    r = s.result(avg);
  }
  if (r) return *r;
  ir::val::ExactFold f;
  for (size_t i = from; i < to; ++i) w[i].isInt ? f.add(w[i].v) : f.add(w[i].r);
  return f.result(avg);
}

Rat randomRat(std::mt19937_64& g, int64_t maxDen, int64_t maxNum) {
  const int64_t q = std::uniform_int_distribution<int64_t>(1, maxDen)(g);
  int64_t p = std::uniform_int_distribution<int64_t>(-maxNum, maxNum)(g);
  const int64_t gg = std::gcd(p, q);
  return Rat{int32_t(p / (gg ? gg : 1)), int32_t(q / (gg ? gg : 1))};
}

void checkSliding(const std::vector<Elem>& xs, size_t W, const char* what) {
  ir::val::ExactSum s;
  const uint64_t folds = ir::val::exactFolds();
  for (size_t n = 0; n < xs.size(); ++n) {
    xs[n].isInt ? s.add(xs[n].v, +1) : s.add(xs[n].r, +1);
    if (n >= W) xs[n - W].isInt ? s.add(xs[n - W].v, -1) : s.add(xs[n - W].r, -1);
    const size_t from = n >= W ? n - W + 1 : 0;
    for (bool avg : {false, true}) {
      int64_t present;
      const Q x = exactOf(xs, from, n + 1, avg, present);
      const Rat got = engineResult(s, xs, from, n + 1, avg);
      char* xs_ = mpq_get_str(nullptr, 10, x.q);
      std::string xstr(xs_);
      free(xs_);
      INFO("exact " << xstr);
      INFO(what << " W=" << W << " record " << n << (avg ? " AVG " : " SUMC ") << got.num << "/" << got.den);
      REQUIRE(isNearest(x, got));
    }
  }
  INFO(what << " W=" << W);
  CHECK(ir::val::exactFolds() - folds < xs.size() / 4 + 1);  // the exact way stays rare
}

}  // namespace

TEST_CASE("the model's neighbour check rejects a fraction that is not the nearest", "[exact]") {
  CHECK(isNearest(Q(1, 3), Rat{1, 3}));
  CHECK_FALSE(isNearest(Q(1, 3), Rat{1, 2}));
  CHECK_FALSE(isNearest(Q(1, 3), Rat{715827882, 2147483647}));  // near, not nearest: 1/3 is exact
  // 2147483649/2 lies halfway between two integers: toward zero.
  CHECK(isNearest(Q(2147483649LL, 2), Rat{1073741824, 1}));
  CHECK_FALSE(isNearest(Q(2147483649LL, 2), Rat{1073741825, 1}));
  CHECK(isNearest(Q(5000000000LL, 1), Rat{int32_t(M), 1}));
  CHECK_FALSE(isNearest(Q(1, 4), Rat{0, 0}));
}

TEST_CASE("SUMC and AVG are the exact sum rounded once, sliding, on random windows", "[exact][property]") {
  std::mt19937_64 g(43);
  struct Kind {
    const char* name;
    std::function<Elem()> make;
  };
  std::vector<Kind> kinds{
      {"unrelated denominators",
       [&] {
         return Elem{false, 0, randomRat(g, M, M)};
       }},
      {"small values, large denominators",
       [&] {
         return Elem{false, 0, randomRat(g, M, 1000)};
       }},
      {"thousandths",
       [&] {
         return Elem{false, 0, randomRat(g, 1000, M)};
       }},
      {"integers near the limit",
       [&] {
         return Elem{true, std::uniform_int_distribution<int64_t>(-M, M)(g), {}};
       }},
      {"UINT values",
       [&] {
         return Elem{true, std::uniform_int_distribution<int64_t>(0, 4294967295LL)(g), {}};
       }},
      {"mixed",
       [&] {
         return std::uniform_int_distribution<int>(0, 1)(g)
                    ? Elem{true, std::uniform_int_distribution<int64_t>(-9, 9)(g), {}}
                    : Elem{false, 0, randomRat(g, 1 << 20, 1 << 20)};
       }},
  };
  for (auto& k : kinds)
    for (size_t W : {1, 2, 5, 30, 180}) {
      std::vector<Elem> xs;
      for (int i = 0; i < 400; ++i) xs.push_back(k.make());
      checkSliding(xs, W, k.name);
    }
}

TEST_CASE("a window of 10,000 unrelated fractions slides exactly", "[exact][property]") {
  std::mt19937_64 g(7);
  const size_t W = 10000;
  std::vector<Elem> xs;
  for (size_t i = 0; i < W + 300; ++i) xs.push_back(Elem{false, 0, randomRat(g, M, 1 << 16)});
  ir::val::ExactSum s;
  for (size_t n = 0; n < xs.size(); ++n) {
    s.add(xs[n].r, +1);
    if (n >= W) s.add(xs[n - W].r, -1);
    const size_t from = n >= W ? n - W + 1 : 0;
    if (n + 1 < W || n % 23 != 0) {
      if (s.needsRebuild()) engineResult(s, xs, from, n + 1, true);  // as the reducer does every record
      continue;
    }
    int64_t present;
    const Q x = exactOf(xs, from, n + 1, true, present);
    INFO("record " << n);
    REQUIRE(isNearest(x, engineResult(s, xs, from, n + 1, true)));
  }
}

TEST_CASE("sums on a midpoint or exactly representable go the exact way and are right", "[exact]") {
  // Large unrelated denominators that cancel: the images cannot tell, GMP does.
  const int32_t q1 = 2147483629, q2 = 2147483587;  // primes: no common denominator within 2^48
  const std::vector<std::vector<Elem>> cases{
      // 1073741824 + 1/2 exactly: the tie between two integers, toward zero.
      {{false, 0, {123456789, q1}},
       {false, 0, {987654321, q2}},
       {true, 1073741824, {}},
       {false, 0, {1, 2}},
       {false, 0, {-123456789, q1}},
       {false, 0, {-987654321, q2}}},
      // exactly 1/3, and exactly 0
      {{false, 0, {5, q1}}, {false, 0, {7, q2}}, {false, 0, {1, 3}}, {false, 0, {-5, q1}}, {false, 0, {-7, q2}}},
      {{false, 0, {5, q1}}, {false, 0, {7, q2}}, {false, 0, {-5, q1}}, {false, 0, {-7, q2}}},
      // just beside a midpoint: 1/2 of an ulp of 1/q1 away
      {{false, 0, {1, q1}}, {false, 0, {1, q2}}, {false, 0, {-1, q2}}, {false, 0, {1, 2}}},
      // the largest magnitude exactly, and past it
      {{true, 2147483647, {}}, {false, 0, {1, q1}}, {false, 0, {-1, q1}}},
      {{true, 2147483647, {}}, {false, 0, {1, q1}}, {false, 0, {1, q2}}},
  };
  const uint64_t before = ir::val::exactFolds();
  for (size_t c = 0; c < cases.size(); ++c) {
    for (bool avg : {false, true}) {
      INFO("case " << c << (avg ? " AVG" : " SUMC"));
      ir::val::ExactSum s;
      for (auto& e : cases[c]) e.isInt ? s.add(e.v, +1) : s.add(e.r, +1);
      int64_t present;
      const Q x = exactOf(cases[c], 0, cases[c].size(), avg, present);
      REQUIRE(isNearest(x, engineResult(s, cases[c], 0, cases[c].size(), avg)));
    }
  }
  CHECK(ir::val::exactFolds() > before);  // the rare path ran
}
