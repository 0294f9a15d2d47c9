// How late each clocked slot finished: from its deadline to the moment its
// last record was written (and handed to subscribers). Log-linear buckets
// (16 per power of two, under 7% error), exact maximum; constant memory for
// runs of any length.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>

namespace engine {

class LatencyHistogram {
 public:
  void add(int64_t ns) {
    if (ns < 0) ns = 0;
    ++buckets_[bucketOf(uint64_t(ns))];
    ++count_;
    max_ = std::max(max_, ns);
  }
  int64_t count() const { return count_; }
  // The upper edge of the bucket holding quantile q (0 < q <= 1), in ns.
  int64_t quantile(double q) const {
    const int64_t want = std::max<int64_t>(1, int64_t(q * double(count_) + 0.999999));
    int64_t seen = 0;
    for (size_t b = 0; b < buckets_.size(); ++b) {
      seen += buckets_[b];
      if (seen >= want) return std::min(upperOf(b), max_);
    }
    return max_;
  }
  void print(FILE* f) const {
    if (!count_) return;
    auto us = [](int64_t ns) { return double(ns) / 1000.0; };
    fprintf(f,
            "slot lateness over %lld clocked slots (deadline to last record written): p50 %.1f us, p99 %.1f us, "
            "p99.9 %.1f us, max %.1f us\n",
            (long long)count_, us(quantile(0.5)), us(quantile(0.99)), us(quantile(0.999)), us(max_));
  }

 private:
  static constexpr int kSub = 16;
  static size_t bucketOf(uint64_t ns) {
    if (ns < kSub) return size_t(ns);
    int e = 63 - __builtin_clzll(ns);  // ns in [2^e, 2^(e+1))
    size_t sub = size_t((ns >> (e - 4)) & (kSub - 1));
    return size_t(kSub) * size_t(e - 3) + sub;
  }
  static int64_t upperOf(size_t b) {
    if (b < size_t(kSub)) return int64_t(b);
    int e = int(b / kSub) + 3;
    uint64_t sub = b % kSub;
    return int64_t(((uint64_t(kSub) + sub + 1) << (e - 4)) - 1);
  }
  std::array<int64_t, kSub * 61> buckets_{};
  int64_t count_ = 0, max_ = 0;
};

}  // namespace engine
