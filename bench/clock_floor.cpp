// The machine's floor for clocked lateness: a loop that does no work and
// spins to each deadline of a 10 kHz grid, then notes how late it saw it.
// Whatever this shows (preemption, interrupts) no engine on this core can beat.
//   clock_floor [SLOTS]   (default 30000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const long slots = argc > 1 ? atol(argv[1]) : 30000;
  using clock = std::chrono::steady_clock;
  std::vector<double> late;
  late.reserve(size_t(slots));
  const auto anchor = clock::now();
  for (long k = 1; k <= slots; ++k) {
    const auto deadline = anchor + std::chrono::microseconds(100 * k);
    while (clock::now() < deadline) {
    }
    late.push_back(std::chrono::duration<double, std::micro>(clock::now() - deadline).count());
  }
  std::sort(late.begin(), late.end());
  auto q = [&](double p) { return late[std::min(late.size() - 1, size_t(p * double(late.size())))]; };
  printf("p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us\n", q(0.5), q(0.99), q(0.999), late.back());
}
