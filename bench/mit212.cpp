// Converts a MIT-BIH signal file in format 212 (two 12-bit samples packed in
// three bytes) into the BINFILE the benchmark queries declare: records of
// two little-endian INTEGERs (channel 0, channel 1).
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s IN.dat OUT.bin\n", argv[0]);
    return 2;
  }
  FILE* in = fopen(argv[1], "rb");
  if (!in) {
    perror(argv[1]);
    return 1;
  }
  FILE* out = fopen(argv[2], "wb");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  unsigned char b[3];
  uint64_t n = 0;
  while (fread(b, 1, 3, in) == 3) {
    int32_t s0 = b[0] | ((b[1] & 0x0f) << 8);
    int32_t s1 = b[2] | ((b[1] & 0xf0) << 4);
    if (s0 & 0x800) s0 -= 0x1000;  // 12-bit two's complement
    if (s1 & 0x800) s1 -= 0x1000;
    int32_t rec[2] = {s0, s1};
    fwrite(rec, sizeof rec, 1, out);
    ++n;
  }
  fclose(in);
  fclose(out);
  fprintf(stderr, "%llu records\n", (unsigned long long)n);
  return 0;
}
