#include "jit_worker.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memory.hpp"

namespace engine {

void JitWorker::compileJob(jit::Jit& j, Job& job) {
  std::vector<jit::Request> reqs;
  for (size_t i = 0; i < job.items.size(); ++i) {
    Item& it = job.items[i];
    reqs.push_back({job.unit + "_" + std::to_string(i), &it.prog, &it.in, &it.out, it.block, it.operands,
                    it.chain.empty() ? nullptr : &it.chain, it.chainExternals, it.chainSettled});
  }
  auto t0 = std::chrono::steady_clock::now();
  auto res = j.compile(job.unit, reqs, job.tier);
  job.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < res.size(); ++i) {
    job.items[i].fn = res[i].fn;
    job.items[i].blockFn = res[i].block;
    job.items[i].chainFn = res[i].chain;
    job.items[i].why = res[i].why;
    job.items[i].cached = res[i].cached;
  }
}

void JitWorker::submit(Job job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!job.remove) pending_.fetch_add(1, std::memory_order_release);
  todo_.push_back(std::move(job));
  if (!started_) {
    started_ = true;
    // The thread keeps the worker alive until it ends, even past shutdown().
    thread_ = std::thread([self = shared_from_this()] { self->loop(); });
  }
  cv_.notify_one();
}

std::vector<JitWorker::Job> JitWorker::takeDone() {
  std::vector<Job> out;
  if (!pending()) return out;
  std::lock_guard<std::mutex> lock(mu_);
  while (!done_.empty()) {
    out.push_back(std::move(done_.front()));
    done_.pop_front();
    pending_.fetch_sub(1, std::memory_order_release);
  }
  return out;
}

void JitWorker::loop() {
  // Compiles yield to the slot thread when they share a core (clocked runs
  // pinned to one core would otherwise see the compile as lateness).
  setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 10);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !todo_.empty(); });
    if (stop_) break;
    Job job = std::move(todo_.front());
    todo_.pop_front();
    lock.unlock();
    if (job.remove) {
      jit_->removeUnit(job.unit, job.tier);
    } else {
      compileJob(*jit_, job);
    }
    // LLVM's working memory of a big unit goes back to the system, not only to the heap.
    returnFreeMemory();
    lock.lock();
    if (!job.remove) done_.push_back(std::move(job));
  }
  finished_ = true;
  finishedCv_.notify_all();
}

bool JitWorker::shutdown(const std::shared_ptr<JitWorker>& w, std::chrono::milliseconds wait) {
  if (!w) return true;
  std::unique_lock<std::mutex> lock(w->mu_);
  if (!w->started_) return true;
  w->stop_ = true;
  w->cv_.notify_one();
  const bool done = w->finishedCv_.wait_for(lock, wait, [&] { return w->finished_; });
  lock.unlock();
  if (done) {
    w->thread_.join();
    return true;
  }
  w->thread_.detach();
  return false;
}

}  // namespace engine
