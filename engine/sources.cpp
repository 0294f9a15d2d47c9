// Declared streams: opening each source, and the reads of a block (every
// due source's records of the block, before any computed stream runs).
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "engine/engine_impl.hpp"
#include "storage/source.hpp"

namespace engine {

// A declared stream's history (its records as read) and its source.
void Engine::Impl::setupSource(Stream& s, int64_t cap) {
  const ir::Query& q = *s.q;
  s.hist.init(s.out.recordSize, int(s.out.elems.size()), cap, blockSlots, 0);
  const auto format = q.sourceKind == ir::SourceKind::TEXTSOURCE ? storage::SourceFormat::TEXT
                      : q.sourceKind == ir::SourceKind::DEVICE   ? storage::SourceFormat::DEVICE
                                                                 : storage::SourceFormat::BINARY;
  storage::SourceOptions so;
  so.oneShot = q.isOneShot || opt.untilEof;
  so.untilEof = opt.untilEof;
  so.noClock = opt.noClock;
  try {
    s.source = q.sourceKind == ir::SourceKind::MQTT ? connectors::openMqttSource(q, s.out, opt.mqtt)
                                                    : storage::openSource(format, q.filename, s.out, so);
  } catch (const storage::SourceError& e) {
    throw EngineError("stream " + q.id + ": " + e.what());
  }
  if (q.sourceKind == ir::SourceKind::DEVICE || q.sourceKind == ir::SourceKind::MQTT) {
    // --no-clock has no slot clock to count a deadline from: every TIMEOUT is 0
    // (the source itself still waits briefly for data, see storage/source.cpp).
    const double secs = opt.noClock      ? 0
                        : q.timeoutGiven ? double(q.readTimeout.num) / double(q.readTimeout.den)
                                         : opt.deviceTimeout;
    s.readTimeout = std::chrono::nanoseconds(int64_t(secs * 1e9));
  }
  s.held = q.isHold;
  declared.push_back(&s);
  updateLiveSource();
}

void Engine::Impl::readRecord(Stream& s) {
  if (s.held) {
    memset(s.hist.nextData(), 0, size_t(s.out.recordSize));
    memset(s.hist.nextNulls(), 0, s.out.elems.size());
  } else {
    s.source->next(s.hist.nextData(), s.hist.nextNulls());
  }
  s.hist.commit();
}

void Engine::Impl::releaseHolds(const std::vector<Stream*>& consumers) {
  for (auto* c : consumers) {
    if (c->declared) continue;
    // Windows (@) read the history directly, as in the reference: no release.
    bool window = false;
    for (auto& t : c->q->program) window = window || t.op == ir::Op::STREAM_AGSE;
    if (window) continue;
    for (int src : c->srcs) streams[size_t(src)]->held = false;
  }
}

void Engine::Impl::waitDevices() {
  using Clock = std::chrono::steady_clock;
  struct Waiting {
    Stream* s;
    Clock::time_point deadline;
  };
  std::vector<Waiting> waiting;
  // Every due live source takes in what has come first (an MQTT source may
  // learn here that records of its interval are now due by index), then
  // those still without a record wait for it.
  std::vector<Stream*> unready;
  for (auto* s : declared) {
    if (!block.due[s->tickIndex][0] || s->joinAt > block.t[0] || s->held) continue;
    if (!s->source->fill()) unready.push_back(s);
  }
  if (opt.noClock) return;
  for (auto* s : unready)
    if (s->readTimeout.count() > 0 && s->source->waitFd() >= 0) waiting.push_back({s, slotStart + s->readTimeout});
  std::vector<pollfd> fds;
  while (!waiting.empty()) {
    const auto now = Clock::now();
    std::erase_if(waiting, [&](const Waiting& w) { return w.deadline <= now; });
    if (waiting.empty() || (stopFlag && stopFlag->load(std::memory_order_relaxed))) break;
    auto until = waiting[0].deadline;
    for (auto& w : waiting) until = std::min(until, w.deadline);
    // Short steps, so a stop request is seen promptly.
    const auto step = std::min<Clock::duration>(until - now, std::chrono::milliseconds(50));
    fds.clear();
    for (auto& w : waiting) fds.push_back({w.s->source->waitFd(), POLLIN, 0});
    const int ms = int(std::chrono::ceil<std::chrono::milliseconds>(step).count());
    if (poll(fds.data(), fds.size(), ms) <= 0) continue;
    for (size_t i = fds.size(); i-- > 0;)
      if (fds[i].revents && waiting[i].s->source->fill()) waiting.erase(waiting.begin() + long(i));
  }
}

// Pass 2 of every slot of the block, done first: each due source reads its
// next record; what a stream computing in slot j sees is the count before
// that slot's read. A source that runs out ends the block after that slot.
// A file source that one parallel bin alone reads is read in that bin's task.
bool Engine::Impl::readSources() {
  const bool down = block.t[0] < downUntil;  // a resumed clocked run catching up (anchorClock, readSource)
  if (down)
    for (int j = 0; j < block.slots && block.t[size_t(j)] < downUntil; ++j) ++missedSlots;
  if (liveSource && !down) waitDevices();
  int last = block.slots - 1;  // the slot whose read exhausted a source (--until-eof)
  bool exhausted = false;
  binReadsNow.assign(streams.size(), 0);
  for (auto* s : declared) {
    const size_t i = size_t(s->index);
    const auto& due = block.due[s->tickIndex];
    if (graph && !down && i < readInBin.size() && readInBin[i] && s->joinAt <= block.t[0] &&
        (!opt.untilEof || s->source->surelyLeft() >= std::count(due.begin(), due.begin() + block.slots, 1)))
      binReadsNow[i] = 1;
    else readSource(*s, last, exhausted);
  }
  if (last + 1 < block.slots) {  // the rest of the block never happens
    for (size_t i = 0; i < ticks.size(); ++i)
      for (int j = last + 1; j < block.slots; ++j) counters[i] -= block.due[i][size_t(j)];
    block.slots = last + 1;
    now = block.t[size_t(last)];
  }
  return !(exhausted && opt.untilEof);
}

void Engine::Impl::readSource(Stream& s, int& last, bool& exhausted) {
  std::vector<char> joined;  // a source imported ad hoc reads from its first due slot on
  const std::vector<char>* dueOf = &block.due[s.tickIndex];
  if (s.joinAt > block.t[0]) {
    joined = *dueOf;
    for (int x = 0; x < block.slots; ++x)
      if (block.t[size_t(x)] < s.joinAt) joined[size_t(x)] = 0;
    dueOf = &joined;
  }
  const std::vector<char>& due = *dueOf;
  History& h = s.hist;
  if (s.held) {  // HOLD: no physical read
    for (int x = 0; x < block.slots; ++x) {
      s.vis[size_t(x)] = h.count;
      if (due[size_t(x)]) readRecord(s);
    }
    return;
  }
  // Due at every slot: each slot sees one record more than the one before.
  const bool everySlot = block.slots > 0 && !memchr(due.data(), 0, size_t(block.slots));
  if (everySlot) s.visStepAt = block.serial;
  int j = 0;
  // Slots due while the engine was down: a DEVICE's or MQTT's records of
  // then are gone, NULL records stand for them; a file is read on (it gives
  // the bytes an uninterrupted run read, record n stays slot n's).
  const bool gone = s.q->sourceKind == ir::SourceKind::DEVICE || s.q->sourceKind == ir::SourceKind::MQTT;
  for (; gone && j < block.slots && block.t[size_t(j)] < downUntil; ++j) {
    s.vis[size_t(j)] = h.count;
    if (!due[size_t(j)]) continue;
    memset(h.nextData(), 0, size_t(s.out.recordSize));
    memset(h.nextNulls(), 1, s.out.elems.size());
    h.commit();
    ++s.downRecords;
  }
  while (j < block.slots) {
    // The due slots from j on whose records lie contiguously in the ring.
    int run = 0, end = j;
    const int64_t room = h.contiguous();
    if (everySlot) {  // a loop that vectorises: locals, no load of `due`
      run = int(std::min<int64_t>(room, block.slots - j));
      end = j + run;
      int64_t* vis = s.vis.data() + j;
      const int64_t count = h.count;
      for (int x = 0; x < run; ++x) vis[x] = count + x;
    }
    while (end < block.slots && run < room) {  // due now and then: the slots up to the next due one
      const void* at = memchr(due.data() + end, 1, size_t(block.slots - end));
      const int next = at ? int(static_cast<const char*>(at) - due.data()) : block.slots;
      std::fill(s.vis.data() + end, s.vis.data() + std::min(next + 1, block.slots), h.count + run);
      end = std::min(next + 1, block.slots);
      run += at ? 1 : 0;
    }
    const int got = run ? s.source->nextMany(h.nextData(), h.nextNulls(), run) : 0;
    h.commit(got);
    if (got < run || (run && s.source->exhausted())) {
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
          s.source->next(h.nextData(), h.nextNulls());
          h.commit();
        }
      }
    }
    j = end;
  }
}

}  // namespace engine
