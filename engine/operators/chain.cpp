// Running a chain (found by chain_plan.cpp) over a block: the last member's
// turn runs every member, record by record, in the chain's generated function
// (jit/chain.cpp), over runs of up to kRun records. The engine prepares what
// the code reads (jit/chain_abi.hpp): each member's output in its ring, each
// external record where it lies, the sliding folds' accumulators; after each
// run it commits the records and writes their stores and indexes as each
// member's own step would.
#include <algorithm>
#include <cstring>

#include "engine/operators/chain.hpp"
#include "engine/operators/driver.hpp"
#include "engine/operators/map_op.hpp"
#include "engine/operators/operators.hpp"
#include "engine/operators/window.hpp"
#include "ir/values.hpp"

namespace engine::ops {

namespace {

using Kind = ChainKind;

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
    const jit::ChainExternal& run = ch.externalRuns[e];
    if (run.data) {  // in place: one record (step 0) or k after each other
      if (!noneSet(run.nulls, run.nullsStep == 0 ? elems : run.nullsStep * (k - 1) + elems)) return false;
      continue;
    }
    for (int i = 0; i < k; ++i)
      if (!noneSet(ch.extNull[size_t(i) * E + e], elems)) return false;
  }
  for (size_t m = 0; m < ch.members.size(); ++m) {
    const Stream& s = *ch.members[m];
    const jit::ChainMember& a = ch.memberArgs[m];
    switch (ch.kinds[m]) {
      case Kind::Window:
        if (!ch.view[m] && !noneSet(a.beforeNulls, int64_t(s.out.elems.size()))) return false;
        break;
      case Kind::SlideNulls:
        if (a.nulls != 0) return false;
        break;
      case Kind::Slide:
        if (a.present != windowLength(*s.fusedWindow)) return false;
        break;
      default: break;
    }
  }
  return true;
}

// Whether the chain's code takes this block: it is there, and every member
// is due with the head, clean, past its origin, and a sliding fold goes on
// from the positions its own step left it at.
bool takesBlock(const Chain& ch) {
  if (!ch.native) return false;
  const Stream& head = *ch.members[0];
  const int64_t n0 = head.due - head.q->tail;
  for (size_t m = 0; m < ch.members.size(); ++m) {
    const Stream& s = *ch.members[m];
    const Kind kind = ch.kinds[m];
    // A window moves on from its record before the block's first.
    const int64_t origin = s.q->origin + (kind == Kind::Window ? 1 : 0);
    const int64_t first = n0 - ch.shift[m];  // its first record of the block
    if (s.rules || !s.error.empty() || s.due != head.due || first < origin) return false;
    if (kind == Kind::SlideNulls || kind == Kind::Slide) {
      const int64_t w = windowLength(kind == Kind::Slide ? *s.fusedWindow : s);
      if (!s.running.valid || s.running.lo != first - w || s.running.hi != first - 1) return false;
    }
    if (ch.view[m]) {  // what its reader reads is held: its own records and its producer's
      const History& a = ch.members[m - 1]->hist;
      const int64_t read = n0 - ch.shift[m + 1], lag = ch.shift[m + 1] - ch.shift[m];
      const int64_t oldest = read - (windowLength(s) - 1) - a.base;
      if (read < s.hist.base || lag >= s.hist.window || oldest < 0 || oldest < a.count - a.window) return false;
    }
  }
  return true;
}

// The block's scratch, and each member's accumulators from its Running state.
void beginBlock(BlockCtx& c, Chain& ch) {
  const size_t M = ch.members.size(), E = ch.externals.size();
  ch.streams = &c.streams;
  ch.ext.resize(size_t(kRun) * std::max<size_t>(E, 1));
  ch.extNull.resize(ch.ext.size());
  ch.externalRuns.assign(std::max<size_t>(E, 1), jit::ChainExternal{});
  ch.visShape.assign(E, 0);
  size_t scratch = 0;
  for (const Chain::External& x : ch.externals) scratch += size_t(x.span) * 5 * size_t(kRun);
  ch.viewScratch.resize(scratch);
  for (size_t e = 0; e < E; ++e)  // final: the producers outside the chain ran before it
    if (const Chain::External& x = ch.externals[e]; !x.raw) {
      const Stream& p = c.src(*ch.members[size_t(x.member)], size_t(x.operand));
      ch.visShape[e] =
          p.visStepAt == c.block.serial ? uint8_t(kVisRising | kVisStep) : visShape(p.vis.data(), c.block.slots);
    }
  ch.memberArgs.assign(M, jit::ChainMember{});
  ch.startCount.resize(M);
  ch.durableBefore.resize(M);
  ch.upTo.resize(size_t(c.block.slots));
  ch.blockNs.clear();
  ch.blockJs.clear();
  ch.windowNulls.resize(M);
  for (size_t m = 0; m < M; ++m) {
    Stream& s = *ch.members[m];
    s.wrote = 0;
    ch.startCount[m] = s.hist.count;
    ch.windowNulls[m].clear();
    ch.durableBefore[m] = s.files.store ? s.files.store->durable() : 0;
    const Stream::Running& r = s.running;
    jit::ChainMember& a = ch.memberArgs[m];
    if (ch.kinds[m] == Kind::SlideNulls) a.nulls = r.nulls;
    if (ch.kinds[m] == Kind::Slide) a.sum = r.sum, a.sumAbs = r.sumAbs, a.present = r.present;
  }
}

// How many records every member's ring takes in one stretch.
int ringRoom(const Chain& ch) {
  int64_t r = kRun;
  for (auto* m : ch.members) r = std::min(r, m->hist.contiguous());
  return int(r);
}

// Records from the head's record nFirst on that each external can give in
// place (one stretch of its ring, a slower one's same record): a run of
// consecutive records that stops there reads them without a pointer a record.
int inPlaceRoom(BlockCtx& c, const Chain& ch, int64_t nFirst) {
  int64_t r = kRun;
  for (const Chain::External& x : ch.externals) {
    const Stream& s = *ch.members[size_t(x.member)];
    const History& h = c.src(s, size_t(x.operand)).hist;
    const int64_t n = nFirst - ch.shift[size_t(x.member)];
    if (x.span) {  // records whose span lies in one stretch, or those whose span wraps
      const History& a = ch.members[size_t(x.from)]->hist;
      const int64_t p = a.pos(n - (x.span - 1) - a.base);
      r = std::min(r, p + x.span - 1 < a.cap ? a.cap - (x.span - 1) - p : a.cap - p);
      continue;
    }
    const ir::Rational ratio = x.raw ? ir::Rational{1, 1} : s.operandRatio[size_t(x.operand)];
    if (ratio.num == ratio.den) {
      if (const int64_t at = n - x.lag - h.base; at >= 0) r = std::min(r, h.cap - h.pos(at));
    } else if (ratio.num > 0 && ratio.num < ratio.den) {  // the next record it moves on to
      r = std::min(r, ceilMul(floorMul(n, ratio) + 1, ir::Rational{ratio.den, ratio.num}) - n);
    }
  }
  return int(std::max<int64_t>(r, 1));
}

// Where one external's records of a run lie: a stretch of its producer's
// ring, or pointers gathered a record (ext/extNull). Locals throughout: the
// stores through the pointer arrays could otherwise alias every field the
// loops read.
struct ExternalReader {
  const History& h;
  const uint8_t *data, *nulls, *zero, *none;
  const int64_t window, mask, cap, base, rec, elems;
  const uint8_t** __restrict outD;
  const uint8_t** __restrict outN;
  jit::ChainExternal& run;
  const size_t E;

  ExternalReader(Chain& ch, size_t e, const Stream& s, const Stream& p)
      : h(p.hist),
        data(h.data.data()),
        nulls(h.nulls.data()),
        zero(s.zeroRec.data()),
        none(s.nullFlags.data()),
        window(h.window),
        mask(h.mask),
        cap(h.cap),
        base(h.base),
        rec(h.rec),
        elems(h.elems),
        outD(ch.ext.data() + e),
        outN(ch.extNull.data() + e),
        run(ch.externalRuns[e]),
        E(ch.externals.size()) {
    run.data = nullptr;
  }
  int64_t pos(int64_t at) const { return mask >= 0 ? (at & mask) : at % cap; }
  // The run's k records as one stretch of the ring (record i at first + i*step).
  bool inPlace(int64_t first, int64_t step, int k) {
    const int64_t p = pos(first);
    if (p + (k - 1) * step >= cap) return false;  // wraps
    run = {data + p * rec, step * rec, nulls + p * elems, step * elems};
    return true;
  }
  void put(int i, bool held, int64_t p) {
    outD[size_t(i) * E] = held ? data + p * rec : zero;
    outN[size_t(i) * E] = held ? nulls + p * elems : none;
  }
};

// A member's record some records back, or one leaving a window (record n -
// lag), read from the ring as it is: written before it is read (earlier in
// the run or before it), still in the ring (it holds the window and one
// block more). A member's record is there for its reader as the reader's own
// step would find it: within `window` of the records the member had made by
// then (its count before the run, plus i + 1).
void readRaw(ExternalReader& r, const int64_t* ns, int k, int64_t shift, int64_t lag) {
  const int64_t oldest = lag == 0 ? r.h.count + 1 - r.window : INT64_MIN;
  const int64_t at0 = ns[0] - shift - lag - r.base;  // ns[] are consecutive
  if (at0 >= 0 && at0 >= oldest && r.inPlace(at0, 1, k)) return;
  for (int i = 0; i < k; ++i) {
    const int64_t at = ns[i] - shift - lag - r.base;
    const bool held = at >= 0 && at >= oldest + i;
    r.put(i, held, held ? r.pos(at) : 0);
  }
}

// Another stream's records as the member's index map reads them (record n
// reads record floor(n·ratio)), held when the producer's count visible at
// the record's slot holds them.
void readVisible(ExternalReader& r, const Stream& p, ir::Rational ratio, uint8_t shape, const int64_t* ns,
                 const int* js, int k, int64_t shift) {
  const int64_t* vis = p.vis.data();
  const bool unit = ratio.num == ratio.den;
  int64_t idx = floorMul(ns[0] - shift, ratio), until = INT64_MAX;
  // One record for the whole run (a slower source) or one a record (same interval).
  if (unit || floorMul(ns[k - 1] - shift, ratio) == idx) {
    const int64_t at0 = idx - r.base, step = unit ? 1 : 0;
    if (heldThroughout(vis, js, k, at0, step, r.window, shape) && r.inPlace(at0, step, k)) return;
  }
  // n grows through the run, so the floor moves on without a division.
  if (!unit && ratio.num > 0) until = ceilMul(idx + 1, ir::Rational{ratio.den, ratio.num});
  for (int i = 0; i < k; ++i) {
    const int64_t n = ns[i] - shift;
    if (unit) {
      idx = n;
    } else if (n >= until) {
      idx = floorMul(n, ratio);
      until = ratio.num > 0 ? ceilMul(idx + 1, ir::Rational{ratio.den, ratio.num}) : INT64_MAX;
    }
    const int64_t at = idx - r.base, v = vis[js[i]];
    const bool held = at >= 0 && at < v && at >= v - r.window;
    r.put(i, held, r.mask >= 0 ? (at & r.mask) : (held ? at % r.cap : 0));
  }
}

// A view's records (Chain::External::span): record n is its producer's
// records n-w+1 .. n, oldest first. Each lies in one stretch of the ring
// but for those whose span wraps around it (the run holds no others then,
// inPlaceRoom): they are copied to scratch. The block's gate (takesBlock)
// made sure every one is held.
void readView(ExternalReader& r, uint8_t*& scratch, const int64_t* ns, int k, int64_t shift, int w) {
  const int64_t at0 = ns[0] - shift - (w - 1) - r.base;  // ns[] are consecutive
  if (r.inPlace(at0, 1, k + w - 1)) return;
  for (int i = 0; i < k; ++i) {
    const int64_t p = r.pos(at0 + i);
    if (p + w - 1 < r.cap) {
      r.put(i, true, p);
      continue;
    }
    uint8_t *d = scratch, *nl = scratch + 4 * w;
    scratch += 5 * w;
    for (int e = 0; e < w; ++e) {
      const int64_t q = r.pos(at0 + i + e);
      memcpy(d + 4 * e, r.data + q * r.rec, 4);
      nl[e] = r.nulls[q * r.elems];
    }
    r.outD[size_t(i) * r.E] = d;
    r.outN[size_t(i) * r.E] = nl;
  }
}

void readExternals(BlockCtx& c, Chain& ch, const int64_t* ns, const int* js, int k) {
  uint8_t* scratch = ch.viewScratch.data();
  for (size_t e = 0; e < ch.externals.size(); ++e) {
    const Chain::External& x = ch.externals[e];
    const Stream& s = *ch.members[size_t(x.member)];
    const Stream& p = x.span ? *ch.members[size_t(x.from)] : c.src(s, size_t(x.operand));
    ExternalReader r(ch, e, s, p);
    const int64_t shift = ch.shift[size_t(x.member)];
    if (x.span) readView(r, scratch, ns, k, shift, x.span);
    else if (x.raw) readRaw(r, ns, k, shift, x.lag);
    else readVisible(r, p, s.operandRatio[size_t(x.operand)], ch.visShape[e], ns, js, k, shift);
  }
}

// A view's flag of each of the run's records (a NULL among the producer's
// records it spans), for its NULL index after the block: none when the
// producer's flags under the run hold none (the usual run), else a count of
// NULLs that slides along them.
void viewFlags(Chain& ch, size_t m, const int64_t* ns, int k) {
  const History& a = ch.members[m - 1]->hist;  // one flag a record
  const int64_t w = windowLength(*ch.members[m]);
  const int64_t lo = ns[0] - ch.shift[m] - (w - 1) - a.base;  // ns[] are consecutive
  std::vector<uint8_t>& flags = ch.windowNulls[m];
  const size_t at = flags.size();
  flags.resize(at + size_t(k), 0);
  if (lo >= 0 && a.pos(lo) + k + w - 1 <= a.cap && noneSet(a.nulls.data() + a.pos(lo), k + w - 1)) return;
  auto isNull = [&a](int64_t x) { return x < 0 || a.nulls[size_t(a.pos(x))] != 0; };
  int64_t nulls = 0;
  for (int64_t e = 0; e + 1 < w; ++e) nulls += isNull(lo + e);
  for (int i = 0; i < k; ++i) {
    nulls += isNull(lo + w - 1 + i);
    flags[at + size_t(i)] = nulls != 0;
    nulls -= isNull(lo + i);
  }
}

// A view's record n, as its own step would copy it: its producer's records
// n .. n-w+1, newest first (a NULL or absent one as zero bytes). False when
// one of them has left the producer's ring.
bool viewRecord(const Stream& w, const Stream& a, int64_t n, uint8_t* out, uint8_t* outNulls) {
  const History& h = a.hist;
  bool known = true;
  for (int64_t e = 0; e < windowLength(w); ++e) {
    const int64_t at = n - e - h.base;
    const bool held = at >= 0 && at < h.count && at >= h.count - h.cap;
    const bool isNull = !held || h.nulls[size_t(h.pos(at) * h.elems)] != 0;
    known = known && (held || at < 0);
    uint32_t v = 0;
    if (!isNull) memcpy(&v, h.data.data() + h.pos(at) * h.rec, 4);
    memcpy(out + 4 * e, &v, 4);
    outNulls[e] = isNull;
  }
  return known;
}

// Commits a run's k records of every member; false when a store failed
// (the member's error is set, nothing after the run is written).
bool runRecords(BlockCtx& c, Chain& ch, jit::ChainArgs& args, const int64_t* ns, const int* js, int k) {
  readExternals(c, ch, ns, js, k);
  for (size_t m = 0; m < ch.members.size(); ++m) {
    Stream& s = *ch.members[m];
    jit::ChainMember& a = ch.memberArgs[m];
    a.out = s.hist.nextData();
    a.outNulls = s.hist.nextNulls();
    // A window moves on from its newest record, the one before the run's
    // first (the block's gate makes sure it exists, the ring holds one block more).
    if (ch.kinds[m] == Kind::Window && !ch.view[m]) s.hist.get(ns[0] - ch.shift[m] - 1, a.before, a.beforeNulls);
  }
  ch.runNs = ns;
  args.clean = cleanRun(c, ch, k);
  ch.native(&args, k);
  for (auto* s : ch.members)  // the VM stopped on an error (runChainOnVm): nothing of the run is committed
    if (!s->error.empty()) return false;
  bool ok = true;
  for (size_t m = 0; m < ch.members.size(); ++m) {
    Stream& s = *ch.members[m];
    const jit::ChainMember& a = ch.memberArgs[m];
    s.hist.commit(k);
    s.wrote += k;
    if (ch.view[m]) {
      viewFlags(ch, m, ns, k);
      continue;
    }
    if (ch.kinds[m] == Kind::SlideNulls) {  // its NULL index after the block, when its producer is visible
      const size_t ne = s.out.elems.size(), at = ch.windowNulls[m].size();
      ch.windowNulls[m].resize(at + size_t(k));
      uint8_t* to = ch.windowNulls[m].data() + at;  // locals: a byte store could alias the vectors
      const uint8_t* from = a.outNulls;
      for (int i = 0; i < k; ++i) to[i] = from[size_t(i) * ne];
      continue;
    }
    try {
      emitRun(s, ns, k, a.out, a.outNulls);
    } catch (const std::exception& e) {
      s.error = e.what();
      ok = false;
    }
  }
  ch.blockNs.insert(ch.blockNs.end(), ns, ns + k);
  ch.blockJs.insert(ch.blockJs.end(), js, js + k);
  return ok;
}

// Each member's visible counts, accumulators and index entries after the block.
void endBlock(Chain& ch, const Block& b, bool everySlot, int64_t dueCount, bool failed) {
  const int slots = b.slots;
  for (size_t m = 0; m < ch.members.size(); ++m) {
    Stream& s = *ch.members[m];
    const jit::ChainMember& a = ch.memberArgs[m];
    if (!ch.materialised[m] && !ch.view[m]) s.heldFrom = s.hist.newest();
    if (ch.view[m] && s.hist.count > ch.startCount[m]) {  // its newest record, for clients and its own step
      const int64_t p = s.hist.pos(s.hist.count - 1);
      viewRecord(s, *ch.members[m - 1], s.hist.newest(), s.hist.data.data() + p * s.hist.rec,
                 s.hist.nulls.data() + p * s.hist.elems);
      s.heldFrom = s.hist.newest();
      ch.viewsStale = true;
    }
    s.due += dueCount;
    const int64_t start = ch.startCount[m];
    if (ch.visRead[m] || failed) {  // for the streams that read them (Chain::visRead)
      int64_t* vis = s.vis.data();
      if (everySlot)
        for (int j = 0; j < slots; ++j) vis[j] = start + j + 1;
      else
        for (int j = 0; j < slots; ++j) vis[j] = start + ch.upTo[size_t(j)];
    }
    if (failed)  // nothing after the failing run was written
      for (int j = 0; j < slots; ++j) s.vis[size_t(j)] = std::min(s.vis[size_t(j)], s.hist.count);
    else if (everySlot) s.visStepAt = b.serial;
    s.rounded += a.rounded;
    Stream::Running& r = s.running;
    const int64_t moved = s.hist.count - start;
    if (ch.kinds[m] == Kind::SlideNulls) r.nulls = a.nulls, r.lo += moved, r.hi += moved;
    if (ch.kinds[m] == Kind::Slide)
      r.sum = a.sum, r.sumAbs = a.sumAbs, r.present = a.present, r.lo += moved, r.hi += moved;
    flushIndex(s, ch.durableBefore[m]);  // as each member's own step does
  }
}

// Fused windows' NULL index entries, now that their producers' records are visible.
void writeWindowIndexes(BlockCtx& c, Chain& ch) {
  for (size_t m = 0; m < ch.members.size(); ++m) {
    Stream& s = *ch.members[m];
    if ((ch.kinds[m] != Kind::SlideNulls && !ch.view[m]) || ch.windowNulls[m].empty()) continue;
    if (ch.view[m])  // its ring does not hold them (Engine::Impl::countNullRecords)
      s.nullRecords += uint64_t(std::count(ch.windowNulls[m].begin(), ch.windowNulls[m].end(), 1));
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

bool isView(const Stream& s) {
  if (!s.chain) return false;
  const Chain& ch = *s.chain;
  for (size_t m = 0; m < ch.members.size(); ++m)
    if (ch.members[m] == &s) return ch.view[m] != 0;
  return false;
}

void rebuildViews(Chain& ch) {
  if (!ch.viewsStale) return;
  ch.viewsStale = false;
  for (size_t m = 0; m < ch.members.size(); ++m) {
    if (!ch.view[m]) continue;
    Stream& w = *ch.members[m];
    History& h = w.hist;
    w.heldFrom = INT64_MIN;
    for (int64_t at = std::max<int64_t>(0, h.count - h.window); at < h.count; ++at) {
      const int64_t p = h.pos(at);
      if (!viewRecord(w, *ch.members[m - 1], h.base + at, h.data.data() + p * h.rec, h.nulls.data() + p * h.elems))
        w.heldFrom = h.base + at + 1;  // readers find no earlier one
    }
  }
}

void chainStep(BlockCtx& c, Chain& ch) {
  if (!takesBlock(ch)) {
    rebuildViews(ch);
    for (auto* m : ch.members) m->step(c, *m);
    return;
  }
  beginBlock(c, ch);
  const Block& b = c.block;
  const Stream& head = *ch.members[0];
  const int64_t n0 = head.due - head.q->tail;
  const std::vector<char>& due = b.due[head.tickIndex];
  jit::ChainArgs args{ch.ext.data(),
                      ch.extNull.data(),
                      ch.memberArgs.data(),
                      ch.externalRuns.data(),
                      &ir::val::ratRounded(),
                      &foldIntegerRecord,
                      &slideSlow,
                      &ch,
                      0};
  int64_t ns[kRun];
  int js[kRun];
  int k = 0, written = 0;
  int64_t dueCount = 0;
  bool failed = false;
  auto flush = [&] {
    if (k > 0 && !failed) failed = !runRecords(c, ch, args, ns, js, k), written += k;
    k = 0;
  };
  const bool everySlot = !memchr(due.data(), 0, size_t(b.slots));
  if (everySlot) {
    // Due at every slot of the block (the usual case): runs of consecutive slots.
    for (int j = 0; j < b.slots; j += k, flush()) {
      k = std::min({ringRoom(ch), inPlaceRoom(c, ch, n0 + dueCount), b.slots - j});
      for (int i = 0; i < k; ++i) ns[i] = n0 + dueCount + i, js[i] = j + i;
      dueCount += k;
    }
  } else {
    int limit = ringRoom(ch);
    for (int j = 0; j < b.slots; ++j) {
      if (due[size_t(j)]) ns[k] = n0 + dueCount++, js[k++] = j;
      ch.upTo[size_t(j)] = written + k;
      if (k == limit) flush(), limit = ringRoom(ch);
    }
    flush();
  }
  endBlock(ch, b, everySlot, dueCount, failed);
  writeWindowIndexes(c, ch);
}

}  // namespace engine::ops
