// Finding chains: runs of computed streams compiled as one function
// (jit/chain.cpp). A link p -> r joins a chain when r is p's only reader, both
// have the same interval, r's tail is not smaller (a larger one: r reads p's
// records some records back, from p's ring), neither has rules or an ad hoc
// origin, and each is a step the chain knows (jit::ChainStep::Kind).
// Members stay materialised (a fused window: its count and NULL index): each
// record is still written to its ring, its NULL index and its store, so
// readers from outside (the tail's readers, ad hoc imports, which run later
// in plan order) see what the members' own steps would have written. Except
// a VOLATILE member (no store, no PUBLISH) whose reader, the next member,
// reads only its newest record (a map or a fold at the same tail): its record
// stays in registers, its ring gets the run's last one and every record's
// NULL flags (its index). An import that reads it dissolves the chain and
// waits for the records it reads (live_plan.cpp).
#include <algorithm>

#include "engine/operators/chain.hpp"
#include "engine/operators/driver.hpp"
#include "engine/operators/operators.hpp"

namespace engine::ops {

namespace {

using Kind = ChainKind;
using Readers = std::vector<std::vector<Stream*>>;

bool isFold(ir::Op op) {
  return op == ir::Op::STREAM_SUM || op == ir::Op::STREAM_AVG || op == ir::Op::STREAM_MIN || op == ir::Op::STREAM_MAX;
}

// Whether the elements are INTEGER, 4 bytes each, end to end.
bool integerRecord(const ir::Layout& l) {
  if (l.elems.empty()) return false;
  for (size_t e = 0; e < l.elems.size(); ++e)
    if (l.elems[e].type != ir::Type::INTEGER || l.elems[e].offset != int(4 * e)) return false;
  return true;
}

// A@(1, w), w > 0, that copies A's one 4-byte element a record.
bool slidingWindow(const Stream& s, const Streams& streams) {
  if (!s.identity || s.q->program.size() < 2 || s.q->program.back().op != ir::Op::STREAM_AGSE) return false;
  auto [k, w] = std::get<std::pair<int32_t, int32_t>>(s.q->program.back().v);
  const ir::Layout& a = streams[size_t(s.srcs[0])]->out;
  return k == 1 && w > 0 && a.elems.size() == 1 && a.elems[0].size == 4 && int(s.out.elems.size()) == w &&
         s.out.recordSize == 4 * w;
}

// A fused window over INTEGER elements that its .sumc or .avg folds as it slides.
bool slidingFold(const Stream& w, const Streams& streams) {
  if (!w.fusedInto || !slidingWindow(w, streams)) return false;
  const Stream& r = *w.fusedInto;
  const ir::Op op = r.q->program.back().op;
  return (op == ir::Op::STREAM_SUM || op == ir::Op::STREAM_AVG) && r.in.elems.size() == 1 &&
         streams[size_t(w.srcs[0])]->out.elems[0].type == ir::Type::INTEGER;
}

bool chainable(const Stream& s, const Streams& streams) {
  if (s.declared || s.adhoc || s.removed || s.rules) return false;
  if (s.fusedInto) return slidingFold(s, streams);
  if (s.fusedWindow) return slidingFold(*s.fusedWindow, streams);
  if (s.identity) return slidingWindow(s, streams);
  if (s.q->program.size() == 1) return s.operandPointers;  // SELECT ... FROM A
  const ir::Op op = s.q->program.back().op;
  if (op == ir::Op::STREAM_ADD) return s.operandPointers;
  return isFold(op) && s.srcs.size() == 1 && s.in.elems.size() == 1 && integerRecord(streams[size_t(s.srcs[0])]->out);
}

// Readers of each stream (distinct streams, in plan order).
Readers readersOf(const std::vector<Stream*>& computed, size_t count) {
  Readers readers(count);
  for (auto* s : computed)
    for (int src : s->srcs) {
      auto& r = readers[size_t(src)];
      if (r.empty() || r.back() != s) r.push_back(s);
    }
  return readers;
}

// Whether n may read p as the chain's next member (p's readers aside).
bool linkable(const Stream& p, const Stream& n, const Streams& streams) {
  if (!chainable(p, streams) || !chainable(n, streams)) return false;
  if (n.tick != p.tick || n.q->tail < p.q->tail) return false;
  // A reader with a larger tail reads p's records from its ring, some
  // records back: a map or a fold can, a window needs p's newest.
  const Kind kn = kindOf(n);
  return n.q->tail == p.q->tail || ((kn == Kind::Map || kn == Kind::Fold) && kindOf(p) != Kind::SlideNulls);
}

// Chains of links from a stream to its only reader; a stream joins one chain
// (of two producers linked to it, the first in plan order).
std::vector<std::shared_ptr<Chain>> linkOnlyReaders(const std::vector<Stream*>& computed, const Readers& readers,
                                                    const Streams& streams) {
  auto link = [&](Stream* p) -> Stream* {
    const auto& r = readers[size_t(p->index)];
    return r.size() == 1 && linkable(*p, *r[0], streams) ? r[0] : nullptr;
  };
  std::vector<Stream*> linkedFrom(streams.size(), nullptr);
  for (auto* s : computed)
    if (Stream* n = link(s); n && !linkedFrom[size_t(n->index)]) linkedFrom[size_t(n->index)] = s;
  auto next = [&](Stream* p) -> Stream* {
    Stream* n = link(p);
    return n && linkedFrom[size_t(n->index)] == p ? n : nullptr;
  };
  std::vector<char> inner(streams.size(), 0);  // has a chain link into it
  for (auto* s : computed)
    if (Stream* n = next(s)) inner[size_t(n->index)] = 1;
  std::vector<std::shared_ptr<Chain>> chains;
  for (auto* s : computed) {
    if (inner[size_t(s->index)] || !next(s)) continue;
    auto c = std::make_shared<Chain>();
    for (Stream* m = s; m; m = next(m)) c->members.push_back(m);
    chains.push_back(std::move(c));
  }
  return chains;
}

// A stream read by several may head the chain of one reader when every
// other reader runs after that chain (each pipeline runs in plan order, a
// chain at its last member's turn): they read its ring as the chain wrote
// it. A reader that comes earlier in plan order but in a chain that ends
// later holds only while that chain runs as one: this chain runs as one
// only then (chainRuns). The detector's mlii heads mlii_win's chain; v1's
// chain reads it later.
void addSharedHeads(std::vector<std::shared_ptr<Chain>>& chains, const std::vector<Stream*>& computed,
                    const Readers& readers, const Streams& streams) {
  std::vector<size_t> order(streams.size(), 0), chainOf(streams.size(), SIZE_MAX);
  for (size_t k = 0; k < computed.size(); ++k) order[size_t(computed[k]->index)] = k;
  for (size_t c = 0; c < chains.size(); ++c)
    for (auto* m : chains[c]->members) chainOf[size_t(m->index)] = c;
  auto runsAt = [&](const Stream* x) {
    const size_t c = chainOf[size_t(x->index)];
    return order[size_t((c == SIZE_MAX ? x : chains[c]->members.back())->index)];
  };
  for (auto* p : computed) {
    const auto& r = readers[size_t(p->index)];
    if (chainOf[size_t(p->index)] != SIZE_MAX || r.size() < 2) continue;
    for (Stream* head : r) {
      const size_t c = chainOf[size_t(head->index)];
      if (c == SIZE_MAX || chains[c]->members[0] != head || !linkable(*p, *head, streams)) continue;
      const size_t end = runsAt(head);
      if (!std::all_of(r.begin(), r.end(), [&](const Stream* q) { return q == head || runsAt(q) > end; })) continue;
      for (Stream* q : r)
        if (q != head && order[size_t(q->index)] < end)
          chains[c]->laterChains.push_back(chains[chainOf[size_t(q->index)]]);
      chains[c]->members.insert(chains[c]->members.begin(), p);
      chainOf[size_t(p->index)] = c;
      break;
    }
  }
}

// Each member's shift and the records it reads from outside the previous
// member's newest: other streams', members' some records back, and the
// element leaving a sliding window.
void findExternals(Chain& c, const Streams& streams) {
  const Stream& head = *c.members[0];
  for (size_t m = 0; m < c.members.size(); ++m) {
    Stream& st = *c.members[m];
    c.shift.push_back(st.q->tail - head.q->tail);
    for (size_t k = 0; k < st.srcs.size(); ++k) {
      const bool fromPrevious = m > 0 && st.srcs[k] == c.members[m - 1]->index;
      if (!fromPrevious) c.externals.push_back({int(m), int(k), 0, false});
      else if (st.q->tail != c.members[m - 1]->q->tail) c.externals.push_back({int(m), int(k), 0, true});
    }
    if (kindOf(st) == Kind::SlideNulls)  // the element leaving the window
      c.externals.push_back({int(m), 0, windowLength(st), true});
  }
  for (Chain::External& x : c.externals) {  // a member's records this many back: the run may write them
    const Stream& p = *streams[size_t(c.members[size_t(x.member)]->srcs[size_t(x.operand)])];
    auto at = std::find(c.members.begin(), c.members.end(), &p);
    if (at == c.members.end()) continue;
    x.from = int(at - c.members.begin());
    x.settled = c.shift[size_t(x.member)] - c.shift[size_t(x.from)] + x.lag >= kRun;
  }
}

// A member's ring is written when it is read: by a reader outside (the
// head's others), by the last member's readers, by its store or sink, or by
// its next member some records back.
void chooseMaterialised(Chain& c, const Readers& readers) {
  for (size_t m = 0; m < c.members.size(); ++m) {
    const Stream& st = *c.members[m];
    bool materialised = m + 1 == c.members.size() || readers[size_t(st.index)].size() > 1 || st.files.store ||
                        st.sink || kindOf(st) == Kind::SlideNulls;
    if (!materialised) {  // its reader must read only its newest record
      const Kind next = kindOf(*c.members[m + 1]);
      materialised = (next != Kind::Map && next != Kind::Fold) || c.shift[m + 1] != c.shift[m];
    }
    c.materialised.push_back(materialised);
  }
}

// A window read by the next member alone, a map, at least kRun records
// back (settled: what a run reads was written before it), and by nothing
// else: a view (Chain::view). Its reader reads its elements in the ring of
// its producer, the member before it, whose ring then holds enough records
// to rebuild the window's own for the members' own steps.
void chooseViews(Chain& c, const Readers& readers, const Streams& streams, int blockSlots) {
  const size_t n = c.members.size();
  c.view.assign(n, 0);
  for (size_t m = 1; m + 1 < n; ++m) {
    Stream& w = *c.members[m];
    Stream& a = *c.members[m - 1];
    if (kindOf(w) != Kind::Window || streams[size_t(w.srcs[0])].get() != &a || a.out.recordSize != 4 ||
        readers[size_t(w.index)].size() != 1 || w.files.store || w.sink || kindOf(*c.members[m + 1]) != Kind::Map)
      continue;
    bool settled = true;
    for (const Chain::External& x : c.externals)
      if (x.from == int(m)) settled = settled && x.member == int(m + 1) && x.settled && x.lag == 0;
    if (!settled || c.shift[m + 1] == c.shift[m]) continue;  // read at once: kept in registers already
    c.view[m] = 1;
    c.materialised[m] = 0;
    for (Chain::External& x : c.externals)
      if (x.from == int(m)) x.span = windowLength(w), x.from = int(m - 1);
    const int64_t need = w.hist.window + windowLength(w) - 1;
    if (a.hist.window < need) a.hist.grow(need, blockSlots);
  }
}

// Whose visible counts a stream outside the chain reads: the last member's
// readers, a member's readers besides the next member (a head's others), a
// fused window's or a view's index (its producer's counts). An import that reads a member
// adds it (live_plan.cpp).
void chooseVisRead(Chain& c, const Readers& readers, const Streams& streams) {
  const size_t n = c.members.size();
  c.visRead.assign(n, 0);
  for (size_t m = 0; m < n; ++m)
    for (const Stream* r : readers[size_t(c.members[m]->index)]) c.visRead[m] |= m + 1 == n || r != c.members[m + 1];
  c.visRead[n - 1] = 1;
  for (size_t m = 0; m < n; ++m)
    if (kindOf(*c.members[m]) == Kind::SlideNulls || c.view[m]) {
      const Stream* producer = streams[size_t(c.members[m]->srcs[0])].get();
      for (size_t p = 0; p < n; ++p) c.visRead[p] |= c.members[p] == producer;
    }
}

}  // namespace

int32_t windowLength(const Stream& s) { return std::get<std::pair<int32_t, int32_t>>(s.q->program.back().v).second; }

ChainKind kindOf(const Stream& s) {
  if (s.fusedInto) return Kind::SlideNulls;
  if (s.fusedWindow) return Kind::Slide;
  if (s.identity) return Kind::Window;
  if (s.q->program.size() > 1 && isFold(s.q->program.back().op)) return Kind::Fold;
  return Kind::Map;
}

std::vector<std::shared_ptr<Chain>> findChains(const std::vector<Stream*>& computed, const Streams& streams,
                                               int blockSlots) {
  const Readers readers = readersOf(computed, streams.size());
  auto chains = linkOnlyReaders(computed, readers, streams);
  addSharedHeads(chains, computed, readers, streams);
  for (auto& c : chains) {
    findExternals(*c, streams);
    chooseMaterialised(*c, readers);
    chooseViews(*c, readers, streams, blockSlots);
    chooseVisRead(*c, readers, streams);
    for (auto* m : c->members) m->chain = c, c->kinds.push_back(kindOf(*m));
  }
  return chains;
}

std::vector<jit::ChainStep> chainSteps(const Chain& c, const Streams& streams) {
  std::vector<jit::ChainStep> steps;
  auto external = [&](size_t m, int k, int64_t lag) {
    for (size_t e = 0; e < c.externals.size(); ++e)
      if (c.externals[e].member == int(m) && c.externals[e].operand == k && c.externals[e].lag == lag) return int(e);
    return -1;  // the previous member's record of this run
  };
  for (size_t m = 0; m < c.members.size(); ++m) {
    const Stream& s = *c.members[m];
    jit::ChainStep st;
    st.kind = kindOf(s);
    st.program = s.program.bytecode;
    st.in = s.in;
    st.out = s.out;
    if (st.kind == Kind::Slide) {  // reads what its window reads, one member further back
      st.from = steps.back().from;
      for (int& f : st.from) f -= f < 0 ? 1 : 0;
    } else {
      for (size_t k = 0; k < s.srcs.size(); ++k) st.from.push_back(external(m, int(k), 0));
      if (st.kind == Kind::SlideNulls) st.from.push_back(external(m, 0, windowLength(s)));
    }
    if (st.kind == Kind::Fold || st.kind == Kind::Slide) st.fold = s.q->program.back().op;
    if (st.kind == Kind::Fold) st.foldElems = int(streams[size_t(s.srcs[0])]->out.elems.size());
    if (st.kind == Kind::Map) {
      st.bases = s.slotBase;
      st.reversed.assign(s.srcs.size(), 0);
      for (size_t k = 0; k < s.srcs.size(); ++k)
        if (const int e = external(m, int(k), 0); e >= 0) st.reversed[k] = c.externals[size_t(e)].span;
    }
    st.materialised = c.materialised[m];
    st.view = c.view[m];
    steps.push_back(std::move(st));
  }
  return steps;
}

bool chainRuns(const Chain& c) {
  if (!c.native) return false;
  for (const auto& later : c.laterChains)  // they end later: no cycle
    if (!chainRuns(*later)) return false;
  return true;
}

void dissolve(Chain& c) {
  c.native = nullptr;
  if (c.members.empty()) return;  // dissolved before
  rebuildViews(c);
  auto keep = c.members.front()->chain;  // alive until every member let go
  for (auto* m : c.members) m->chain.reset();
  c.members.clear();  // a new plan may free them; the plan's list of chains and later heads keep this one
}

}  // namespace engine::ops
