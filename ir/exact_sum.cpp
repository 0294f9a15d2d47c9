#include "exact_sum.hpp"

#include <gmp.h>

namespace ir::val {

// ------------------------------------------------------------ I256
I256 I256::of(__int128 v) {
  I256 r;
  r.w[0] = uint64_t(v);
  r.w[1] = uint64_t(v >> 64);
  r.w[2] = r.w[3] = v < 0 ? ~uint64_t(0) : 0;
  return r;
}
I256& I256::operator+=(const I256& o) {
  unsigned long long c = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned long long s;
    const bool c1 = __builtin_uaddll_overflow(w[i], o.w[i], &s);
    const bool c2 = __builtin_uaddll_overflow(s, c, &s);
    w[i] = s;
    c = c1 || c2;
  }
  return *this;
}
I256& I256::operator-=(const I256& o) { return *this += -o; }
I256 I256::operator-() const {
  I256 r;
  unsigned long long c = 1;
  for (int i = 0; i < 4; ++i) {
    unsigned long long s;
    c = __builtin_uaddll_overflow(~w[i], c, &s);
    r.w[i] = s;
  }
  return r;
}
int cmp(const I256& a, const I256& b) {
  if (a.w[3] != b.w[3]) return int64_t(a.w[3]) < int64_t(b.w[3]) ? -1 : 1;
  for (int i = 2; i >= 0; --i)
    if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
  return 0;
}

namespace {

constexpr int kFrac = 96;  // fractional bits of an image
// The largest common denominator: with elements below 2^32 in magnitude and
// fewer than 2^40 of them, the numerator stays within 128 bits.
constexpr uint64_t kMaxDen = uint64_t(1) << 48;

// The nearest RATIONAL to n / d (d > 0) whatever their size, through GMP.
Rat nearestWide(__int128 n, __int128 d) {
  mpz_t a, b;
  mpz_init(a);
  mpz_init(b);
  auto set = [](mpz_t z, __int128 v) {
    const unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    mpz_set_ui(z, uint64_t(m >> 64));
    mpz_mul_2exp(z, z, 64);
    mpz_add_ui(z, z, uint64_t(m));
    if (v < 0) mpz_neg(z, z);
  };
  set(a, n);
  set(b, d);
  const Rat r = ratNearestBig(a, b);
  mpz_clear(a);
  mpz_clear(b);
  return r;
}

// m * 2^96 for |m| < 2^127.
I256 shifted96(__int128 m) {
  I256 r;
  r.w[0] = 0;
  r.w[1] = uint64_t(m) << 32;
  r.w[2] = uint64_t(m >> 32);
  r.w[3] = uint64_t(m >> 96);
  return r;
}

// floor(p * 2^96 / q) for a RATIONAL p/q; `exact` when nothing was cut off.
__int128 imageOf(Rat x, bool& exact) {
  const uint64_t m = uint64_t(x.num < 0 ? -int64_t(x.num) : x.num), q = uint64_t(x.den);
  // Three 64-by-32-bit divisions, 32 bits of the quotient each after the first.
  uint64_t t = m << 32;
  const uint64_t a1 = t / q;
  t = (t % q) << 32;
  const uint64_t a2 = t / q;
  t = (t % q) << 32;
  const uint64_t a3 = t / q, r = t % q;
  const __int128 mag = (__int128(a1) << 64) | (__int128(a2) << 32) | __int128(a3);
  exact = r == 0;
  return x.num < 0 ? -mag - (exact ? 0 : 1) : mag;
}

// Magnitude helpers on non-negative I256 values.
unsigned bitLength(const I256& v) {
  for (int i = 3; i >= 0; --i)
    if (v.w[i]) return unsigned(64 * i + 64 - __builtin_clzll(v.w[i]));
  return 0;
}
// v >> s as 128 bits (the caller knows it fits), and whether bits were cut off.
u128 shiftDown(const I256& v, unsigned s, bool& cut) {
  cut = false;
  I256 r;
  const unsigned limbs = s / 64, bits = s % 64;
  for (unsigned i = 0; i < limbs; ++i) cut = cut || v.w[i];
  if (bits) cut = cut || (v.w[limbs] & ((uint64_t(1) << bits) - 1));
  for (unsigned i = 0; i + limbs < 4; ++i) {
    uint64_t lo = v.w[i + limbs] >> bits;
    if (bits && i + limbs + 1 < 4) lo |= v.w[i + limbs + 1] << (64 - bits);
    r.w[i] = lo;
  }
  return (u128(r.w[1]) << 64) | r.w[0];
}
// (hi:lo) / n with hi < n: one hardware division on x86-64 (a 128-bit
// division in C++ is a library call).
inline uint64_t div128by64(uint64_t hi, uint64_t lo, uint64_t n, uint64_t& r) {
#if defined(__x86_64__)
  uint64_t q;
  __asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(n));
  return q;
#else
  const u128 cur = (u128(hi) << 64) | lo;
  r = uint64_t(cur % n);
  return uint64_t(cur / n);
#endif
}
// Non-negative v divided by n >= 1: floor, and whether there was a remainder.
I256 divSmall(const I256& v, uint64_t n, bool& rem) {
  I256 q;
  uint64_t r = 0;
  for (int i = 3; i >= 0; --i) q.w[i] = div128by64(r, v.w[i], n, r);
  rem = r != 0;
  return q;
}
// v * m for non-negative v below 2^192 and m below 2^64.
I256 mulSmall(const I256& v, uint64_t m) {
  I256 r;
  u128 carry = 0;
  for (int i = 0; i < 4; ++i) {
    const u128 p = u128(v.w[i]) * m + carry;
    r.w[i] = uint64_t(p);
    carry = p >> 64;
  }
  return r;
}

// The RATIONAL magnitude nearest to a / b (a >= 0, b > 0, both below 2^96).
void nearestPos(u128 a, u128 b, uint64_t& P, uint64_t& Q) {
  const uint64_t lim = uint64_t(kRatMax);
  if (a == 0) P = 0, Q = 1;
  else if (a >= u128(lim) * b) P = lim, Q = 1;
  else detail::nearest(a, b, lim, P, Q);
}

}  // namespace

uint64_t& exactFolds() {
  static thread_local uint64_t n = 0;
  return n;
}

// ------------------------------------------------------------ ExactSum
void ExactSum::reset(bool images) {
  *this = ExactSum{};
  images_ = images;
}

void ExactSum::add(int64_t v, int sign) {
  present_ += sign;
  if (images_) {
    const I256 x = shifted96(v);
    if (sign > 0) image_ += x;
    else image_ -= x;
  } else {
    num_ += __int128(sign) * v * __int128(den_);
  }
}

void ExactSum::add(Rat r, int sign) {
  present_ += sign;
  if (images_) {
    bool exact;
    const I256 x = I256::of(imageOf(r, exact));
    if (sign > 0) image_ += x;
    else image_ -= x;
    if (!exact) inexact_ += sign;
    return;
  }
  const uint64_t q = uint64_t(r.den);
  if (den_ % q != 0) {
    // A new common denominator: the lcm, while it stays within 2^48.
    const uint64_t g = detail::gcd64(den_, q), d = den_ / g * q;
    if (den_ / g > kMaxDen / q) {
      rebuild_ = images_ = true;  // the caller adds every element again, as images
      return;
    }
    num_ *= __int128(d / den_);
    den_ = d;
  }
  num_ += __int128(sign) * r.num * __int128(den_ / q);
}

std::optional<Rat> ExactSum::result(bool avg) const {
  const int64_t n = avg ? present_ : 1;
  if (!images_) {
    const __int128 d = __int128(den_) * n, big = __int128(1) << 95;
    if (num_ < big && num_ > -big && d < big) return ratFromWide(num_, d);
    return nearestWide(num_, d);
  }
  // The exact value times 2^96 lies in [lo, hi].
  I256 lo = image_, hi = image_;
  hi += I256::of(inexact_);
  if (n > 1) {
    // Signed floor of lo / n and ceiling of hi / n, through the magnitudes.
    bool rem;
    if (lo.negative()) {
      lo = -divSmall(-lo, uint64_t(n), rem);
      if (rem) lo -= I256::of(1);
    } else {
      lo = divSmall(lo, uint64_t(n), rem);
    }
    if (hi.negative()) {
      hi = -divSmall(-hi, uint64_t(n), rem);
    } else {
      hi = divSmall(hi, uint64_t(n), rem);
      if (rem) hi += I256::of(1);
    }
  }
  bool neg = false;
  if (lo.negative()) {
    if (!hi.negative() && !hi.isZero()) return std::nullopt;  // around zero
    neg = true;
    I256 t = -hi;
    hi = -lo;
    lo = t;
  }
  if (lo.isZero()) {
    if (hi.isZero()) return Rat{0, 1};  // exactly zero
    return std::nullopt;                // maybe exactly zero
  }
  const uint64_t lim = uint64_t(kRatMax);
  const I256 limImage = shifted96(__int128(lim));
  if (cmp(hi, limImage) >= 0) {
    if (cmp(lo, limImage) <= 0) return std::nullopt;  // maybe exactly the largest
    ++ratRounded();
    return Rat{neg ? -int32_t(lim) : int32_t(lim), 1};
  }
  // Both ends to 63 bits first (64-bit arithmetic), then to 95 (below 2^96,
  // as nearest() needs) when a midpoint may lie between them: as many
  // fractional bits as the integer part leaves.
  const unsigned intBits = bitLength(hi) > unsigned(kFrac) ? bitLength(hi) - unsigned(kFrac) : 0;
  uint64_t P1, Q1, P2, Q2;
  for (unsigned width : {63u, 95u}) {
    const unsigned s = unsigned(kFrac) + intBits - width, F = width - intBits;
    bool cut;
    const u128 aLo = shiftDown(lo, s, cut);
    u128 aHi = shiftDown(hi, s, cut);
    if (cut) ++aHi;
    const u128 b = u128(1) << F;
    if (width == 63) {
      bool exact;
      auto near64 = [&](u128 a, uint64_t& P, uint64_t& Q) {
        if (a == 0) P = 0, Q = 1;
        else if (a >= u128(lim) * b) P = lim, Q = 1;
        else detail::nearest64(uint64_t(a), uint64_t(b), lim, P, Q, exact);
      };
      near64(aLo, P1, Q1);
      near64(aHi, P2, Q2);
    } else {
      nearestPos(aLo, b, P1, Q1);
      nearestPos(aHi, b, P2, Q2);
    }
    if (P1 == P2 && Q1 == Q2) break;
  }
  if (P1 != P2 || Q1 != Q2) return std::nullopt;  // a midpoint inside: only the exact sum can tell
  // P/Q inside [lo, hi] may be the value itself: only the exact sum can tell.
  const I256 at = shifted96(__int128(P1));
  if (cmp(mulSmall(lo, Q1), at) <= 0 && cmp(at, mulSmall(hi, Q1)) <= 0) return std::nullopt;
  ++ratRounded();
  if (P1 == 0) return Rat{0, 1};
  return Rat{neg ? -int32_t(P1) : int32_t(P1), int32_t(Q1)};
}

// ------------------------------------------------------------ ExactFold
struct ExactFold::Big {
  mpq_t sum, t;
  Big() {
    mpq_init(sum);
    mpq_init(t);
  }
  ~Big() {
    mpq_clear(sum);
    mpq_clear(t);
  }
};

ExactFold::ExactFold() : big_(std::make_unique<Big>()) { ++exactFolds(); }
ExactFold::~ExactFold() = default;

void ExactFold::add(int64_t v) {
  ++present_;
  mpz_set_si(mpq_numref(big_->t), long(v));
  mpz_set_ui(mpq_denref(big_->t), 1);
  mpq_add(big_->sum, big_->sum, big_->t);
}
void ExactFold::add(Rat r) {
  ++present_;
  mpq_set_si(big_->t, r.num, uint64_t(r.den));  // a RATIONAL is reduced: canonical
  mpq_add(big_->sum, big_->sum, big_->t);
}
Rat ExactFold::result(bool avg) {
  if (avg && present_ > 1) {
    mpz_mul_si(mpq_denref(big_->sum), mpq_denref(big_->sum), long(present_));
    mpq_canonicalize(big_->sum);
  }
  return ratNearestBig(mpq_numref(big_->sum), mpq_denref(big_->sum));
}

// nearest() in GMP integers: the last convergent within the bounds or the
// largest semiconvergent after it, whichever is nearer (a tie: the smaller
// denominator).
Rat ratNearestBig(const void* numP, const void* denP) {
  const mpz_srcptr num = static_cast<mpz_srcptr>(numP), den = static_cast<mpz_srcptr>(denP);
  const uint64_t lim = uint64_t(kRatMax);
  if (mpz_sgn(num) == 0 || mpz_sgn(den) == 0) return {0, 1};
  const bool neg = (mpz_sgn(num) < 0) != (mpz_sgn(den) < 0);
  mpz_t A, B, a, b, t, r, x, y;
  for (mpz_ptr z : {A, B, a, b, t, r, x, y}) mpz_init(z);
  mpz_abs(A, num);
  mpz_abs(B, den);
  mpz_gcd(t, A, B);
  mpz_divexact(A, A, t);
  mpz_divexact(B, B, t);
  uint64_t P = 0, Q = 1;
  mpz_mul_ui(t, B, lim);
  const int vsLim = mpz_cmp(A, t);
  if (vsLim >= 0) {
    if (vsLim > 0) ++ratRounded();
    P = lim, Q = 1;
  } else if (mpz_cmp_ui(A, lim) <= 0 && mpz_cmp_ui(B, lim) <= 0) {
    P = mpz_get_ui(A), Q = mpz_get_ui(B);
  } else {
    ++ratRounded();
    mpz_set(a, A);
    mpz_set(b, B);
    u128 p0 = 0, q0 = 1, p1 = 1, q1 = 0;
    for (;;) {
      mpz_fdiv_qr(t, r, a, b);
      // t can be huge: the bounds are tested before any product
      const bool small = mpz_cmp_ui(t, lim) <= 0;
      const u128 tt = small ? mpz_get_ui(t) : 0;
      const bool over = !small || tt * p1 + p0 > lim || tt * q1 + q0 > lim;
      if (over) {
        const u128 tp = p1 ? (lim - p0) / p1 : ~u128(0), tq = q1 ? (lim - q0) / q1 : ~u128(0);
        const u128 ts = tp < tq ? tp : tq;
        P = uint64_t(p1), Q = uint64_t(q1);
        if (ts != 0) {
          const uint64_t sp = uint64_t(ts * p1 + p0), sq = uint64_t(ts * q1 + q0);
          // |A/B - p/q| compared as |A q - B p| / q, both over B
          mpz_mul_ui(x, A, uint64_t(q1));
          mpz_submul_ui(x, B, uint64_t(p1));
          mpz_abs(x, x);
          mpz_mul_ui(x, x, sq);
          mpz_mul_ui(y, A, sq);
          mpz_submul_ui(y, B, sp);
          mpz_abs(y, y);
          mpz_mul_ui(y, y, uint64_t(q1));
          const int c = mpz_cmp(y, x);
          if (c < 0 || (c == 0 && sq < q1)) P = sp, Q = sq;
        }
        break;
      }
      const u128 p2 = tt * p1 + p0, q2 = tt * q1 + q0;
      p0 = p1, q0 = q1, p1 = p2, q1 = q2;
      if (mpz_sgn(r) == 0) {
        P = uint64_t(p1), Q = uint64_t(q1);
        break;
      }
      mpz_swap(a, b);
      mpz_swap(b, r);
    }
  }
  for (mpz_ptr z : {A, B, a, b, t, r, x, y}) mpz_clear(z);
  if (P == 0) return {0, 1};
  return {neg ? -int32_t(P) : int32_t(P), int32_t(Q)};
}

}  // namespace ir::val
