// Waiting for a state in tests. A busy machine (a sanitizer build beside other
// work) is slow, not wrong: a test polls for the state it needs, with a
// generous deadline, instead of sleeping a fixed time and expecting it.
#pragma once

#include <chrono>
#include <thread>

namespace testing {

// Polls `ok` every `step` until it holds, for up to `limit`; whether it did.
template <class F>
bool eventually(F ok, std::chrono::milliseconds limit = std::chrono::seconds(60),
                std::chrono::milliseconds step = std::chrono::milliseconds(20)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ok()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace testing
