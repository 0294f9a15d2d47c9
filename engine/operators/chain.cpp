// Chains: runs of computed streams compiled as one function (jit/chain.cpp).
// A link p -> r joins a chain when r is p's only reader, both have the same
// interval, r's tail is not smaller (a larger one: r reads p's records some
// records back, from p's ring), neither has rules or an ad hoc origin, and
// each is a step the chain knows:
//   Map         SELECT or + reading whole operand records in place
//   Fold        a reducer over a record of INTEGER elements
//   Window      A@(1, w) copying A's one 4-byte element (its record before,
//               moved on by one)
//   SlideNulls  a fused window A@(1, w) over A's one INTEGER element (its
//   + Slide     NULL count) and its .sumc/.avg (the sliding sum)
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
#include <cstring>
#include <numeric>

#include "engine/operators/driver.hpp"
#include "engine/operators/map_op.hpp"
#include "engine/operators/operators.hpp"
#include "engine/operators/window.hpp"
#include "ir/values.hpp"

namespace engine::ops {

namespace {

using Kind = jit::ChainStep::Kind;

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

int32_t windowLength(const Stream& s) { return std::get<std::pair<int32_t, int32_t>>(s.q->program.back().v).second; }

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

Kind kindOf(const Stream& s) {
  if (s.fusedInto) return Kind::SlideNulls;
  if (s.fusedWindow) return Kind::Slide;
  if (s.identity) return Kind::Window;
  if (s.q->program.size() > 1 && isFold(s.q->program.back().op)) return Kind::Fold;
  return Kind::Map;
}

// A sliding fold beyond the exact range: the reducer's input record for the
// run's record i, folded newest first over its producer's ring as the
// reducer's step folds it (records of this run are in the ring, not yet
// counted).
void slideSlow(void* ctx, int32_t m, int64_t i, uint8_t* out) {
  const Chain& ch = *static_cast<const Chain*>(ctx);
  const Stream& r = *ch.members[size_t(m)];
  const Stream& w = *ch.members[size_t(m) - 1];
  const Stream& p = *(*ch.streams)[size_t(w.srcs[0])];
  const int64_t n = ch.runNs[size_t(i)] - ch.shift[size_t(m)], len = windowLength(w);
  std::vector<int32_t> v(size_t(len), 0);
  std::vector<uint8_t> nulls(size_t(len), 1);
  for (int64_t e = 0; e < len; ++e) {
    const int64_t at = n - e - p.hist.base;
    if (at < 0) continue;  // before the producer's first record: absent
    const int64_t pos = p.hist.pos(at);
    memcpy(&v[size_t(e)], p.hist.data.data() + pos * p.hist.rec, 4);
    nulls[size_t(e)] = p.hist.nulls[size_t(pos * p.hist.elems)] != 0;
  }
  foldIntegerRecord(int32_t(r.q->program.back().op), int32_t(r.in.elems[0].type),
                    reinterpret_cast<const uint8_t*>(v.data()), nulls.data(), len, out);
}

bool noneSet(const uint8_t* flags, int64_t n) {
  uint8_t any = 0;
  for (int64_t e = 0; e < n; ++e) any |= flags[e];
  return any == 0;
}

// Whether a run of k records (its external records and windows' records
// before it in place) holds no NULL the chain's code would read: every
// settled external's records (Chain::External) with their flags clear (an
// absent record's are set; the others' the code reads as they are), each window's
// record before the run without NULLs, each sliding window's NULL count 0 and
// its fold's present count the window's length. The code's clean loop takes
// these as constants. (A window's NULL count is 0 exactly when its fold's
// present count is its length; each is checked, as each is a constant.)
bool cleanRun(BlockCtx& c, const Chain& ch, int k) {
  const size_t E = ch.externals.size();
  for (size_t e = 0; e < E; ++e) {
    const Chain::External& x = ch.externals[e];
    if (!x.settled) continue;
    const int64_t elems = c.src(*ch.members[size_t(x.member)], size_t(x.operand)).hist.elems;
    const int64_t* run = ch.strided.data() + 4 * e;
    if (run[0] != 0) {  // in place: one record (stride 0) or k after each other
      const auto* flags = reinterpret_cast<const uint8_t*>(intptr_t(run[2]));
      if (!noneSet(flags, run[3] == 0 ? elems : run[3] * (k - 1) + elems)) return false;
      continue;
    }
    for (int i = 0; i < k; ++i)
      if (!noneSet(ch.extNull[size_t(i) * E + e], elems)) return false;
  }
  for (size_t m = 0; m < ch.members.size(); ++m) {
    const Stream& s = *ch.members[m];
    switch (kindOf(s)) {
      case Kind::Window:
        if (!noneSet(ch.last[2 * m + 1], int64_t(s.out.elems.size()))) return false;
        break;
      case Kind::SlideNulls:
        if (ch.state[4 * m] != 0) return false;
        break;
      case Kind::Slide:
        if (ch.state[4 * m + 2] != windowLength(*s.fusedWindow)) return false;
        break;
      default: break;
    }
  }
  return true;
}

}  // namespace

uint8_t visShape(const int64_t* vis, int slots) {
  uint64_t falls = 0, other = 0;  // a negative difference's sign bit; any difference but 1 (vectorised)
  for (int j = 1; j < slots; ++j) {
    const int64_t d = vis[j] - vis[j - 1];
    falls |= uint64_t(d);
    other |= uint64_t(d ^ 1);
  }
  return uint8_t((falls >> 63 ? 0 : kVisRising) | (other ? 0 : kVisStep));
}

bool heldThroughout(const int64_t* vis, const int* js, int k, int64_t at0, int64_t step, int64_t window,
                    uint8_t shape) {
  if (at0 < 0) return false;
  // Counts that never fall: one record is held throughout when it is at the
  // first slot and still in the window at the last. Counts that grow by one
  // a slot, read at consecutive slots: record i stays as far from the newest
  // as record 0 is.
  if (step == 0 && (shape & kVisRising)) return at0 < vis[js[0]] && at0 >= vis[js[k - 1]] - window;
  if (step == 1 && (shape & kVisStep) && js[k - 1] - js[0] == k - 1)
    return at0 < vis[js[0]] && at0 >= vis[js[0]] - window;
  bool held = true;
  for (int i = 0; i < k; ++i) {
    const int64_t at = at0 + i * step, v = vis[js[i]];
    held &= at < v && at >= v - window;
  }
  return held;
}

std::vector<std::shared_ptr<Chain>> findChains(const std::vector<Stream*>& computed, const Streams& streams) {
  // Readers of each stream (distinct streams).
  std::vector<std::vector<Stream*>> readers(streams.size());
  for (auto* s : computed)
    for (int src : s->srcs) {
      auto& r = readers[size_t(src)];
      if (r.empty() || r.back() != s) r.push_back(s);
    }
  // Whether r may read p as the chain's next member (p's readers aside).
  auto linkable = [&](Stream* p, Stream* n) {
    if (!chainable(*p, streams) || !chainable(*n, streams)) return false;
    if (n->tick != p->tick || n->q->tail < p->q->tail) return false;
    // A reader with a larger tail reads p's records from its ring, some
    // records back: a map or a fold can, a window needs p's newest.
    const Kind kn = kindOf(*n);
    return n->q->tail == p->q->tail || ((kn == Kind::Map || kn == Kind::Fold) && kindOf(*p) != Kind::SlideNulls);
  };
  auto link = [&](Stream* p) -> Stream* {
    const auto& r = readers[size_t(p->index)];
    return r.size() == 1 && linkable(p, r[0]) ? r[0] : nullptr;
  };
  // A stream joins one chain: of two producers linked to it, the first in plan order.
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
  // A stream read by several may head the chain of one reader when every
  // other reader runs after that chain (each pipeline runs in plan order, a
  // chain at its last member's turn): they read its ring as the chain wrote
  // it. A reader that comes earlier in plan order but in a chain that ends
  // later holds only while that chain runs as one: this chain runs as one
  // only then (chainRuns). The detector's mlii heads mlii_win's chain; v1's
  // chain reads it later.
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
      if (c == SIZE_MAX || chains[c]->members[0] != head || !linkable(p, head)) continue;
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
  for (auto& c : chains) {
    Stream* s = c->members[0];
    for (size_t m = 0; m < c->members.size(); ++m) {
      Stream& st = *c->members[m];
      c->shift.push_back(st.q->tail - s->q->tail);
      for (size_t k = 0; k < st.srcs.size(); ++k) {
        const bool fromPrevious = m > 0 && st.srcs[k] == c->members[m - 1]->index;
        if (!fromPrevious) c->externals.push_back({int(m), int(k), 0, false});
        else if (st.q->tail != c->members[m - 1]->q->tail) c->externals.push_back({int(m), int(k), 0, true});
      }
      if (kindOf(st) == Kind::SlideNulls)  // the element leaving the window
        c->externals.push_back({int(m), 0, windowLength(st), true});
      st.chain = c;
    }
    for (Chain::External& x : c->externals) {  // a member's records this many back: the run may write them
      const Stream& p = *streams[size_t(c->members[size_t(x.member)]->srcs[size_t(x.operand)])];
      auto at = std::find(c->members.begin(), c->members.end(), &p);
      if (at == c->members.end()) continue;
      x.from = int(at - c->members.begin());
      x.settled = c->shift[size_t(x.member)] - c->shift[size_t(x.from)] + x.lag >= kRun;
    }
    for (size_t m = 0; m < c->members.size(); ++m) {
      const Stream& st = *c->members[m];
      // Its ring is read: by a reader outside (the head's others), or by the last member's readers.
      bool materialised = m + 1 == c->members.size() || readers[size_t(st.index)].size() > 1 || st.files.store ||
                          st.sink || kindOf(st) == Kind::SlideNulls;
      if (!materialised) {  // its reader must read only its newest record
        const Kind next = kindOf(*c->members[m + 1]);
        materialised = (next != Kind::Map && next != Kind::Fold) || c->shift[m + 1] != c->shift[m];
      }
      c->materialised.push_back(materialised);
    }
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
    if (st.kind == Kind::Map) st.bases = s.slotBase;
    st.materialised = c.materialised[m];
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
  if (c.members.empty()) return;         // dissolved before
  auto keep = c.members.front()->chain;  // alive until every member let go
  for (auto* m : c.members) m->chain.reset();
  c.members.clear();  // a new plan may free them; the plan's list of chains and later heads keep this one
}

void chainStep(BlockCtx& c, Chain& ch) {
  const Block& b = c.block;
  Stream& head = *ch.members[0];
  const int64_t tail = head.q->tail, n0 = head.due - tail;
  const size_t M = ch.members.size(), E = ch.externals.size();
  bool native = ch.native != nullptr;
  for (size_t m = 0; m < M && native; ++m) {
    const Stream& s = *ch.members[m];
    const Kind kind = kindOf(s);
    // A window moves on from its record before the block's first.
    const int64_t origin = s.q->origin + (kind == Kind::Window ? 1 : 0);
    const int64_t first = n0 - ch.shift[m];  // its first record of the block
    native = !s.rules && s.error.empty() && s.due == head.due && first >= origin;
    if (kind == Kind::SlideNulls || kind == Kind::Slide) {
      // A sliding fold goes on from the positions its step left it at.
      const int64_t w = windowLength(kind == Kind::Slide ? *s.fusedWindow : s);
      native = native && s.running.valid && s.running.lo == first - w && s.running.hi == first - 1;
    }
  }
  if (!native) {
    for (auto* m : ch.members) m->step(c, *m);
    return;
  }
  const std::vector<char>& due = b.due[head.tickIndex];
  ch.streams = &c.streams;
  ch.ext.resize(size_t(kRun) * std::max<size_t>(E, 1));
  ch.extNull.resize(ch.ext.size());
  ch.strided.assign(4 * std::max<size_t>(E, 1), 0);
  ch.visShape.assign(E, 0);
  for (size_t e = 0; e < E; ++e)  // final: the producers outside the chain ran before it
    if (const Chain::External& x = ch.externals[e]; !x.raw)
      ch.visShape[e] = visShape(c.src(*ch.members[size_t(x.member)], size_t(x.operand)).vis.data(), b.slots);
  ch.outs.resize(M);
  ch.outNulls.resize(M);
  ch.rounded.assign(M, 0);
  ch.last.assign(2 * M, nullptr);
  ch.state.assign(4 * M, 0);
  ch.startCount.resize(M);
  ch.upTo.resize(size_t(b.slots));
  ch.blockNs.clear();
  ch.blockJs.clear();
  ch.windowNulls.resize(M);
  std::vector<uint64_t> durableBefore(M);
  for (size_t m = 0; m < M; ++m) {
    Stream& s = *ch.members[m];
    s.wrote = 0;
    ch.startCount[m] = s.hist.count;
    ch.windowNulls[m].clear();
    durableBefore[m] = s.files.store ? s.files.store->durable() : 0;
    const Stream::Running& r = s.running;
    if (kindOf(s) == Kind::SlideNulls) ch.state[4 * m] = r.nulls;
    if (kindOf(s) == Kind::Slide)
      ch.state[4 * m] = r.sum, ch.state[4 * m + 1] = r.sumAbs, ch.state[4 * m + 2] = r.present;
  }
  jit::ChainArgs args{ch.ext.data(),
                      ch.extNull.data(),
                      ch.outs.data(),
                      ch.outNulls.data(),
                      ch.rounded.data(),
                      &ir::val::ratRounded(),
                      &foldIntegerRecord,
                      ch.last.data(),
                      ch.state.data(),
                      &ch,
                      &slideSlow,
                      ch.strided.data(),
                      0};
  auto room = [&] {
    int64_t r = kRun;
    for (auto* m : ch.members) r = std::min(r, m->hist.contiguous());
    return int(r);
  };
  // Records from the member's record nFirst on that each external can give in
  // place (one stretch of its ring, a slower one's same record): a run of
  // consecutive records that stops there reads them without a pointer a record.
  auto inPlaceRoom = [&](int64_t nFirst) {
    int64_t r = kRun;
    for (const Chain::External& x : ch.externals) {
      const Stream& s = *ch.members[size_t(x.member)];
      const History& h = c.src(s, size_t(x.operand)).hist;
      const int64_t n = nFirst - ch.shift[size_t(x.member)];
      const ir::Rational ratio = x.raw ? ir::Rational{1, 1} : s.operandRatio[size_t(x.operand)];
      if (ratio.num == ratio.den) {
        if (const int64_t at = n - x.lag - h.base; at >= 0) r = std::min(r, h.cap - h.pos(at));
      } else if (ratio.num > 0 && ratio.num < ratio.den) {  // the next record it moves on to
        r = std::min(r, ceilMul(floorMul(n, ratio) + 1, ir::Rational{ratio.den, ratio.num}) - n);
      }
    }
    return int(std::max<int64_t>(r, 1));
  };
  int64_t ns[kRun];
  int js[kRun];
  int k = 0, written = 0, limit = room();
  bool failed = false;
  auto flush = [&] {
    if (k == 0 || failed) return;
    // The external records of each record, as the members' index maps read
    // them. Locals throughout: the stores through the pointer arrays could
    // otherwise alias every field the loops read.
    for (size_t e = 0; e < E; ++e) {
      const Chain::External& x = ch.externals[e];
      Stream& s = *ch.members[size_t(x.member)];
      const Stream& p = c.src(s, size_t(x.operand));
      const History& h = p.hist;
      const int64_t window = h.window, mask = h.mask, cap = h.cap, base = h.base, rec = h.rec, elems = h.elems;
      const uint8_t* data = h.data.data();
      const uint8_t* nulls = h.nulls.data();
      const uint8_t* zero = s.zeroRec.data();
      const uint8_t* none = s.nullFlags.data();
      const uint8_t** __restrict outD = ch.ext.data() + e;
      const uint8_t** __restrict outN = ch.extNull.data() + e;
      const int64_t lag = x.lag, shift = ch.shift[size_t(x.member)];
      int64_t* run = ch.strided.data() + 4 * e;
      // The run's records as one stretch of the ring (record i at first + i*step,
      // every one held): the generated code steps through it in place.
      auto inPlace = [&](int64_t first, int64_t step) {
        const int64_t pos = mask >= 0 ? (first & mask) : first % cap;
        if (pos + (k - 1) * step >= cap) return false;  // wraps
        run[0] = int64_t(reinterpret_cast<intptr_t>(data + pos * rec)), run[1] = step * rec;
        run[2] = int64_t(reinterpret_cast<intptr_t>(nulls + pos * elems)), run[3] = step * elems;
        return true;
      };
      run[0] = 0;
      if (x.raw) {
        // A member's record some records back, or one leaving a window
        // (record n - lag): written before it is read (earlier in the run or
        // before it), still in the ring (it holds the window and one block
        // more). A member's record is there for its reader as the reader's
        // own step would find it: within `window` of the records the member
        // had made by then (its count before the run, plus i + 1).
        const int64_t oldest = lag == 0 ? h.count + 1 - window : INT64_MIN;
        const int64_t at0 = ns[0] - shift - lag - base;  // ns[] are consecutive
        if (at0 >= 0 && at0 >= oldest && inPlace(at0, 1)) continue;
        for (int i = 0; i < k; ++i) {
          const int64_t at = ns[i] - shift - lag - base;
          const bool held = at >= 0 && at >= oldest + i;
          const int64_t pos = !held ? 0 : mask >= 0 ? (at & mask) : at % cap;
          outD[size_t(i) * E] = held ? data + pos * rec : zero;
          outN[size_t(i) * E] = held ? nulls + pos * elems : none;
        }
        continue;
      }
      const ir::Rational r = s.operandRatio[size_t(x.operand)];
      const int64_t* vis = p.vis.data();
      const bool unit = r.num == r.den;
      int64_t idx = floorMul(ns[0] - shift, r), until = INT64_MAX;
      {
        // One record for the whole run (a slower source) or one a record (same interval).
        const int64_t step = unit ? 1 : 0;
        if (unit || floorMul(ns[k - 1] - shift, r) == idx) {
          const int64_t at0 = idx - base;
          const bool held = heldThroughout(vis, js, k, at0, step, window, ch.visShape[e]);
          if (held && inPlace(at0, step)) continue;
        }
      }
      // Record n reads record floor(n·r) (n itself for r = 1), the ring lookups
      // inline; n grows through the run, so the floor moves on without a division.
      if (!unit && r.num > 0) until = ceilMul(idx + 1, ir::Rational{r.den, r.num});
      for (int i = 0; i < k; ++i) {
        const int64_t n = ns[i] - shift;
        if (unit) {
          idx = n;
        } else if (n >= until) {
          idx = floorMul(n, r);
          until = r.num > 0 ? ceilMul(idx + 1, ir::Rational{r.den, r.num}) : INT64_MAX;
        }
        const int64_t at = idx - base, v = vis[js[i]];
        const bool held = at >= 0 && at < v && at >= v - window;
        const int64_t pos = mask >= 0 ? (at & mask) : (held ? at % cap : 0);
        outD[size_t(i) * E] = held ? data + pos * rec : zero;
        outN[size_t(i) * E] = held ? nulls + pos * elems : none;
      }
    }
    for (size_t m = 0; m < M; ++m) {
      Stream& s = *ch.members[m];
      ch.outs[m] = s.hist.nextData();
      ch.outNulls[m] = s.hist.nextNulls();
      // A window moves on from its newest record, the one before the run's
      // first (the block's gate makes sure it exists, the ring holds one block more).
      if (kindOf(s) == Kind::Window) s.hist.get(ns[0] - ch.shift[m] - 1, ch.last[2 * m], ch.last[2 * m + 1]);
    }
    ch.runNs = ns;
    args.clean = cleanRun(c, ch, k);
    ch.native(&args, k);
    for (size_t m = 0; m < M; ++m) {
      Stream& s = *ch.members[m];
      s.hist.commit(k);
      s.wrote += k;
      if (kindOf(s) == Kind::SlideNulls) {  // its NULL index after the block, when its producer is visible
        const size_t ne = s.out.elems.size(), at = ch.windowNulls[m].size();
        ch.windowNulls[m].resize(at + size_t(k));
        uint8_t* to = ch.windowNulls[m].data() + at;
        const uint8_t* from = ch.outNulls[m];
        for (int i = 0; i < k; ++i) to[i] = from[size_t(i) * ne];
        continue;
      }
      try {
        emitRun(s, ns, k, ch.outs[m], ch.outNulls[m]);
      } catch (const std::exception& e) {
        s.error = e.what();
        failed = true;
      }
    }
    ch.blockNs.insert(ch.blockNs.end(), ns, ns + k);
    ch.blockJs.insert(ch.blockJs.end(), js, js + k);
    written += k;
    k = 0;
  };
  int64_t dueCount = 0;
  if (!memchr(due.data(), 0, size_t(b.slots))) {
    // Due at every slot of the block (the usual case): runs of consecutive slots.
    for (int j = 0; j < b.slots; j += k, flush(), limit = room()) {
      limit = std::min(limit, inPlaceRoom(n0 + dueCount));
      for (k = 0; k < limit && j + k < b.slots; ++k) ns[k] = n0 + dueCount++, js[k] = j + k;
    }
    std::iota(ch.upTo.begin(), ch.upTo.begin() + b.slots, 1);
  } else {
    for (int j = 0; j < b.slots; ++j) {
      if (due[size_t(j)]) {
        ns[k] = n0 + dueCount++;
        js[k] = j;
        ++k;
      }
      ch.upTo[size_t(j)] = written + k;
      if (k == limit) {
        flush();
        limit = room();
      }
    }
    flush();
  }
  for (size_t m = 0; m < M; ++m) {
    Stream& s = *ch.members[m];
    if (!ch.materialised[m]) s.heldFrom = s.hist.newest();
    s.due += dueCount;
    const int64_t start = ch.startCount[m];
    for (int j = 0; j < b.slots; ++j) s.vis[size_t(j)] = start + ch.upTo[size_t(j)];
    if (failed)  // nothing after the failing run was written
      for (int j = 0; j < b.slots; ++j) s.vis[size_t(j)] = std::min(s.vis[size_t(j)], s.hist.count);
    s.rounded += ch.rounded[m];
    Stream::Running& r = s.running;
    const int64_t moved = s.hist.count - ch.startCount[m];
    if (kindOf(s) == Kind::SlideNulls) r.nulls = ch.state[4 * m], r.lo += moved, r.hi += moved;
    if (kindOf(s) == Kind::Slide)
      r.sum = ch.state[4 * m], r.sumAbs = ch.state[4 * m + 1], r.present = ch.state[4 * m + 2], r.lo += moved,
      r.hi += moved;
    // The index entries of the records the store wrote, as each member's own step does.
    if (s.files.store && s.error.empty() && s.files.store->durable() != durableBefore[m]) {
      try {
        s.files.meta->flush(s.files.store->durable());
      } catch (const std::exception& e) {
        s.error = e.what();
      }
    }
  }
  // Fused windows' NULL index entries, now that their producers' records are visible.
  for (size_t m = 0; m < M; ++m) {
    Stream& s = *ch.members[m];
    if (kindOf(s) != Kind::SlideNulls || ch.windowNulls[m].empty()) continue;
    std::vector<int64_t> own(ch.blockNs);  // its own record numbers
    for (auto& n : own) n -= ch.shift[m];
    try {
      fusedWindowIndex(s, c.src(s, 0), own.data(), ch.blockJs.data(), ch.windowNulls[m].data(),
                       int(ch.windowNulls[m].size()));
    } catch (const std::exception& e) {
      s.error = e.what();
    }
  }
}

}  // namespace engine::ops
