// JIT compiles of field programs and rule conditions, and switching streams
// to native code at block boundaries.
#include <algorithm>
#include <cstdio>
#include <set>

#include "engine/engine_impl.hpp"
#include "engine/operators/operators.hpp"
#if RDB_WITH_JIT
#include "jit/jit.hpp"
#endif

namespace engine {

// Compiles every stream's field program with the JIT, once, before the run
// (and each ad hoc unit in the background). A program the JIT cannot take
// stays on the VM (said with -v).
void Engine::Impl::compileNative(const std::vector<Stream*>& which, const std::string& unit, bool background) {
#if RDB_WITH_JIT
  if (!startJit()) return;
  JitWorker::Job job = programsJob(which, unit);
  if (background) {
    jitw->submit(std::move(job));
    return;
  }
  // The plan's chains, each one function, in optimised code only: unoptimised,
  // a chain ran slower than its members' own steps (the quick tier runs those
  // until the optimised code comes).
  const std::vector<JitWorker::Item> chained =
      unit == "plan" && opt.jitTier != 1 ? chainItems() : std::vector<JitWorker::Item>{};
  // The plan starts on quick code; the optimised code of the same programs
  // comes from the worker and switches in at a block boundary (same bytes).
  if (opt.jitTier == 0) {
    // A chain's members keep their quick code for the blocks the chain does
    // not take: their programs are compiled optimised inside the chain only.
    std::set<uint64_t> inChain;
    for (auto& c : chains)
      for (auto* m : c->members) inChain.insert(m->serial);
    tierUp = std::make_unique<JitWorker::Job>(job);
    std::erase_if(tierUp->items, [&](const JitWorker::Item& it) { return it.rule < 0 && inChain.count(it.serial); });
    for (auto& it : chained) tierUp->items.push_back(it);
  } else if (opt.jitTier == 2) {
    for (auto& it : chained) job.items.push_back(it);
  }
  job.tier = opt.jitTier == 2 ? jit::Tier::Optimised : jit::Tier::Quick;
  JitWorker::compileJob(jitw->jit(), job);
  std::vector<JitWorker::Job> jobs;
  jobs.push_back(std::move(job));
  adopt(jobs);
#else
  (void)which;
  (void)unit;
  (void)background;
#endif
}

#if RDB_WITH_JIT
bool Engine::Impl::startJit() {
  if (jitw) return true;
  std::string err;
  auto j = jit::Jit::create(err);
  if (!j) {
    fprintf(stderr, "warning: JIT unavailable (%s); running on the VM\n", err.c_str());
    return false;
  }
  if (!opt.jitCache.empty()) {
    constexpr uint64_t kCacheBytes = uint64_t(128) << 20;
    if (std::string why; !j->useCache(opt.jitCache, kCacheBytes, why)) {
      if (opt.jitCacheAsked) fprintf(stderr, "warning: no JIT code cache: %s\n", why.c_str());
      else if (opt.verbose) fprintf(stdout, "JIT: no code cache: %s\n", why.c_str());
    }
  }
  jitw = std::make_shared<JitWorker>(std::move(j));
  return true;
}

// Each stream's field program (reading its operands in place, or the scratch
// input records it gathers), then the plan's rule conditions (one record at a
// time, read whole; rules imported ad hoc run on the VM).
JitWorker::Job Engine::Impl::programsJob(const std::vector<Stream*>& which, const std::string& unit) {
  static const ir::Layout condLayout = [] {
    ir::Field f;
    f.type = ir::Type::INTEGER;
    return ir::Layout::of({f});
  }();
  JitWorker::Job job;
  job.unit = unit;
  for (auto* s : which) {
    if (s->identity || s->fusedInto) continue;  // a window that copies (or is folded by its reducer) runs no program
    JitWorker::Item it;
    it.serial = s->serial;
    it.prog = s->program.bytecode;
    it.in = s->in;
    it.out = s->out;
    it.block = true;
    if (s->operandPointers) it.operands = s->slotBase;
    job.items.push_back(std::move(it));
  }
  for (auto* s : which)
    if (s->rules) {
      int k = 0;
      for (auto& r : s->rules->rules()) {
        if (r.adhoc) break;
        JitWorker::Item it;
        it.serial = s->serial;
        it.rule = k++;
        it.prog = r.condition.bytecode;
        it.in = s->out;
        it.out = condLayout;
        it.block = true;
        job.items.push_back(std::move(it));
      }
    }
  return job;
}

// One item a chain, named by its last member.
std::vector<JitWorker::Item> Engine::Impl::chainItems() {
  std::vector<JitWorker::Item> items;
  for (auto& c : chains) {
    JitWorker::Item it;
    it.serial = c->members.back()->serial;
    for (auto& x : c->externals) {
      it.chainExternals.push_back(x.from);
      it.chainSettled.push_back(x.settled);
    }
    it.chain = ops::chainSteps(*c, streams);
    items.push_back(std::move(it));
  }
  return items;
}

// Switches streams to the code of finished units, between slots (no stream
// is running then). Code whose streams are all gone is released.
void Engine::Impl::adopt(std::vector<JitWorker::Job>& jobs) {
  std::map<uint64_t, Stream*> bySerial;
  for (auto& s : streams)
    if (!s->removed) bySerial[s->serial] = s.get();
  for (auto& job : jobs) {
    int native = 0, programs = 0, chainsRun = 0;
    bool used = false, cached = false;
    jitMs += job.ms;
    for (auto& it : job.items) {
      auto f = bySerial.find(it.serial);
      if (f == bySerial.end()) continue;
      Stream& s = *f->second;
      used = true;
      cached = cached || it.cached;
      if (!it.chain.empty()) {
        if (s.chain && s.chain->members.back() == &s) s.chain->native = it.chainFn;
        chainsRun += it.chainFn != nullptr;
        if (!it.chainFn && opt.verbose && job.tier != jit::Tier::Optimised)
          fprintf(stdout, "chain ending at %s runs stream by stream: %s\n", s.q->id.c_str(), it.why.c_str());
        continue;
      }
      if (it.rule < 0) {
        ++programs;
        s.program.native = it.blockFn;
        if (it.blockFn) ++native;
        else if (opt.verbose && !(job.unit == "plan" && job.tier == jit::Tier::Optimised))  // said once
          fprintf(stdout, "stream %s runs on the VM: %s\n", s.q->id.c_str(), it.why.c_str());
      } else if (s.rules && size_t(it.rule) < s.rules->rules().size() && !s.rules->rules()[size_t(it.rule)].adhoc) {
        s.rules->rules()[size_t(it.rule)].condition.native = it.blockFn;
      }
    }
    if (opt.verbose && (programs || chainsRun)) {
      // The tier-up of a plan that started on quick code (not a start on optimised code).
      const bool optimisedPlan = job.unit == "plan" && job.tier == jit::Tier::Optimised && opt.jitTier == 0;
      const char* from = cached ? " (code from the cache)" : "";
      if (optimisedPlan && programs == 0)  // every stream it recompiles is in a chain
        fprintf(stdout, "JIT: %d chains recompiled optimised in %.1f ms, off the slot thread%s\n", chainsRun, job.ms,
                from);
      else if (optimisedPlan)  // a chain's members are compiled inside it
        fprintf(stdout, "JIT: %d of %d streams recompiled optimised in %.1f ms, off the slot thread%s\n", native,
                programs, job.ms, from);
      else fprintf(stdout, "JIT: %d of %d streams compiled in %.1f ms%s\n", native, programs, job.ms, from);
      if (chainsRun) {  // compiled, and not held back by a reader's chain that has no code
        int running = 0;
        for (auto& c : chains) running += ops::chainRuns(*c);
        fprintf(stdout, "JIT: %d chains run as one loop each\n", running);
      }
      fflush(stdout);  // a live engine's log is read while it runs
    }
    if (!used && job.unit != "plan" && unitsGone.insert(job.unit).second) {
      JitWorker::Job rm;
      rm.unit = job.unit;
      rm.remove = true;
      jitw->submit(std::move(rm));
    }
  }
}

void Engine::Impl::adoptCompiled() {
  if (!jitw || !jitw->pending()) return;
  auto jobs = jitw->takeDone();
  if (!jobs.empty()) adopt(jobs);
}

// A JIT unit whose streams are all gone releases its code (on the worker, after
// any compile of it still queued there).
void Engine::Impl::releaseUnusedUnits() {
  if (!jitw) return;
  std::map<std::string, bool> used;
  for (auto& s : streams)
    if (s->adhoc && !s->unit.empty()) used[s->unit] = used[s->unit] || !s->removed;
  for (auto& [unit, u] : used)
    if (!u && unitsGone.insert(unit).second) {
      JitWorker::Job rm;
      rm.unit = unit;
      rm.remove = true;
      jitw->submit(std::move(rm));
    }
}
#endif

}  // namespace engine
