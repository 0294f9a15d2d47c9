// RATIONAL rounding, the product's against two methods tried for it (run by
// bench/compiled.sh; never a test). The fold is the RATIONAL detector's hot
// spot: sums of 180 RATIONALs, nearly every addition rounded by a continued
// fraction whose steps are dependent 64-bit divisions. Tried here:
//   lanes   four independent folds (a window's consecutive records) side by
//           side, each continued-fraction step without branches, so the
//           divisions of the lanes could overlap;
//   fdiv    the same lanes with each quotient from a double division,
//           corrected by one.
// Both must give ratAdd's results exactly; the output is ns per addition.
//   rounding [records] [width]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ir/values.hpp"

using ir::val::Rat;
using ir::val::u128;

namespace {

// a + b as ratAdd forms it, and whether ratAdd finishes it in nearest64
// (the sums the methods here replace; the others are left to ratAdd).
struct WideSum {
  bool neg, viaNearest;
  uint64_t m, d;  // |numerator|, denominator
};
WideSum wideSum(Rat a, Rat b) {
  const uint64_t lim = uint64_t(ir::val::kRatMax);
  const __int128 n = __int128(a.num) * b.den + __int128(b.num) * a.den;
  const u128 m = n < 0 ? u128(-n) : u128(n), d = u128(int64_t(a.den) * b.den);
  const bool via = !(a.den == b.den || m == 0 || (m <= lim && d <= lim) || m >= u128(lim) * d);
  return {n < 0, via, uint64_t(m), uint64_t(d)};
}

// One lane group of ratAdd, each lane that rounds by the method.
template <int N, bool FloatQuotient>
void addLanes(const Rat* a, const Rat* b, Rat* out) {
  const uint64_t lim = uint64_t(ir::val::kRatMax);
  uint64_t x[N], y[N], A[N], B[N], p0[N], q0[N], p1[N], q1[N];
  bool neg[N], alive[N], ended[N], exact[N], lane[N];
  for (int l = 0; l < N; ++l) {
    const WideSum w = wideSum(a[l], b[l]);
    lane[l] = w.viaNearest;
    if (!lane[l]) {
      out[l] = ir::val::ratAdd(a[l], b[l]);
      alive[l] = false;
      x[l] = y[l] = 1, p0[l] = q0[l] = p1[l] = q1[l] = 0;  // a lane at rest divides harmlessly
      continue;
    }
    neg[l] = w.neg, A[l] = x[l] = w.m, B[l] = y[l] = w.d;
    p0[l] = 0, q0[l] = 1, p1[l] = 1, q1[l] = 0, alive[l] = true, ended[l] = exact[l] = false;
  }
  for (bool any = true; any;) {
    any = false;
    for (int l = 0; l < N; ++l) {
      uint64_t t, r;
      if constexpr (FloatQuotient) {
        t = uint64_t(double(int64_t(x[l])) / double(int64_t(y[l])));
        r = x[l] - t * y[l];
        const bool below = int64_t(r) < 0;
        t -= below, r += below ? y[l] : 0;
        const bool above = r >= y[l];
        t += above, r -= above ? y[l] : 0;
      } else {
        t = x[l] / y[l], r = x[l] - t * y[l];
      }
      uint64_t mp, mq;
      const bool fits = !__builtin_mul_overflow(t, p1[l], &mp) && mp <= lim - p0[l] &&
                        !__builtin_mul_overflow(t, q1[l], &mq) && mq <= lim - q0[l];
      const bool step = alive[l] & fits, more = step & (r != 0);
      ended[l] |= alive[l] & !fits;
      exact[l] |= step & (r == 0);
      const uint64_t np1 = mp + p0[l], nq1 = mq + q0[l];
      p0[l] = step ? p1[l] : p0[l], q0[l] = step ? q1[l] : q0[l];
      p1[l] = step ? np1 : p1[l], q1[l] = step ? nq1 : q1[l];
      x[l] = more ? y[l] : x[l], y[l] = more ? r : y[l];
      alive[l] = more;
      any |= more;
    }
  }
  for (int l = 0; l < N; ++l) {
    if (!lane[l]) continue;
    uint64_t P = p1[l], Q = q1[l];
    if (ended[l]) ir::val::detail::nearestSemi(A[l], B[l], lim, p0[l], q0[l], p1[l], q1[l], P, Q);
    out[l] = ir::val::ratOfNearest(neg[l], P, Q, exact[l]);
  }
}

// nearest64 with a quotient below 8 found by three compare-and-subtract
// steps (no division) and the division kept for larger ones.
void nearestSmall(uint64_t a, uint64_t b, uint64_t lim, uint64_t& P, uint64_t& Q, bool& exact) {
  const uint64_t A = a, Bd = b;
  uint64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;
  exact = false;
  for (;;) {
    uint64_t t, r;
    if ((b >> 60) == 0 && a < (b << 3)) {
      const uint64_t b2 = b << 1, b4 = b << 2;
      r = a;
      const bool c4 = r >= b4;
      r -= c4 ? b4 : 0;
      const bool c2 = r >= b2;
      r -= c2 ? b2 : 0;
      const bool c1 = r >= b;
      r -= c1 ? b : 0;
      t = (c4 ? 4 : 0) + (c2 ? 2 : 0) + (c1 ? 1 : 0);
    } else {
      t = a / b, r = a % b;
    }
    if (u128(t) * p1 + p0 > lim || u128(t) * q1 + q0 > lim) {
      ir::val::detail::nearestSemi(A, Bd, lim, p0, q0, p1, q1, P, Q);
      return;
    }
    const uint64_t p2 = t * p1 + p0, q2 = t * q1 + q0;
    p0 = p1, q0 = q1, p1 = p2, q1 = q2;
    if (r == 0) {
      P = p1, Q = q1, exact = true;
      return;
    }
    a = b, b = r;
  }
}

// ratAdd with nearestSmall in place of nearest64.
Rat addSmall(Rat x, Rat y) {
  const WideSum w = wideSum(x, y);
  if (!w.viaNearest) return ir::val::ratAdd(x, y);
  uint64_t P, Q;
  bool exact;
  nearestSmall(w.m, w.d, uint64_t(ir::val::kRatMax), P, Q, exact);
  return ir::val::ratOfNearest(w.neg, P, Q, exact);
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int records = argc > 1 ? atoi(argv[1]) : 8000, width = argc > 2 ? atoi(argv[2]) : 180;
  std::mt19937_64 rng(1);
  std::vector<Rat> v;
  for (int i = 0; i < records + width; ++i)
    v.push_back(ir::val::ratFromWide(int64_t(rng() % 2000000000), 1 + int64_t(rng() % 1000000000)));
  std::vector<Rat> want(static_cast<size_t>(records)), got(static_cast<size_t>(records));
  const uint64_t before = ir::val::ratRounded();
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < records; ++r) {
    Rat acc{};
    for (int i = 0; i < width; ++i) acc = ir::val::ratAdd(acc, v[size_t(r + i)]);
    want[size_t(r)] = acc;
  }
  const double scalar = seconds(t0);
  const double adds = double(records) * width;
  printf("| method | ns an addition | speed against ratAdd |\n|---|---|---|\n");
  printf("| ratAdd, one fold at a time (the product) | %.1f | 1 |\n", scalar / adds * 1e9);
  auto lanes = [&](auto fn, const char* name) {
    constexpr int N = 4;
    t0 = std::chrono::steady_clock::now();
    for (int r = 0; r + N <= records; r += N) {
      Rat acc[N] = {}, x[N];
      for (int i = 0; i < width; ++i) {
        for (int l = 0; l < N; ++l) x[l] = v[size_t(r + l + i)];
        fn(acc, x, acc);
      }
      for (int l = 0; l < N; ++l) got[size_t(r + l)] = acc[l];
    }
    const double s = seconds(t0);
    for (int r = 0; r < records / N * N; ++r)
      if (!(got[size_t(r)] == want[size_t(r)])) {
        printf("%s: record %d differs from ratAdd\n", name, r);
        exit(1);
      }
    printf("| %s | %.1f | %.2f |\n", name, s / adds * 1e9, scalar / s);
  };
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < records; ++r) {
    Rat acc{};
    for (int i = 0; i < width; ++i) acc = addSmall(acc, v[size_t(r + i)]);
    got[size_t(r)] = acc;
  }
  const double small = seconds(t0);
  for (int r = 0; r < records; ++r)
    if (!(got[size_t(r)] == want[size_t(r)])) {
      printf("quotients below 8 without division: record %d differs from ratAdd\n", r);
      return 1;
    }
  printf("| one fold at a time, quotients below 8 by compare-and-subtract | %.1f | %.2f |\n", small / adds * 1e9,
         scalar / small);
  lanes(addLanes<4, false>, "4 folds side by side, branch-free steps");
  lanes(addLanes<4, true>, "the same, quotients by double division");
  printf("\n%llu of %.0f additions rounded; the lanes' results equal ratAdd's\n",
         (unsigned long long)(ir::val::ratRounded() - before) / 4, adds);
}
