// Chains: runs of computed streams compiled as one function (jit/chain.cpp).
// A link p -> r joins a chain when r is p's only reader and both have the
// same interval and tail (so both make record n in the same slot), neither
// has rules, a fused window or an ad hoc origin, and each is a Map (SELECT or
// + reading whole operand records in place) or a Fold (a reducer over a
// record of INTEGER elements). Members stay materialised: each record is
// still written to its ring, its NULL index and its store, so readers from
// outside (the tail's readers, ad hoc imports, which run later in plan
// order) see what the members' own steps would have written.
#include <algorithm>

#include "engine/operators/driver.hpp"
#include "engine/operators/map_op.hpp"
#include "engine/operators/operators.hpp"
#include "ir/values.hpp"

namespace engine::ops {

namespace {

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

bool chainable(const Stream& s, const Streams& streams) {
  if (s.declared || s.adhoc || s.removed || s.rules || s.fusedInto || s.fusedWindow) return false;
  if (s.identity) return slidingWindow(s, streams);
  if (s.q->program.size() == 1) return s.operandPointers;  // SELECT ... FROM A
  const ir::Op op = s.q->program.back().op;
  if (op == ir::Op::STREAM_ADD) return s.operandPointers;
  return isFold(op) && s.srcs.size() == 1 && s.in.elems.size() == 1 &&
         integerRecord(streams[size_t(s.srcs[0])]->out);
}

}  // namespace

bool chainFold(const Stream& s) { return s.q->program.size() > 1 && isFold(s.q->program.back().op); }
bool chainWindow(const Stream& s) { return s.identity; }

std::vector<std::shared_ptr<Chain>> findChains(const std::vector<Stream*>& computed, const Streams& streams) {
  // Readers of each stream (distinct streams).
  std::vector<std::vector<Stream*>> readers(streams.size());
  for (auto* s : computed)
    for (int src : s->srcs) {
      auto& r = readers[size_t(src)];
      if (r.empty() || r.back() != s) r.push_back(s);
    }
  auto next = [&](Stream* p) -> Stream* {
    const auto& r = readers[size_t(p->index)];
    if (r.size() != 1 || !chainable(*p, streams) || !chainable(*r[0], streams)) return nullptr;
    Stream* n = r[0];
    return n->tick == p->tick && n->q->tail == p->q->tail ? n : nullptr;
  };
  std::vector<char> inner(streams.size(), 0);  // has a chain link into it
  for (auto* s : computed)
    if (Stream* n = next(s)) inner[size_t(n->index)] = 1;
  std::vector<std::shared_ptr<Chain>> chains;
  for (auto* s : computed) {
    if (inner[size_t(s->index)] || !next(s)) continue;
    auto c = std::make_shared<Chain>();
    Stream* first = s;
    if (first->identity) first = next(first);  // a window reads its producer in the chain
    if (!first || !next(first)) continue;
    for (Stream* m = first; m; m = next(m)) c->members.push_back(m);
    for (size_t m = 0; m < c->members.size(); ++m) {
      Stream& st = *c->members[m];
      for (size_t k = 0; k < st.srcs.size(); ++k)
        if (m == 0 || st.srcs[k] != c->members[m - 1]->index) c->externals.push_back({int(m), int(k)});
      st.chain = c;
    }
    chains.push_back(std::move(c));
  }
  return chains;
}

void chainStep(BlockCtx& c, Chain& ch) {
  const Block& b = c.block;
  Stream& head = *ch.members[0];
  const int64_t tail = head.q->tail;
  int64_t origin = 0;
  bool native = ch.native != nullptr;
  for (auto* m : ch.members) {
    // A window moves on from its record before the block's first.
    origin = std::max<int64_t>(origin, m->q->origin + (m->identity ? 1 : 0));
    native = native && !m->rules && m->error.empty() && m->due == head.due;
  }
  // Before the last member's first record, some members have silent slots:
  // their own steps number those.
  if (!native || head.due - tail < origin) {
    for (auto* m : ch.members) m->step(c, *m);
    return;
  }
  const size_t M = ch.members.size(), E = ch.externals.size();
  const std::vector<char>& due = b.due[head.tickIndex];
  ch.ext.resize(size_t(kRun) * std::max<size_t>(E, 1));
  ch.extNull.resize(ch.ext.size());
  ch.outs.resize(M);
  ch.outNulls.resize(M);
  ch.rounded.assign(M, 0);
  ch.last.assign(2 * M, nullptr);
  ch.startCount.resize(M);
  ch.upTo.resize(size_t(b.slots));
  for (size_t m = 0; m < M; ++m) {
    Stream& s = *ch.members[m];
    s.wrote = 0;
    ch.startCount[m] = s.hist.count;
  }
  std::vector<uint64_t> durableBefore(M);
  for (size_t m = 0; m < M; ++m) {
    const Stream& s = *ch.members[m];
    durableBefore[m] = s.files.store ? s.files.store->durable() : 0;
  }
  auto room = [&] {
    int64_t r = kRun;
    for (auto* m : ch.members) r = std::min(r, m->hist.contiguous());
    return int(r);
  };
  int64_t ns[kRun];
  int js[kRun];
  int k = 0, written = 0, limit = room();
  bool failed = false;
  auto flush = [&] {
    if (k == 0 || failed) return;
    // The external records of each record, as the members' index maps read them.
    for (size_t e = 0; e < E; ++e) {
      const Chain::External& x = ch.externals[e];
      Stream& s = *ch.members[size_t(x.member)];
      const Stream& p = c.src(s, size_t(x.operand));
      const ir::Rational r = s.operandRatio[size_t(x.operand)];
      // Record n reads record floor(n·r) (n itself for r = 1), the ring lookups
      // inline; n grows through the run, so the floor moves on without a division.
      int64_t idx = floorMul(ns[0], r), from = ns[0], until = INT64_MAX;
      if (r.num != r.den) until = r.num > 0 ? ceilMul(idx + 1, ir::Rational{r.den, r.num}) : INT64_MAX;
      const History& h = p.hist;
      const int64_t window = h.window, mask = h.mask, cap = h.cap, base = h.base, rec = h.rec, elems = h.elems;
      const uint8_t* data = h.data.data();
      const uint8_t* nulls = h.nulls.data();
      const int64_t* vis = p.vis.data();
      for (int i = 0; i < k; ++i) {
        const int64_t n = ns[i];
        if (r.num == r.den) idx = n;
        else if (n >= until || n < from) {  // (n < from: never, n grows)
          idx = floorMul(n, r);
          from = n;
          until = r.num > 0 ? ceilMul(idx + 1, ir::Rational{r.den, r.num}) : INT64_MAX;
        }
        const int64_t at = idx - base, v = vis[js[i]];
        const bool held = at >= 0 && at < v && at >= v - window;
        const int64_t pos = mask >= 0 ? (at & mask) : (held ? at % cap : 0);
        ch.ext[size_t(i) * E + e] = held ? data + pos * rec : s.zeroRec.data();
        ch.extNull[size_t(i) * E + e] = held ? nulls + pos * elems : s.nullFlags.data();
      }
    }
    for (size_t m = 0; m < M; ++m) {
      Stream& s = *ch.members[m];
      ch.outs[m] = s.hist.nextData();
      ch.outNulls[m] = s.hist.nextNulls();
      // A window moves on from its newest record, the one before the run's
      // first (the block's gate makes sure it exists, the ring holds one block more).
      if (s.identity) s.hist.get(ns[0] - 1, ch.last[2 * m], ch.last[2 * m + 1]);
    }
    ch.native(ch.ext.data(), ch.extNull.data(), ch.outs.data(), ch.outNulls.data(), k, ch.rounded.data(),
              &ir::val::ratRounded(), &foldIntegerRecord, ch.last.data());
    for (size_t m = 0; m < M; ++m) {
      Stream& s = *ch.members[m];
      s.hist.commit(k);
      s.wrote += k;
      try {
        emitRun(s, ns, k, ch.outs[m], ch.outNulls[m]);
      } catch (const std::exception& e) {
        s.error = e.what();
        failed = true;
      }
    }
    written += k;
    k = 0;
  };
  int64_t dueCount = 0;
  for (int j = 0; j < b.slots; ++j) {
    if (due[size_t(j)]) {
      ns[k] = head.due + dueCount++ - tail;
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
  for (size_t m = 0; m < M; ++m) {
    Stream& s = *ch.members[m];
    s.due += dueCount;
    const int64_t start = ch.startCount[m];
    for (int j = 0; j < b.slots; ++j) s.vis[size_t(j)] = start + ch.upTo[size_t(j)];
    if (failed)  // nothing after the failing run was written
      for (int j = 0; j < b.slots; ++j) s.vis[size_t(j)] = std::min(s.vis[size_t(j)], s.hist.count);
    s.rounded += ch.rounded[m];
    // The index entries of the records the store wrote, as each member's own step does.
    if (s.files.store && s.error.empty() && s.files.store->durable() != durableBefore[m]) {
      try {
        s.files.meta->flush(s.files.store->durable());
      } catch (const std::exception& e) {
        s.error = e.what();
      }
    }
  }
}

}  // namespace engine::ops
