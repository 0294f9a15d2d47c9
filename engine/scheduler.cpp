// The slot clock: grid points of the plan's intervals, blocks of slots, the
// sources' reads of a block and the run loop.
#include <poll.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstring>
#include <numeric>
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
  ++block.serial;
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
  const GridPattern& g = gridPattern();
  if (g.period == 0) {
    for (int j = 0; j < n; ++j) {
      const int64_t t = gridPoint(counters);
      for (size_t i = 0; i < ticks.size(); ++i) block.due[i][size_t(j)] = ticks[i] * counters[i] == t;
      passGridPoint(counters, t);
      block.t[size_t(j)] = t;
    }
    now = block.t[size_t(n - 1)];
    return;
  }
  // Copied from the period's pattern, from the point the counters stand at.
  const int64_t t0 = gridPoint(counters);
  int64_t base = (t0 - 1) / g.period * g.period;
  size_t p = size_t(std::lower_bound(g.offsets.begin(), g.offsets.end(), t0 - base) - g.offsets.begin());
  for (int j = 0; j < n;) {
    const int len = int(std::min<size_t>(size_t(n - j), g.offsets.size() - p));
    for (size_t i = 0; i < ticks.size(); ++i) memcpy(&block.due[i][size_t(j)], &g.due[i][p], size_t(len));
    for (int x = 0; x < len; ++x) block.t[size_t(j + x)] = base + g.offsets[p + size_t(x)];
    j += len;
    p += size_t(len);
    if (p == g.offsets.size()) p = 0, base += g.period;
  }
  now = block.t[size_t(n - 1)];
  for (size_t i = 0; i < ticks.size(); ++i) {
    // An interval an import added counts from its next point after the slot
    // it came in: not due before that, as the counters would have it.
    const int64_t first = ticks[i] * counters[i];
    for (int j = 0; j < n && block.t[size_t(j)] < first; ++j) block.due[i][size_t(j)] = 0;
    counters[i] = std::max(counters[i], now / ticks[i] + 1);  // past `now`, as passGridPoint leaves them
  }
}

const Engine::Impl::GridPattern& Engine::Impl::gridPattern() {
  constexpr int64_t kMostPoints = 1 << 16;
  if (grid.ticks == ticks) return grid;
  grid = GridPattern{ticks, 0, {}, {}};
  int64_t period = 1, finest = INT64_MAX;
  for (int64_t t : ticks) {
    const int64_t g = std::gcd(period, t);
    if (__int128(period / g) * t > (__int128(1) << 62)) return grid;
    period = period / g * t;
    finest = std::min(finest, t);
  }
  if (period / finest > kMostPoints) return grid;
  std::vector<int64_t> c(ticks.size(), 1);
  for (int64_t t = gridPoint(c); t <= period; t = gridPoint(c)) {
    grid.offsets.push_back(t);
    passGridPoint(c, t);
  }
  // A short period repeated to a block's length or more: a block is then a
  // copy or two an interval, not one for each few points.
  const size_t points = grid.offsets.size();
  const int64_t repeats = int64_t((size_t(kParallelBlockSlots) + points - 1) / points);
  if (repeats > 1 && __int128(period) * repeats < (__int128(1) << 62)) {
    for (int64_t r = 1; r < repeats; ++r)
      for (size_t p = 0; p < points; ++p) grid.offsets.push_back(grid.offsets[p] + r * period);
    period *= repeats;
  }
  // Each interval has one flag a point: at most 4 MiB of them.
  if (grid.offsets.size() * ticks.size() > (size_t(1) << 22)) {
    grid.offsets.clear();
    return grid;
  }
  grid.due.assign(ticks.size(), std::vector<char>(grid.offsets.size()));
  for (size_t i = 0; i < ticks.size(); ++i)
    for (size_t p = 0; p < grid.offsets.size(); ++p) grid.due[i][p] = grid.offsets[p] % ticks[i] == 0;
  grid.period = period;
  return grid;
}

namespace {

using Clock = std::chrono::steady_clock;

// One call of Engine::run: the clock's anchor, the slots run, what clients hear.
struct Run {
  Run(Engine::Impl& impl, const std::atomic<bool>& st, const SlotHooks& h) : m(impl), stop(st), hooks(h) {}
  Engine::Impl& m;
  const std::atomic<bool>& stop;
  const SlotHooks& hooks;
  Clock::time_point anchor = Clock::now();  // tick 0 (a resumed clocked run moves it back: anchorClock)
  const Clock::time_point started = Clock::now();
  int64_t slots = 0, nextIdle = 0;
  Clock::time_point idleAt{};  // offline, clients are served every 4096 slots, at most once a millisecond
  std::vector<const std::string*> wrote;
  LatencyHistogram lateness;  // clocked runs: deadline to the slot's last record

  bool stopped() const { return stop.load(std::memory_order_relaxed); }
  bool listening() const { return hooks.afterSlot && (!hooks.listening || hooks.listening()); }
  Clock::time_point deadlineOf(int64_t t) const {
    return anchor + std::chrono::nanoseconds(int64_t(__int128(t) * 1000000000 / m.ticksPerSecond));
  }

  // Native code: the optimised tier is asked for once the run has lasted a
  // moment, or sooner when the run has a known end that, at the pace so far,
  // is at least that far off (an offline run of many slots would otherwise
  // spend its first moment on quick code); code that became ready switches
  // in at this block boundary.
  bool tierUpDue() const {
    const auto ran = Clock::now() - started;
    if (ran >= kTierUpAfter) return true;
    const int64_t ranSlots = slots - m.slotsBefore;  // this run's (a resumed one started later)
    if (m.opt.limit <= 0 || ranSlots <= 0) return false;
    const int64_t left = m.opt.limit - 1 - slots;
    return ran * double(left) / double(ranSlots) >= kTierUpAfter;
  }
  void switchCode() {
#if RDB_WITH_JIT
    if (m.tierUp && m.costBlocks < 0 && tierUpDue()) {
      m.jitw->submit(std::move(*m.tierUp));
      m.tierUp.reset();
    }
    m.adoptCompiled();
#endif
  }

  // The most slots the next block may hold. Read after clients were served:
  // an import then may have made blocks shorter (a wide record), and the
  // streams it set up hold only that many slots of a block.
  int mostSlots() const {
    int n = m.blockSlots;
    if (m.opt.limit > 0) n = int(std::min<int64_t>(n, m.opt.limit - 1 - slots));
    if (listening() || m.liveSource) n = 1;
    return n;
  }

  // Slots in the next block: one while a client wants every slot's records
  // or a DEVICE is read as its records come; clocked, one slot, or every slot
  // already due when behind schedule. 0: stopped while waiting.
  int blockSize() {
    if (m.opt.noClock) {
      if (hooks.idle && slots >= nextIdle && Clock::now() >= idleAt) {
        hooks.idle(slots);  // an import here joins at the next grid point, the block's first
        nextIdle = slots + 4096;
        idleAt = Clock::now() + std::chrono::milliseconds(1);
      }
      return mostSlots();
    }
    m.now = m.gridPoint(m.counters);  // an import while waiting joins after this slot
    const auto deadline = deadlineOf(m.now);
    m.slotStart = deadline;
    if (hooks.waitUntil) hooks.waitUntil(deadline);
    else std::this_thread::sleep_until(deadline);
    if (stopped()) return 0;
    const int n = mostSlots();
    if (n == 1) return 1;
    const auto late = Clock::now();
    int due = 0;
    m.gridProbe.assign(m.counters.begin(), m.counters.end());
    for (; due < n; ++due) {  // how many grid points are due by now
      const int64_t t = m.gridPoint(m.gridProbe);
      if (deadlineOf(t) > late) break;
      m.passGridPoint(m.gridProbe, t);
    }
    return std::max(due, 1);
  }

  // Every computed stream over the whole block, producers before consumers
  // (the first blocks of a parallel run timed stream by stream, serially).
  void runStreams() {
    m.runStreams();
    for (auto* s : m.computed)
      if (!s->error.empty()) throw EngineError("stream " + s->q->id + ": " + s->error);
  }

  // Data first, then the index entries it covers; clocked runs push both out
  // every block, offline runs when the store's buffer fills. Offline, the
  // index of a stream without a store on disk (VOLATILE, memory) goes every
  // kOfflineIndexRecords records: one small write a stream a block was 93,757
  // writes for the two-pipeline bench. The close writes the rest; an index
  // behind its records is what a kill leaves anyway.
  void flush() {
    for (auto* s : m.computed) {
      if (!s->wrote) continue;
      const bool onDisk = s->files.store && !s->files.store->inMemory();
      if (m.opt.noClock && !onDisk && uint64_t(s->hist.count) < s->files.meta->onDisk() + kOfflineIndexRecords)
        continue;
      try {
        if (s->files.store && !m.opt.noClock) s->files.store->flush();
        s->files.meta->flush(durable(*s));
      } catch (const storage::StorageError& e) {
        throw EngineError("stream " + s->q->id + ": " + e.what());
      }
    }
  }

  // Clients hear which streams wrote; clocked runs record each slot's lateness.
  void report() {
    if (listening()) {
      wrote.clear();
      for (auto* s : m.computed)
        if (s->wrote) wrote.push_back(&s->q->id);
      for (auto* s : m.declared)
        if (m.block.due[s->tickIndex][0]) wrote.push_back(&s->q->id);
      hooks.afterSlot(wrote);
    }
    if (!m.opt.noClock) {
      const auto done = Clock::now();
      for (int j = 0; j < m.block.slots; ++j) {
        const int64_t ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(done - deadlineOf(m.block.t[size_t(j)])).count();
        lateness.add(ns);
        if (hooks.lateness) hooks.lateness(ns);
      }
    }
  }

  // Offline nothing waits for the slot clock: a sink over its buffer holds
  // the run until the broker takes the records (the sink bounds the wait),
  // and clients are served meanwhile.
  void waitForSinks() {
    for (;;) {
      bool held = false;
      for (auto* s : m.computed)
        if (s->sink && !s->sink->relieve(20)) held = true;
      if (!held || stopped()) return;
      if (hooks.idle) hooks.idle(slots);
    }
  }

  // Offline there is no clock to be late for: a DEVICE due at the next slot
  // is waited for until its record is complete (clients are served
  // meanwhile), never read as a made-up NULL record. False: stopped.
  bool awaitDevices() {
    if (!m.opt.noClock || !m.liveSource) return true;
    std::vector<pollfd> fds;
    for (;;) {
      const int64_t t = m.gridPoint(m.counters);
      bool pending = false;
      fds.clear();
      for (auto* s : m.declared) {
        const size_t i = size_t(s->tickIndex);
        if (s->held || s->joinAt > t || m.ticks[i] * m.counters[i] != t || !s->source->pending()) continue;
        pending = true;
        if (const int fd = s->source->waitFd(); fd >= 0) fds.push_back({fd, POLLIN, 0});
      }
      if (!pending) return true;
      if (stopped()) return false;
      if (hooks.idle) hooks.idle(slots);
      // A FIFO whose writer left reports a hang-up at once: then the wait is a
      // pause, so a missing writer is looked for ten times a second, not in a busy loop.
      const int n = poll(fds.data(), fds.size(), 100);
      bool data = false;
      for (auto& p : fds) data = data || (p.revents & POLLIN);
      if (n != 0 && !data) poll(nullptr, 0, 100);
    }
  }

  bool keyPressed() const {
    if (!m.opt.stopOnKey) return false;
    pollfd p{0, POLLIN, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
  }
};

}  // namespace

int64_t Engine::run(const std::atomic<bool>& stop, const SlotHooks& hooks) {
  Impl& m = *impl_;
  Run r(m, stop, hooks);
  m.stopFlag = &stop;
  r.slots = m.slotsBefore;  // -m counts from the plan's first slot, a resumed run's too
  if (m.inputEnded) return r.slots;
  if (!m.opt.noClock) m.anchorClock(r.anchor);
  // Clocked: wake at the deadline, not up to the default 50 us timer slack later.
  if (!m.opt.noClock) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (r.listening()) {  // the zero step: every source has its record 0
    for (auto* s : m.declared) r.wrote.push_back(&s->q->id);
    hooks.afterSlot(r.wrote);
  }
  while (!r.stopped()) {
    if (m.opt.limit > 0 && r.slots >= m.opt.limit - 1) break;
    r.switchCode();
    const int n = r.blockSize();
    if (n == 0 || !r.awaitDevices()) break;
    m.planBlock(n);
    const bool more = m.readSources();  // pass 2 of each slot of the block, first
    r.runStreams();
    r.flush();
    m.publishRecords();
    if (m.opt.countNulls) m.countNullRecords();
    if (m.commands.running()) m.commands.reap();
    r.slots += m.block.slots;
    if (!more) m.inputEnded = true;
    m.checkpointIfDue(r.slots, false);
    r.report();
    if (m.opt.noClock) r.waitForSinks();
    if (!more || r.keyPressed()) break;
  }
  m.checkpointIfDue(r.slots, true);
  m.stopSeen = r.stopped();
  m.stopFlag = nullptr;
  if (m.opt.verbose) r.lateness.print(stdout);
  return r.slots;
}

}  // namespace engine
