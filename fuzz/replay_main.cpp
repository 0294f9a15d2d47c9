// A plain main around a libFuzzer entry point, for the normal build: runs
// LLVMFuzzerTestOneInput once over every file given (a directory: each of its
// regular files, sorted). A reproducer whose defect is back aborts the
// program, so the meson test that runs it fails. As under libFuzzer
// (-rss_limit_mb=2048, which also bounds one malloc), an allocation of more
// than 2 GiB is a failure too: memory findings replay as such.
//   replay_fuzz_store fuzz/regressions/fuzz_store
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
constexpr size_t kMallocLimit = size_t(2048) << 20;
void* allocate(size_t n) {
  if (n > kMallocLimit) {
    std::fprintf(stderr, "\n==replay== out-of-memory: one allocation of %zu bytes (limit 2048 MiB)\n", n);
    std::abort();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return allocate(n); }
void* operator new[](size_t n) { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (auto& e : fs::directory_iterator(argv[i], ec))
        if (e.is_regular_file(ec) && e.path().filename().string()[0] != '.') files.push_back(e.path().string());
    } else {
      files.push_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "%s: no inputs (usage: %s FILE_OR_DIR...)\n", argv[0], argv[0]);
    return 2;
  }
  for (auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], f.c_str());
      return 2;
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::printf("replay %s (%zu bytes)\n", f.c_str(), bytes.size());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu input(s) replayed\n", files.size());
  return 0;
}
