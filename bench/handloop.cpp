// Hand-written C++ loops that compute exactly what the benchmark queries
// compute, with the same arithmetic (vm/values.hpp), writing the same bytes
// as the engine's output artifact. They are the "what a programmer would
// write by hand" baseline of docs/performance.md.
//
//   handloop arith      A.bin B.bin OUT         N records of 3 INTEGERs
//   handloop interleave A.bin B.bin OUT COUNT   COUNT records of 1 INTEGER
//   handloop avg8       A.bin OUT               moving average of 8, RATIONAL
//   handloop qrs        rec205 bp_coef.txt d_coef.txt OUT FIRST COUNT
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ir/values.hpp"

using ir::val::Rat;

namespace {

std::vector<int32_t> readInts(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  std::vector<int32_t> v;
  int32_t buf[4096];
  size_t n;
  while ((n = fread(buf, 4, 4096, f)) > 0) v.insert(v.end(), buf, buf + n);
  fclose(f);
  return v;
}

std::vector<int32_t> readText(const char* path) {
  std::ifstream in(path);
  std::vector<int32_t> v;
  long long x;
  while (in >> x) v.push_back(int32_t(x));
  return v;
}

struct Out {
  FILE* f;
  std::vector<uint8_t> buf;
  explicit Out(const char* path) : f(fopen(path, "wb")) {
    if (!f) {
      perror(path);
      exit(1);
    }
  }
  void put(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
    if (buf.size() > (1 << 20)) flush();
  }
  void flush() {
    fwrite(buf.data(), 1, buf.size(), f);
    buf.clear();
  }
  ~Out() {
    flush();
    fclose(f);
  }
};

int32_t w(int64_t v) { return int32_t(uint32_t(uint64_t(v))); }

int runArith(char** argv) {
  auto a = readInts(argv[2]), b = readInts(argv[3]);
  Out out(argv[4]);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    int32_t r[3] = {w(int64_t(a[i]) * 3 + b[i]), w(int64_t(w(int64_t(a[i]) - b[i])) * w(int64_t(a[i]) + 7)),
                    w(int64_t(a[i] / 3) - b[i] / 5)};
    out.put(r, sizeof r);
  }
  return 0;
}

int runInterleave(char** argv) {
  auto a = readInts(argv[2]), b = readInts(argv[3]);
  Out out(argv[4]);
  long long count = atoll(argv[5]);
  // Equal intervals: the interleave runs b0, a0, b1, a1, ...
  for (long long n = 0; n < count; ++n) {
    int32_t v = (n % 2 == 0) ? b[size_t(n / 2)] : a[size_t(n / 2)];
    out.put(&v, 4);
  }
  return 0;
}

int runAvg8(char** argv) {
  auto a = readInts(argv[2]);
  Out out(argv[3]);
  for (size_t n = 7; n < a.size(); ++n) {
    Rat acc{0, 1};
    for (int i = 0; i < 8; ++i) acc = ir::val::ratAdd(acc, Rat{a[n - size_t(i)], 1});  // newest first
    acc = ir::val::ratDiv(acc, Rat{8, 1});
    out.put(&acc, 8);
  }
  return 0;
}

int runQrs(char** argv) {
  auto ecg = readInts(argv[2]);
  auto bp = readText(argv[3]), dc = readText(argv[4]);
  Out out(argv[5]);
  const long long first = atoll(argv[6]), count = atoll(argv[7]);
  const size_t N = size_t(first + count);
  std::vector<int32_t> mlii(N);
  for (size_t n = 0; n < N; ++n) mlii[n] = ecg[(2 * n) % ecg.size()];
  // 1. band-pass FIR over 25 samples (newest first), exact rational sum, /1000
  std::vector<Rat> bpOut(N), dOut(N), sq(N), mwi(N), thr(N);
  for (size_t n = 24; n < N; ++n) {
    Rat acc{0, 1};
    for (size_t i = 0; i < 25; ++i) acc = ir::val::ratAdd(acc, Rat{w(int64_t(mlii[n - i]) * bp[i]), 1});
    bpOut[n] = ir::val::ratDiv(acc, Rat{1000, 1});
  }
  // 2. derivative FIR over 5, 3. square /1000
  for (size_t n = 28; n < N; ++n) {
    Rat acc{0, 1};
    for (size_t i = 0; i < 5; ++i) acc = ir::val::ratAdd(acc, ir::val::ratMul(bpOut[n - i], Rat{dc[i], 1}));
    dOut[n] = acc;
    sq[n] = ir::val::ratDiv(ir::val::ratMul(acc, acc), Rat{1000, 1});
  }
  // 4. moving-window integration over 30, 5. threshold: average over 180
  for (size_t n = 57; n < N; ++n) {
    Rat acc{0, 1};
    for (size_t i = 0; i < 30; ++i) acc = ir::val::ratAdd(acc, sq[n - i]);
    mwi[n] = ir::val::ratDiv(acc, Rat{30, 1});
  }
  for (size_t n = 236; n < N; ++n) {
    Rat acc{0, 1};
    for (size_t i = 0; i < 180; ++i) acc = ir::val::ratAdd(acc, mwi[n - i]);
    thr[n] = ir::val::ratDiv(acc, Rat{180, 1});
  }
  for (size_t n = size_t(first); n < N; ++n) {
    int32_t centred = w(int64_t(mlii[n]) - 900);
    Rat env = ir::val::ratMul(mwi[n], Rat{5, 1});
    Rat det = ir::val::ratMul(ir::val::ratSub(mwi[n], ir::val::ratMul(thr[n], Rat{2, 1})), Rat{5, 1});
    out.put(&centred, 4);
    out.put(&env, 8);
    out.put(&det, 8);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string mode = argv[1];
  if (mode == "arith" && argc == 5) return runArith(argv);
  if (mode == "interleave" && argc == 6) return runInterleave(argv);
  if (mode == "avg8" && argc == 4) return runAvg8(argv);
  if (mode == "qrs" && argc == 8) return runQrs(argv);
  fprintf(stderr, "usage: see the comment at the top of bench/handloop.cpp\n");
  return 2;
}
