// The engine: runs a compiled plan slot by slot over exact rational time.
// Each slot runs the due computed streams (producers before consumers; in
// parallel on a oneTBB flow graph when threads > 1), then the due sources
// read their next record. Every stream is stored as it is produced.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "ir/ir.hpp"

namespace engine {

struct Options {
  int64_t limit = 0;      // -m N: the zero step plus N-1 slots; 0 = unlimited
  bool noClock = false;   // do not sleep to slot deadlines
  bool untilEof = false;  // stop before the first slot that would read past a source's end
  int threads = 0;        // 0 = all cores, 1 = serial
  bool verbose = false;
  bool interpret = false;  // run field programs on the VM even when the JIT is built
  bool stopOnKey = false;  // a byte on a terminal stdin stops the run (xretractor without -k)
};

struct EngineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Engine {
 public:
  Engine(const ir::Plan& plan, Options opt);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Opens sources and artifacts. Throws EngineError with a clear message.
  void prepare();
  // Runs until the limit, the end of input (--until-eof) or `stop`.
  // Returns the number of slots processed.
  int64_t run(const std::atomic<bool>& stop);
  // Closes artifacts (rotation renames, counter update).
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace engine
