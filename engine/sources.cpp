// Declared streams: opening each source, and the reads of a block (every
// due source's records of the block, before any computed stream runs).
#include <algorithm>

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
    s.source = storage::openSource(format, q.filename, s.out, so);
  } catch (const storage::SourceError& e) {
    throw EngineError("stream " + q.id + ": " + e.what());
  }
  declared.push_back(&s);
  updateLiveSource();
}

// Pass 2 of every slot of the block, done first: each due source reads its
// next record; what a stream computing in slot j sees is the count before
// that slot's read. A source that runs out ends the block after that slot.
bool Engine::Impl::readSources() {
  int last = block.slots - 1;  // the slot whose read exhausted a source (--until-eof)
  bool exhausted = false;
  std::vector<char> joined;  // a source imported ad hoc reads from its first due slot on
  for (auto* s : declared) {
    const std::vector<char>* dueOf = &block.due[s->tickIndex];
    if (s->joinAt > block.t[0]) {
      joined = *dueOf;
      for (int x = 0; x < block.slots; ++x)
        if (block.t[size_t(x)] < s->joinAt) joined[size_t(x)] = 0;
      dueOf = &joined;
    }
    const std::vector<char>& due = *dueOf;
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

}  // namespace engine
