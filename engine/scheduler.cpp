// The slot clock: grid points of the plan's intervals, blocks of slots, the
// sources' reads of a block and the run loop.
#include <poll.h>
#include <sys/prctl.h>

#include <algorithm>
#include <thread>

#include "engine/engine_impl.hpp"
#include "engine/latency.hpp"

namespace engine {

// The grid point the counters stand at: the smallest next multiple among the
// distinct intervals; passGridPoint() moves the counters past it.
int64_t Engine::Impl::gridPoint(const std::vector<int64_t>& c) const {
  int64_t t = INT64_MAX;
  for (size_t i = 0; i < ticks.size(); ++i) t = std::min(t, ticks[i] * c[i]);
  return t;
}
void Engine::Impl::passGridPoint(std::vector<int64_t>& c, int64_t t) const {
  for (size_t i = 0; i < ticks.size(); ++i) c[i] += ticks[i] * c[i] == t;
}

// The next n grid points.
void Engine::Impl::planBlock(int n) {
  block.slots = n;
  block.t.resize(size_t(n));
  block.due.resize(ticks.size());
  for (auto& d : block.due) d.resize(size_t(n));
  block.allDue = ticks.size() == 1;
  if (block.allDue) {  // one interval: every slot is due
    std::fill(block.due[0].begin(), block.due[0].end(), 1);
    for (int j = 0; j < n; ++j) block.t[size_t(j)] = ticks[0] * counters[0]++;
    now = block.t[size_t(n - 1)];
    return;
  }
  for (int j = 0; j < n; ++j) {
    const int64_t t = gridPoint(counters);
    for (size_t i = 0; i < ticks.size(); ++i) block.due[i][size_t(j)] = ticks[i] * counters[i] == t;
    passGridPoint(counters, t);
    block.t[size_t(j)] = t;
  }
  now = block.t[size_t(n - 1)];
}

// Pass 2 of every slot of the block, done first: each due source reads its
// next record; what a stream computing in slot j sees is the count before
// that slot's read. A source that runs out ends the block after that slot.
bool Engine::Impl::readSources() {
  int last = block.slots - 1;  // the slot whose read exhausted a source (--until-eof)
  bool exhausted = false;
  for (auto* s : declared) {
    const std::vector<char>& due = block.due[s->tickIndex];
    History& h = s->hist;
    int j = 0;
    while (j < block.slots) {
      // The due slots from j on whose records lie contiguously in the ring.
      int run = 0, end = j;
      const int64_t room = h.contiguous();
      for (; end < block.slots && run < room; ++end) {
        s->vis[size_t(end)] = h.count + run;
        run += due[size_t(end)];
      }
      const int got = run ? s->source->nextMany(h.nextData(), h.nextNulls(), run) : 0;
      h.commit(got);
      if (got < run || (run && s->source->exhausted())) {
        // The read of record `got` (of this run) exhausted it: find its slot.
        int seen = 0;
        for (int x = j; x < end; ++x)
          if (due[size_t(x)] && ++seen == got) {
            if (opt.untilEof) last = std::min(last, x);
            break;
          }
        exhausted = true;
        if (got < run) {  // the rest of this run reads as the source now does
          for (int x = got; x < run; ++x) {
            s->source->next(h.nextData(), h.nextNulls());
            h.commit();
          }
        }
      }
      j = end;
    }
  }
  if (last + 1 < block.slots) {  // the rest of the block never happens
    for (size_t i = 0; i < ticks.size(); ++i)
      for (int j = last + 1; j < block.slots; ++j) counters[i] -= block.due[i][size_t(j)];
    block.slots = last + 1;
    now = block.t[size_t(last)];
  }
  return !(exhausted && opt.untilEof);
}

int64_t Engine::run(const std::atomic<bool>& stop, const SlotHooks& hooks) {
  Impl& m = *impl_;
  const auto anchor = std::chrono::steady_clock::now();
  int64_t slots = 0, nextIdle = 0;
  std::vector<const std::string*> wrote;
  LatencyHistogram lateness;  // clocked runs: deadline to the slot's last record
  auto listening = [&] { return hooks.afterSlot && (!hooks.listening || hooks.listening()); };
  auto deadlineOf = [&](int64_t t) {
    return anchor + std::chrono::nanoseconds(int64_t(__int128(t) * 1000000000 / m.ticksPerSecond));
  };
  // Clocked: wake at the deadline, not up to the default 50 us timer slack later.
  if (!m.opt.noClock) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (listening()) {  // the zero step: every source has its record 0
    for (auto* s : m.declared) wrote.push_back(&s->q->id);
    hooks.afterSlot(wrote);
  }
  while (!stop.load(std::memory_order_relaxed)) {
    if (m.opt.limit > 0 && slots >= m.opt.limit - 1) break;
#if RDB_WITH_JIT
    if (m.tierUp && (!m.graph || m.schedTrial >= kTrialBlocks) &&
        std::chrono::steady_clock::now() - anchor >= kTierUpAfter) {
      m.jitw->submit(std::move(*m.tierUp));
      m.tierUp.reset();
    }
    m.adoptCompiled();  // code that became ready switches in at this boundary
#endif
    // Slots per block: one while a client wants every slot's records;
    // clocked, one slot, or every slot already due when behind schedule.
    int n = m.blockSlots;
    if (m.opt.limit > 0) n = int(std::min<int64_t>(n, m.opt.limit - 1 - slots));
    if (listening() || m.liveSource) n = 1;  // a DEVICE is read as its records come
    std::chrono::steady_clock::time_point deadline{};
    if (!m.opt.noClock) {
      // The next grid point; the block grows with the slots whose deadline has passed.
      m.now = m.gridPoint(m.counters);  // an import while waiting joins after this slot
      deadline = deadlineOf(m.now);
      if (hooks.waitUntil) hooks.waitUntil(deadline);
      else std::this_thread::sleep_until(deadline);
      if (stop.load(std::memory_order_relaxed)) break;
      if (n > 1) {
        const auto late = std::chrono::steady_clock::now();
        int due = 0;
        m.gridProbe.assign(m.counters.begin(), m.counters.end());
        for (; due < n; ++due) {  // how many grid points are due by now
          const int64_t t = m.gridPoint(m.gridProbe);
          if (deadlineOf(t) > late) break;
          m.passGridPoint(m.gridProbe, t);
        }
        n = std::max(due, 1);
      }
    } else if (hooks.idle && slots >= nextIdle) {
      hooks.idle();  // an import here joins at the next grid point, the block's first
      nextIdle = slots + 4096;
    }
    m.planBlock(n);
    // Sources first (pass 2 of each slot), then every computed stream over the
    // whole block, producers before consumers.
    const bool more = m.readSources();
    if (m.retrialAt >= 0 && slots >= m.retrialAt) {
      m.retrialAt = -1;
      m.buildGraph();
      m.schedTrial = 0;
      m.serialTimes.clear();
      m.graphTimes.clear();
    }
    const bool trial = m.graph && m.schedTrial < kTrialBlocks;
    const auto p0 = trial ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const bool serialTurn = trial && (m.schedTrial % 2 == 1);
    m.runStreams(serialTurn);
    m.slotsRun = slots;
    if (trial) m.timeTrialBlock(std::chrono::steady_clock::now() - p0, serialTurn);
    for (auto* s : m.computed)
      if (!s->error.empty()) throw EngineError("stream " + s->q->id + ": " + s->error);
    // Data first, then the index entries it covers; clocked runs push both out
    // every block, offline runs when the store's buffer fills.
    for (auto* s : m.computed) {
      if (!s->wrote) continue;
      try {
        if (s->store && !m.opt.noClock) s->store->flush();
        s->meta->flush(durable(*s));
      } catch (const storage::StorageError& e) {
        throw EngineError("stream " + s->q->id + ": " + e.what());
      }
    }
    if (m.commands.running()) m.commands.reap();
    slots += m.block.slots;
    if (listening()) {
      wrote.clear();
      for (auto* s : m.computed)
        if (s->wrote) wrote.push_back(&s->q->id);
      for (auto* s : m.declared)
        if (m.block.due[s->tickIndex][0]) wrote.push_back(&s->q->id);
      hooks.afterSlot(wrote);
    }
    if (!m.opt.noClock) {
      const auto done = std::chrono::steady_clock::now();
      for (int j = 0; j < m.block.slots; ++j)
        lateness.add(std::chrono::duration_cast<std::chrono::nanoseconds>(done - deadlineOf(m.block.t[size_t(j)])).count());
    }
    if (!more) break;
    if (m.opt.stopOnKey) {
      pollfd p{0, POLLIN, 0};
      if (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) break;
    }
  }
  if (m.opt.verbose) lateness.print(stdout);
  return slots;
}

}  // namespace engine
