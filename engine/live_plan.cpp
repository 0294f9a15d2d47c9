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
  st.nullRecords = s.nullRecords;
  st.tail = s.declared ? 0 : q.tail;
  if (s.declared && s.source && (q.sourceKind == ir::SourceKind::DEVICE || q.sourceKind == ir::SourceKind::MQTT)) {
    st.device = true;
    st.reads = s.source->reads();
    st.misses = s.source->misses();
  }
  if (s.declared && s.source) st.outOfRange = s.source->outOfRange();
  st.downRecords = s.downRecords;
  if (connectors::SourceCounters c; s.source && connectors::mqttSourceCounters(*s.source, c)) {
    st.mqtt = true;
    st.received = c.received;
    st.malformed = c.malformed;
    st.dropped = c.dropped;
    st.connected = c.connected;
  }
  if (s.sink || s.sinkEnd) {
    const connectors::SinkCounters c = s.sink ? s.sink->counters() : *s.sinkEnd;
    st.publishes = true;
    st.published = c.published;
    st.publishDropped = c.dropped;
    st.publishQueued = c.queued;
  }
  return st;
}

double Engine::jitSeconds() const { return impl_->jitMs / 1000; }

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

bool Engine::newest(const std::string& id, const uint8_t*& data, const uint8_t*& nulls, const ir::Layout*& layout,
                    int64_t* index) const {
  for (auto& s : impl_->streams) {
    if (s->q->id != id || s->removed) continue;
    if (s->hist.count == 0) return false;
    layout = &s->out;
    if (index) *index = s->hist.newest();
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

namespace {
const Stream* live(const std::vector<std::unique_ptr<Stream>>& streams, const std::string& id) {
  for (auto& s : streams)
    if (s->q->id == id && !s->removed) return s.get();
  return nullptr;
}
}  // namespace

// What a replay can read: the ring's records, and before them what the data
// file holds of this run (a fused window has neither; a VOLATILE stream only its ring).
std::pair<int64_t, int64_t> Engine::held(const std::string& id) const {
  const Stream* s = live(impl_->streams, id);
  if (!s || s->fusedInto || s->hist.count == 0) return {0, -1};
  const History& h = s->hist;
  const int64_t newest = h.newest();
  int64_t oldest = h.base + std::max<int64_t>(0, h.count - h.window);
  if (!s->declared && s->files.store) oldest = h.base;  // the file holds every record of this run
  oldest = std::max(oldest, s->heldFrom);               // a chain member not materialised
  return {oldest, newest};
}

bool Engine::record(const std::string& id, int64_t n, std::vector<uint8_t>& data, std::vector<uint8_t>& nulls,
                    const ir::Layout*& layout) const {
  const Stream* s = live(impl_->streams, id);
  if (!s || s->fusedInto) return false;
  const History& h = s->hist;
  layout = &s->out;
  const size_t ne = s->out.elems.size();
  const uint8_t *d, *nl;
  if (n < s->heldFrom) return false;  // a chain member not materialised
  if (h.get(n, d, nl)) {
    data.assign(d, d + s->out.recordSize);
    nulls.assign(nl, nl + ne);
    return true;
  }
  if (s->declared || !s->files.store || n < h.base || n > h.newest()) return false;
  // This run's records are the file's last ones: record n is at count - (newest - n) - 1.
  storage::Store& st = *s->files.store;
  const int64_t pos = int64_t(st.count()) - (h.newest() - n) - 1;
  data.assign(size_t(s->out.recordSize), 0);
  if (pos < 0 || !st.read(uint64_t(pos), data.data())) return false;
  nulls.assign(ne, 0);
  if (s->files.meta) {
    const std::vector<uint8_t> bits = s->files.meta->bitmapAt(uint64_t(pos));
    for (size_t e = 0; e < ne; ++e) {
      const int f = s->out.elems[e].field;
      nulls[e] = size_t(f / 8) < bits.size() && (bits[size_t(f / 8)] >> (f % 8) & 1);
    }
  }
  return true;
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
Stream& Engine::Impl::instantiate(const ir::Query& cq, const ir::Plan& cand, int64_t delay) {
  auto s = std::make_unique<Stream>();
  s->ownQuery = std::make_unique<ir::Query>(cq);
  const ir::Query& q = *s->ownQuery;
  s->q = &q;
  s->serial = nextSerial++;
  s->index = int(streams.size());
  s->declared = q.isDeclaration();
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
  const int64_t at = now + delay;  // as if the statement had come then
  ref.joinAt = at + 1;
  ref.adhoc = true;
  ref.unit = "adhoc" + std::to_string(adhocUnits + 1);
  if (ref.declared) {
    // A source's record k is read in slot k·Δ and seen from slot (k+1)·Δ on;
    // one joining at grid index j reads its first record now (its zero
    // step), which is seen from slot j·Δ on, so that record is number j-1.
    const int64_t first = at / ref.tick + 1;
    ref.hist.base = first - 1;
    ref.firstIndex = first - 1;
    readRecord(ref);
    return ref;
  }
  ref.due = at / ref.tick;
  ref.firstIndex = std::max<int64_t>(q.origin, ref.due - q.tail);
  ref.hist.base = ref.firstIndex;
  return ref;
}

// A running stream the candidate reads further back than its ring holds gets
// a larger ring. The new streams then wait (the returned ticks) until each
// such stream has written the records they need on top of those it kept, so
// that none of their records reads a record the ring had already let go.
int64_t Engine::Impl::growRings(const ir::Plan& cand) {
  int64_t delay = 0;
  for (auto& s : streams) {
    // A fused window too: the import that reads it unfuses it, and the
    // refill then spans the grown ring.
    if (s->removed) continue;
    auto it = cand.maxCapacity.find(s->q->id);
    if (it == cand.maxCapacity.end()) continue;
    const int64_t want = ir::historyRing(it->second);
    if (want <= s->hist.window) continue;
    const int64_t kept = s->hist.grow(want, blockSlots);
    plan.maxCapacity[s->q->id] = it->second;
    if (it->second > kept) delay = std::max(delay, (it->second - kept) * s->tick);
  }
  return delay;
}

// A stream that was a chain member not materialised holds, of its ring, the
// records from heldFrom on. A new stream that reads it dissolves its chain
// (if still there: its members write their records again from the next
// block) and waits until it has written as many as the new streams read back.
// So does one that reads a member its chain would keep in registers, before
// the chain first ran (its code not there yet): it would from then on.
int64_t Engine::Impl::materialiseRead(const std::vector<const ir::Query*>& fresh, const ir::Plan& cand) {
  int64_t delay = 0;
  std::vector<std::shared_ptr<Chain>> dissolving;
  for (auto& s : streams) {
    if (s->removed) continue;
    bool read = false;
    for (auto* q : fresh)
      for (auto& d : q->dependencies()) read = read || d == s->q->id;
    bool inRegisters = false;  // a member its chain does not materialise
    if (Chain* c = s->chain.get()) {
      const size_t m = size_t(std::find(c->members.begin(), c->members.end(), s.get()) - c->members.begin());
      inRegisters = !c->materialised[m];
      if (read) c->visRead[m] = 1;                    // the chain writes its visible counts from the next block on
      if (read && c->view[m]) ops::rebuildViews(*c);  // its records are there again: no wait for them
    }
    if (s->heldFrom == INT64_MIN && !inRegisters) continue;
    if (!read) continue;
    if (s->heldFrom != INT64_MIN) {
      const int64_t back = cand.maxCapacity.count(s->q->id) ? cand.maxCapacity.at(s->q->id) : 1;
      const int64_t valid = s->hist.newest() - s->heldFrom + 1;
      if (back > valid) delay = std::max(delay, (back - valid) * s->tick);
    }
    if (s->chain) dissolving.push_back(s->chain);
  }
  for (auto& c : dissolving) ops::dissolve(*c);  // a chain listed twice: the second time changes nothing
  return delay;
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
  declared.erase(std::remove(declared.begin(), declared.end(), &s), declared.end());
  blockRecordBytes -= s.out.recordSize + int64_t(s.out.elems.size());
  streams.pop_back();
  updateLiveSource();
}

Admission Engine::admit(const ir::Plan& cand) {
  Impl& m = *impl_;
  m.givenUp = -1;  // an archive of this admission's streams takes a number of its own
  std::vector<const ir::Query*> fresh;
  if (std::string id = m.changedStream(cand, fresh); !id.empty()) return {Admission::Result::CHANGES_RUNNING, id};
  // From here the engine's state changes (its ticks, rings, chains) even if the
  // set-up then fails: the plan file no longer says what runs.
  m.stopCheckpoints();
  m.refineTicks(fresh);
  const int64_t delay = std::max(m.growRings(cand), m.materialiseRead(fresh, cand));
  const size_t ticksBefore = m.ticks.size();
  std::vector<Stream*> added;
  for (auto* q : fresh) {
    try {
      added.push_back(&m.instantiate(*q, cand, delay));
    } catch (const std::exception& e) {
      m.withdraw(added.size(), ticksBefore);  // all of the statement's streams, or none
      return {Admission::Result::SET_UP_FAILED, e.what()};
    }
  }
  m.releaseHolds(added);  // a held source read by a new consumer is read from the next slot on
  // Native code comes later, from the JIT worker; until then the VM runs them.
  if (!m.opt.interpret && !added.empty()) m.compileNative(added, "adhoc" + std::to_string(++m.adhocUnits), true);
  m.buildGraph();  // the new streams' pipelines are timed and placed too
  return {Admission::Result::ADMITTED, {}};
}

// Whether a DEVICE is read: blocks are then one slot long.
void Engine::Impl::updateLiveSource() {
  liveSource = false;
  for (auto* s : declared)
    liveSource = liveSource || s->q->sourceKind == ir::SourceKind::DEVICE || s->q->sourceKind == ir::SourceKind::MQTT;
}

std::string Engine::addRule(const ir::Plan& cand, const std::string& id, const std::string& name) {
  Impl& m = *impl_;
  Stream* target = nullptr;
  for (auto& s : m.streams) {
    if (s->removed) continue;
    if (s->q->id == id) target = s.get();
    bool taken = s->rules && s->rules->has(name);
    for (auto& r : s->q->rules) taken = taken || r.name == name;
    if (taken) return "Rejected: a rule named '" + name + "' runs already (on stream " + s->q->id + ")";
  }
  if (!target) return "unknown stream: " + id;
  if (target->declared) return "Cannot attach rule to declaration stream: " + id + " Rule: " + name;
  const ir::Rule* rule = nullptr;
  for (auto& q : cand.queries)
    if (q.id == id)
      for (auto& r : q.rules)
        if (r.name == name) rule = &r;
  if (!rule) return "internal: rule " + name + " missing from the compiled plan";
  // A dump that starts before its trigger reads the stream's ring, sized when the stream was set up.
  const int64_t back = rule->action == ir::RuleAction::DUMP && rule->dumpFrom < 0 ? -rule->dumpFrom : 0;
  if (back + 2 > target->hist.window)
    return "Rejected: rule '" + name + "' dumps from " + std::to_string(-back) + " but stream " + id + " keeps only " +
           std::to_string(target->hist.window - 2) + " records back in memory";
  if (target->fusedInto) ops::unfuse(*target, m.streams);  // its records are written again, one by one
  try {
    if (!target->rules)
      target->rules = std::make_unique<StreamRules>(*target->q, target->out, m.storageDir, &m.commands);
    target->rules->add(*rule);
  } catch (const std::exception& e) {
    return std::string("Compile chain failed:") + e.what();
  }
  // A chain runs on its members' own steps once one has a rule; a dump's
  // records from before a member not materialised are missing ones (zeros).
  if (target->chain) ops::dissolve(*target->chain);
  impl_->stopCheckpoints();
  return "OK";
}

std::string Engine::removeStream(const std::string& id) {
  Impl& m = *impl_;
  m.collectCheckpoint();  // its streams are all there until it is done
  Stream* target = nullptr;
  for (auto& s : m.streams)
    if (s->q->id == id && !s->removed) target = s.get();
  if (!target) {  // an imported rule goes by its name
    for (auto& s : m.streams)
      if (!s->removed && s->rules && s->rules->has(id))
        return s->rules->remove(id) ? "OK"
                                    : "rule " + id + " is part of the plan the engine started with; only ad hoc " +
                                          "rules can be removed";
    return "unknown stream: " + id;
  }
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
  m.retire(*target);
  // Ad hoc substrates nobody reads any more go too.
  for (bool again = true; again;) {
    again = false;
    for (auto& s : m.streams)
      if (!s->removed && s->adhoc && s->q->isSubstrat && readers(*s) == 0) {
        m.retire(*s);
        again = true;
      }
  }
#if RDB_WITH_JIT
  m.releaseUnusedUnits();
#endif
  m.compact();
  impl_->stopCheckpoints();
  return "OK";
}

// Stops a stream for good (compact() then drops it): its rules' dumps, its
// artifacts and its source are closed. Its files stay on disk.
void Engine::Impl::retire(Stream& s) {
  if (s.chain) ops::dissolve(*s.chain);  // its other members run their own steps on
  s.removed = true;
  plan.maxCapacity.erase(s.q->id);
  computed.erase(std::remove(computed.begin(), computed.end(), &s), computed.end());
  declared.erase(std::remove(declared.begin(), declared.end(), &s), declared.end());
  s.rules.reset();
  closeArtifacts(s, -1);
  s.source.reset();  // a device or file is closed now
}

// Removed streams go for good (nothing reads them): the rest are renumbered.
void Engine::Impl::compact() {
  std::vector<int> renumber(streams.size(), -1);
  std::vector<std::unique_ptr<Stream>> kept;
  for (auto& s : streams)
    if (!s->removed) {
      renumber[size_t(s->index)] = int(kept.size());
      kept.push_back(std::move(s));
    }
  for (auto& s : kept) {
    s->index = renumber[size_t(s->index)];
    for (int& src : s->srcs) src = renumber[size_t(src)];
  }
  streams = std::move(kept);
  updateLiveSource();
  returnFreeMemory();  // the removed streams' histories and buffers go back to the system
  buildGraph();
}

namespace {

bool sameRule(const ir::Rule& a, const ir::Rule& b) {
  return a.name == b.name && a.condition == b.condition && a.action == b.action && a.dumpFrom == b.dumpFrom &&
         a.dumpTo == b.dumpTo && a.dumpRetention == b.dumpRetention && a.command == b.command;
}

// Whether a running stream and one of a new plan compute (or read) the same
// records into the same files.
bool sameDefinition(const ir::Query& a, const ir::Query& b) {
  bool same = a.program == b.program && a.interval == b.interval && a.schema.size() == b.schema.size() &&
              a.filename == b.filename && a.sourceKind == b.sourceKind && a.isVolatile == b.isVolatile &&
              a.isOneShot == b.isOneShot && a.isHold == b.isHold && a.isSubstrat == b.isSubstrat &&
              a.origin == b.origin && a.rules.size() == b.rules.size() && a.isDisposable == b.isDisposable &&
              a.timeoutGiven == b.timeoutGiven && a.readTimeout == b.readTimeout && a.publish == b.publish;
  for (size_t i = 0; same && i < a.schema.size(); ++i)
    same = a.schema[i].program == b.schema[i].program && a.schema[i].type == b.schema[i].type &&
           a.schema[i].name == b.schema[i].name;
  for (size_t i = 0; same && i < a.rules.size(); ++i) same = sameRule(a.rules[i], b.rules[i]);
  return same;
}

std::string directivesOf(const ir::Plan& p) {
  std::string d;
  for (auto& q : p.queries)
    if (q.isDirective()) d += q.id + "=" + q.filename + ";" + q.interval.str() + "\n";
  return d;
}

}  // namespace

std::string Engine::replacePlan(const ir::Plan& next, std::vector<std::string>& ended) {
  Impl& m = *impl_;
  m.collectCheckpoint();  // its streams are all there until it is done
  if (directivesOf(next) != directivesOf(m.plan))
    return "Rejected: the new plan changes a directive (STORAGE, SUBSTRAT, ROTATION, DEFAULT VOLATILE); "
           "a running instance keeps its directives: restart it with the new plan";
  std::map<std::string, const ir::Query*> wanted;
  for (auto& q : next.queries)
    if (!q.isDirective()) wanted[q.id] = &q;
  // Kept: the same definition, over kept streams only (plan order puts
  // producers first).
  std::set<std::string> keep;
  for (auto& s : m.streams) {
    if (s->removed) continue;
    auto it = wanted.find(s->q->id);
    if (it == wanted.end() || !sameDefinition(*s->q, *it->second)) continue;
    bool inputsKept = true;
    for (auto& d : s->q->dependencies()) inputsKept = inputsKept && keep.count(d);
    if (inputsKept) keep.insert(s->q->id);  // a ring too short for the new readers grows (admit)
  }
  // The rest stop now, consumers first; a kept window folded into a stopped reducer is written again.
  for (auto& s : m.streams)
    if (!s->removed && keep.count(s->q->id) && s->fusedInto && !keep.count(s->fusedInto->q->id))
      ops::unfuse(*s, m.streams);
  for (auto it = m.streams.rbegin(); it != m.streams.rend(); ++it) {
    Stream& s = **it;
    if (s.removed) continue;
    if (keep.count(s.q->id)) {
      if (s.rules) {  // rules imported ad hoc are not part of the new plan
        std::vector<std::string> imported;
        for (auto& r : s.rules->rules())
          if (r.adhoc) imported.push_back(r.rule->name);
        for (auto& name : imported) s.rules->remove(name);
      }
      continue;
    }
    m.retire(s);
    ended.push_back(s.q->id);
  }
#if RDB_WITH_JIT
  m.releaseUnusedUnits();
#endif
  m.compact();
  m.stopCheckpoints();  // what runs is no longer one plan file
  // The new streams join at the next grid point, as ad hoc ones do, and then belong to the plan.
  const size_t before = m.streams.size();
  const Admission a = admit(next);
  if (a.result != Admission::Result::ADMITTED)
    return "Rejected at set-up: " + a.detail + " (the streams kept from the previous plan run on; the others " +
           "were stopped)";
  for (size_t i = before; i < m.streams.size(); ++i) m.streams[i]->adhoc = false;
  return "OK";
}

}  // namespace engine
