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

// One lane group of ratAdd where every lane must round (the caller checks).
template <int N, bool FloatQuotient>
void addLanes(const Rat* a, const Rat* b, Rat* out) {
  const uint64_t lim = uint64_t(ir::val::kRatMax);
  uint64_t x[N], y[N], A[N], B[N], p0[N], q0[N], p1[N], q1[N];
  bool neg[N], alive[N], ended[N], exact[N], lane[N];
  for (int l = 0; l < N; ++l) {
    const __int128 n = __int128(a[l].num) * b[l].den + __int128(b[l].num) * a[l].den;
    const u128 m = n < 0 ? u128(-n) : u128(n), d = u128(int64_t(a[l].den) * b[l].den);
    lane[l] = !(a[l].den == b[l].den || m == 0 || (m <= lim && d <= lim) || m >= u128(lim) * d);
    if (!lane[l]) {
      out[l] = ir::val::ratAdd(a[l], b[l]);
      alive[l] = false;
      x[l] = y[l] = 1, p0[l] = q0[l] = p1[l] = q1[l] = 0;  // a lane at rest divides harmlessly
      continue;
    }
    neg[l] = n < 0, A[l] = x[l] = uint64_t(m), B[l] = y[l] = uint64_t(d);
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
  lanes(addLanes<4, false>, "4 folds side by side, branch-free steps");
  lanes(addLanes<4, true>, "the same, quotients by double division");
  printf("\n%llu of %.0f additions rounded; the lanes' results equal ratAdd's\n",
         (unsigned long long)(ir::val::ratRounded() - before) / 3, adds);
}
