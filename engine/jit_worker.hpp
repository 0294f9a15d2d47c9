// Compiles ad hoc JIT units on a thread of their own, so that an import never
// stalls the slot thread: imported streams start on the VM and switch to
// their native code at a slot boundary once it is ready (the VM and the JIT
// agree byte for byte, so the switch is invisible in the artifacts). The
// worker owns the JIT; while it runs, every compile and removal goes
// through it, one at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jit/jit.hpp"

namespace engine {

class JitWorker : public std::enable_shared_from_this<JitWorker> {
 public:
  // One program to compile, with its own copies (the streams may be removed
  // before the code is ready).
  struct Item {
    uint64_t serial = 0;  // the stream it belongs to
    int rule = -1;        // -1: the field program; else the rule's index
    vm::Program prog;
    ir::Layout in, out;
    bool block = false;                 // a stream step (jit::BlockFn) over these operands
    std::vector<int> operands;          // first input element of each operand (block form)
    std::vector<jit::ChainStep> chain;  // set: a chain whose last member is `serial`
    std::vector<int> chainExternals;    // jit::Request::chainExternals
    std::vector<char> chainSettled;     // jit::Request::chainSettled
    jit::FieldFn fn = nullptr;
    jit::BlockFn blockFn = nullptr;
    jit::ChainFn chainFn = nullptr;
    std::string why;
    bool cached = false;  // from the code cache
  };
  struct Job {
    std::string unit;
    std::vector<Item> items;
    bool remove = false;  // remove the unit's code instead of compiling
    jit::Tier tier = jit::Tier::Optimised;
    double ms = 0;
  };

  explicit JitWorker(std::unique_ptr<jit::Jit> j) : jit_(std::move(j)) {}
  jit::Jit& jit() { return *jit_; }  // for synchronous compiles before the worker starts

  void submit(Job job);
  // Compiles a job's items in place (on whatever thread calls it).
  static void compileJob(jit::Jit& j, Job& job);
  // Finished compile jobs (cheap when there are none).
  std::vector<Job> takeDone();
  bool pending() const { return pending_.load(std::memory_order_acquire) > 0; }

  // Stops the thread, waiting at most `wait` for a compile in progress.
  // False when it is still compiling: the thread is left to finish on its own
  // (it holds what it uses), and the process should end without running
  // static destructors under it.
  static bool shutdown(const std::shared_ptr<JitWorker>& w, std::chrono::milliseconds wait);

 private:
  void loop();
  std::unique_ptr<jit::Jit> jit_;
  std::mutex mu_;
  std::condition_variable cv_, finishedCv_;
  std::deque<Job> todo_, done_;
  std::atomic<int> pending_{0};  // submitted compile jobs not yet taken back
  bool stop_ = false, started_ = false, finished_ = false;
  std::thread thread_;
};

}  // namespace engine
