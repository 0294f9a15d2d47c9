// Writes N records of one INTEGER (deterministic pseudo-random values) for
// the synthetic benchmarks: gen N SEED OUT.bin
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s N SEED OUT.bin\n", argv[0]);
    return 2;
  }
  uint64_t n = strtoull(argv[1], nullptr, 10);
  uint64_t x = strtoull(argv[2], nullptr, 10) * 0x9e3779b97f4a7c15ULL + 1;
  FILE* out = fopen(argv[3], "wb");
  if (!out) {
    perror(argv[3]);
    return 1;
  }
  std::vector<int32_t> buf;
  buf.reserve(1 << 16);
  for (uint64_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    buf.push_back(int32_t(x % 20001) - 10000);
    if (buf.size() == buf.capacity()) {
      fwrite(buf.data(), 4, buf.size(), out);
      buf.clear();
    }
  }
  fwrite(buf.data(), 4, buf.size(), out);
  fclose(out);
  return 0;
}
