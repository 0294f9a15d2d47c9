// The live plan: what clients see of the streams, and ad hoc streams admitted
// into (or removed from) a running plan.
#include <algorithm>

#include "engine/engine_impl.hpp"
#include "engine/memory.hpp"
#include "engine/operators/operators.hpp"
#include "ir/passes/passes.hpp"

namespace engine {

static StreamStatus statusOf(const Stream& s, const std::map<std::string, int>& caps) {
  StreamStatus st;
  const ir::Query& q = *s.q;
  st.id = q.id;
  st.interval = q.interval;
  st.declared = s.declared;
  st.generated = q.isGenerated();
  st.records = s.declared || !s.files.store ? s.hist.count : int64_t(s.files.store->count());
  st.bytes = s.declared ? -1 : st.records * s.out.recordSize;
  auto it = caps.find(q.id);
  st.capacity = it == caps.end() ? 1 : it->second;
  st.location = q.filename;
  for (auto& f : q.schema) st.fields.push_back({f.name, ir::typeName(f.type)});
  st.programTokens = int(q.program.size());
  if (!s.declared && !q.isSubstrat) st.statement = q.text;
  st.rounded = s.rounded;
  return st;
}

std::vector<StreamStatus> Engine::status() const {
  std::vector<StreamStatus> out;
  for (auto& s : impl_->streams)
    if (!s->removed) out.push_back(statusOf(*s, impl_->plan.maxCapacity));
  return out;
}

std::optional<StreamStatus> Engine::status(const std::string& id) const {
  for (auto& s : impl_->streams)
    if (s->q->id == id && !s->removed) return statusOf(*s, impl_->plan.maxCapacity);
  return std::nullopt;
}

bool Engine::newest(const std::string& id, const uint8_t*& data, const uint8_t*& nulls,
                    const ir::Layout*& layout) const {
  for (auto& s : impl_->streams) {
    if (s->q->id != id || s->removed) continue;
    if (s->hist.count == 0) return false;
    layout = &s->out;
    if (s->fusedInto) {  // not materialised: made now from its producer
      if (!ops::fusedNewest(*s, impl_->streams)) return false;
      data = s->outRec.data();
      nulls = s->outNull.data();
      return true;
    }
    return s->hist.get(s->hist.newest(), data, nulls);
  }
  return false;
}

ir::Plan Engine::livePlan() const {
  const Impl& m = *impl_;
  ir::Plan p;
  p.options = m.plan.options;
  p.restrictedSharing = true;
  for (auto& q : m.plan.queries)
    if (q.isDirective()) p.queries.push_back(q);
  for (auto& s : m.streams) {
    if (s->removed) continue;
    p.queries.push_back(*s->q);
    p.frozenIds.insert(s->q->id);
  }
  return p;
}

// The first stream of `cand` that runs already but would come out of the
// compile changed (empty when none); the others go to `fresh`.
std::string Engine::Impl::changedStream(const ir::Plan& cand, std::vector<const ir::Query*>& fresh) const {
  std::map<std::string, const ir::Query*> live;
  for (auto& s : streams)
    if (!s->removed) live[s->q->id] = s->q;
  for (auto& q : cand.queries) {
    if (q.isDirective()) continue;
    auto it = live.find(q.id);
    if (it == live.end()) {
      fresh.push_back(&q);
      continue;
    }
    const ir::Query& old = *it->second;
    bool same = old.program == q.program && old.interval == q.interval && old.schema.size() == q.schema.size();
    for (size_t i = 0; same && i < q.schema.size(); ++i)
      same = old.schema[i].program == q.schema[i].program && old.schema[i].type == q.schema[i].type;
    if (!same) return q.id;
  }
  return {};
}

// A finer tick unit for new intervals: every tick and the clock are scaled.
void Engine::Impl::refineTicks(const std::vector<const ir::Query*>& fresh) {
  int64_t den = ticksPerSecond;
  for (auto* q : fresh) den = lcm64(den, q->interval.den);
  if (den == ticksPerSecond) return;
  const int64_t f = den / ticksPerSecond;
  for (auto& t : ticks) t *= f;
  for (auto& s : streams) {
    s->tick *= f;
    s->joinAt *= f;
  }
  now *= f;
  ticksPerSecond = den;
}

// One new stream of a compiled candidate, set up to join at the next grid
// point after this slot: its first record is the one whose nominal time is
// that point. Throws (with the stream not added) when it cannot be set up.
Stream& Engine::Impl::instantiate(const ir::Query& cq, const ir::Plan& cand) {
  auto s = std::make_unique<Stream>();
  s->ownQuery = std::make_unique<ir::Query>(cq);
  const ir::Query& q = *s->ownQuery;
  s->q = &q;
  s->serial = nextSerial++;
  s->index = int(streams.size());
  s->out = ir::Layout::of(q.schema);
  s->tick = q.interval.num * (ticksPerSecond / q.interval.den);
  auto ti = std::find(ticks.begin(), ticks.end(), s->tick);
  if (ti == ticks.end()) {
    ticks.push_back(s->tick);
    counters.push_back(now / s->tick + 1);  // joins at the next grid point after this slot
    tickDue.push_back(0);
    ti = ticks.end() - 1;
  }
  s->tickIndex = size_t(ti - ticks.begin());
  plan.maxCapacity[q.id] = cand.maxCapacity.count(q.id) ? cand.maxCapacity.at(q.id) : 1;
  Stream& ref = *s;
  streams.push_back(std::move(s));
  blockRecordBytes += ref.out.recordSize + int64_t(ref.out.elems.size());
  blockSlots = int(std::max<int64_t>(1, std::min<int64_t>(blockSlots, kBlockBytesAll / blockRecordBytes)));
  for (auto& d : q.dependencies())  // a new reader of a fused window: it is materialised again
    for (auto& o : streams)
      if (o->q->id == d && o->fusedInto) ops::unfuse(*o, streams);
  try {
    setupStream(ref, cand);
  } catch (...) {
    dropNewest();
    throw;
  }
  ref.joinAt = now + 1;
  ref.adhoc = true;
  ref.unit = "adhoc" + std::to_string(adhocUnits + 1);
  ref.due = now / ref.tick;
  ref.firstIndex = std::max<int64_t>(q.origin, ref.due - q.tail);
  ref.hist.base = ref.firstIndex;
  return ref;
}

// Takes back the streams one admit() set up before a later one failed: they
// are the newest entries of the plan, read by nothing else; their intervals
// added to the clock go too. Their files stay on disk, as removeStream's do.
void Engine::Impl::withdraw(size_t count, size_t ticksBefore) {
  for (size_t i = 0; i < count; ++i) dropNewest();  // instantiate() appended them last
  ticks.resize(ticksBefore);
  counters.resize(ticksBefore);
  tickDue.resize(ticksBefore);
}

// Undoes instantiate() for the plan's newest stream (nothing reads it).
void Engine::Impl::dropNewest() {
  Stream& s = *streams.back();
  closeArtifacts(s, -1);
  plan.maxCapacity.erase(s.q->id);
  computed.erase(std::remove(computed.begin(), computed.end(), &s), computed.end());
  blockRecordBytes -= s.out.recordSize + int64_t(s.out.elems.size());
  streams.pop_back();
}

Admission Engine::admit(const ir::Plan& cand) {
  Impl& m = *impl_;
  std::vector<const ir::Query*> fresh;
  if (std::string id = m.changedStream(cand, fresh); !id.empty()) return {Admission::Result::CHANGES_RUNNING, id};
  m.refineTicks(fresh);
  const size_t ticksBefore = m.ticks.size();
  std::vector<Stream*> added;
  for (auto* q : fresh) {
    try {
      added.push_back(&m.instantiate(*q, cand));
    } catch (const std::exception& e) {
      m.withdraw(added.size(), ticksBefore);  // all of the statement's streams, or none
      return {Admission::Result::SET_UP_FAILED, e.what()};
    }
  }
  // Native code comes later, from the JIT worker; until then the VM runs them.
  if (!m.opt.interpret && !added.empty()) m.compileNative(added, "adhoc" + std::to_string(++m.adhocUnits), true);
  if (m.graph) {  // the flow graph gets the new nodes
    m.dropGraph();
    m.buildGraph();
  }
  return {Admission::Result::ADMITTED, {}};
}

std::string Engine::removeStream(const std::string& id) {
  Impl& m = *impl_;
  Stream* target = nullptr;
  for (auto& s : m.streams)
    if (s->q->id == id && !s->removed) target = s.get();
  if (!target) return "unknown stream: " + id;
  if (!target->adhoc)
    return "stream " + id + " is part of the plan the engine started with; only ad hoc streams can be removed";
  auto readers = [&](const Stream& s) {
    int n = 0;
    for (auto& o : m.streams)
      if (!o->removed && o.get() != &s)
        for (int src : o->srcs)
          if (src == s.index) ++n;
    return n;
  };
  if (readers(*target)) return "stream " + id + " is read by other streams";
  auto drop = [&](Stream& s) {
    s.removed = true;
    m.plan.maxCapacity.erase(s.q->id);
    m.computed.erase(std::remove(m.computed.begin(), m.computed.end(), &s), m.computed.end());
    m.closeArtifacts(s, -1);
  };
  drop(*target);
  // Ad hoc substrates nobody reads any more go too.
  for (bool again = true; again;) {
    again = false;
    for (auto& s : m.streams)
      if (!s->removed && s->adhoc && s->q->isSubstrat && readers(*s) == 0) {
        drop(*s);
        again = true;
      }
  }
#if RDB_WITH_JIT
  m.releaseUnusedUnits();
#endif
  // Removed streams go for good (nothing reads them): renumber the rest.
  std::vector<int> renumber(m.streams.size(), -1);
  std::vector<std::unique_ptr<Stream>> kept;
  for (auto& s : m.streams)
    if (!s->removed) {
      renumber[size_t(s->index)] = int(kept.size());
      kept.push_back(std::move(s));
    }
  for (auto& s : kept) {
    s->index = renumber[size_t(s->index)];
    for (int& src : s->srcs) src = renumber[size_t(src)];
  }
  m.streams = std::move(kept);
  returnFreeMemory();  // the removed streams' histories and buffers go back to the system
  if (m.graph) {
    m.dropGraph();
    m.buildGraph();
  }
  return "OK";
}

}  // namespace engine
