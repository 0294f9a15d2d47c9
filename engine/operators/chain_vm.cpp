// A chain's run on the VM (--interpret): what the chain's generated function
// does (jit/chain_abi.hpp, the same arguments the same way), step after step
// over the run's records as the VM's lanes. Each step writes all k records
// of the run to its ring, materialised or not, so the steps after it read
// them there; a Map runs its program once over the run, folds and windows
// make their input records as the members' own steps do (reduce.cpp's
// folds). Step after step is the record-by-record order's result: a member
// reads only members before it, and records some records back stay in the
// rings (they hold the window and a block more).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "engine/operators/chain.hpp"
#include "engine/operators/operators.hpp"
#include "ir/values.hpp"

namespace engine::ops {

namespace {

using Kind = ChainKind;
using jit::ChainStep;

// The thread's scratch: a run's operand pointers and input records.
struct Scratch {
  std::vector<const uint8_t*> recs, nulls;
  std::vector<uint8_t> data, flags;
};

struct VmRun {
  Chain& ch;
  const jit::ChainArgs& a;
  const int k;
  Scratch& sc;

  // Where operand `from` of step m's records lie (ChainStep::from): record
  // i at d + i*dStep (flags likewise), or through the engine's pointers.
  struct Where {
    const uint8_t *d = nullptr, *n = nullptr;
    int64_t dStep = 0, nStep = 0;
    const uint8_t *const *pd = nullptr, *const *pn = nullptr;
    size_t E = 0;
    void at(int i, const uint8_t*& data, const uint8_t*& nulls) const {
      if (pd) data = pd[size_t(i) * E], nulls = pn[size_t(i) * E];
      else data = d + i * dStep, nulls = n + i * nStep;
    }
  };
  Where operand(size_t m, int from) const {
    Where w;
    if (from < 0) {
      const size_t p = size_t(int(m) + from);
      const ir::Layout& out = ch.vmSteps[p].out;
      w.d = a.members[p].out, w.dStep = out.recordSize;
      w.n = a.members[p].outNulls, w.nStep = int64_t(out.elems.size());
      return w;
    }
    const jit::ChainExternal& x = a.externals[from];
    if (x.data) {
      w.d = x.data, w.dStep = x.dataStep, w.n = x.nulls, w.nStep = x.nullsStep;
      return w;
    }
    w.E = ch.externals.size(), w.pd = a.ext + from, w.pn = a.extNulls + from;
    return w;
  }

  static int32_t int32At(const uint8_t* d) {
    int32_t v;
    memcpy(&v, d, 4);
    return v;
  }

  // The program over the run's records: operand o of record i at recs[i*ops + o].
  bool program(size_t m, std::span<const int> operands, std::span<const int> reversed = {}) {
    const ChainStep& st = ch.vmSteps[m];
    vm::Machine machine;
    const vm::BlockIn in{sc.recs.data(), sc.nulls.data(), operands, reversed};
    if (machine.run(st.program, st.in, in, st.out, {a.members[m].out, a.members[m].outNulls}, k)) return true;
    ch.members[m]->error = "stream " + ch.members[m]->q->id + ": " + machine.error();
    return false;
  }

  // Its operands where they lie (a view's records in its producer's ring,
  // read reversed by the VM's loads).
  bool map(size_t m) {
    const ChainStep& st = ch.vmSteps[m];
    const size_t ops = st.from.size();
    sc.recs.resize(ops * size_t(k)), sc.nulls.resize(ops * size_t(k));
    for (size_t o = 0; o < ops; ++o) {
      const Where w = operand(m, st.from[o]);
      for (int i = 0; i < k; ++i) w.at(i, sc.recs[size_t(i) * ops + o], sc.nulls[size_t(i) * ops + o]);
    }
    return program(m, st.bases, st.reversed);
  }

  // Fold and Slide: each record's input record (its one element; NULL, zero
  // bytes as `fold` leaves them, when nothing is present) by `fold(i, in)`,
  // then the program over them.
  template <class Fold>
  bool folded(size_t m, Fold&& fold) {
    const ChainStep& st = ch.vmSteps[m];
    const size_t size = size_t(std::max(st.in.recordSize, 8));
    sc.data.assign(size * size_t(k), 0);
    sc.flags.resize(size_t(k));
    sc.recs.resize(size_t(k)), sc.nulls.resize(size_t(k));
    // Locals: the flags' byte stores could otherwise alias the scratch's vectors.
    uint8_t *data = sc.data.data(), *flags = sc.flags.data();
    const uint8_t **recs = sc.recs.data(), **nulls = sc.nulls.data();
    for (int i = 0; i < k; ++i) {
      uint8_t* in = data + size * size_t(i);
      flags[i] = fold(i, in) ? 0 : 1;
      recs[i] = in, nulls[i] = flags + i;
    }
    return program(m, {});
  }

  bool fold(size_t m) {
    const ChainStep& st = ch.vmSteps[m];
    const Where w = operand(m, st.from[0]);
    return folded(m, [&](int i, uint8_t* in) {
      const uint8_t *d, *nl;
      w.at(i, d, nl);
      return foldIntegers(int32_t(st.fold), int32_t(st.in.elems[0].type), d, nl, st.foldElems, in);
    });
  }

  // A fused window's .sumc/.avg: the element entering added, the one leaving taken away.
  bool slide(size_t m) {
    const ChainStep& st = ch.vmSteps[m];
    jit::ChainMember& r = a.members[m];
    const Where enters = operand(m, st.from[0]), leaves = operand(m, st.from[1]);
    return folded(m, [&](int i, uint8_t* in) {
      const uint8_t *di, *ni, *dl, *nl;
      enters.at(i, di, ni);
      leaves.at(i, dl, nl);
      const int64_t x = ni[0] ? 0 : int32At(di), y = nl[0] ? 0 : int32At(dl);
      r.sum += x - y;
      r.sumAbs += std::abs(x) - std::abs(y);
      r.present += (ni[0] ? 0 : 1) - (nl[0] ? 0 : 1);
      if (r.present == 0) return false;
      const int32_t type = int32_t(st.in.elems[0].type);
      if (!slidingResult(int32_t(st.fold), type, r.sum, r.sumAbs, r.present, in)) a.slowSlide(a.ctx, int32_t(m), i, in);
      return true;
    });
  }

  // Its NULL count slides (absent elements count as NULL); each record's flag.
  void slideNulls(size_t m) {
    const ChainStep& st = ch.vmSteps[m];
    jit::ChainMember& r = a.members[m];
    const Where enters = operand(m, st.from[0]), leaves = operand(m, st.from[1]);
    for (int i = 0; i < k; ++i) {
      const uint8_t *d, *in, *out;
      enters.at(i, d, in);
      leaves.at(i, d, out);
      r.nulls += (in[0] ? 1 : 0) - (out[0] ? 1 : 0);
      r.outNulls[size_t(i) * st.out.elems.size()] = r.nulls != 0;
    }
  }

  // Newest first: each record is the one before moved back one place, the
  // producer's new element first (NULL as zero bytes).
  void window(size_t m) {
    const ChainStep& st = ch.vmSteps[m];
    const jit::ChainMember& r = a.members[m];
    const size_t W = st.out.elems.size(), rs = size_t(st.out.recordSize);
    const uint8_t *before = r.before, *beforeNulls = r.beforeNulls;
    const Where w = operand(m, st.from[0]);
    for (int i = 0; i < k; ++i) {
      uint8_t *rec = r.out + size_t(i) * rs, *flags = r.outNulls + size_t(i) * W;
      const uint8_t *d, *nl;
      w.at(i, d, nl);
      memmove(rec + 4, before, 4 * (W - 1));
      memmove(flags + 1, beforeNulls, W - 1);
      const int32_t v = nl[0] ? 0 : int32At(d);
      memcpy(rec, &v, 4);
      flags[0] = nl[0] != 0;
      before = rec, beforeNulls = flags;
    }
  }

  bool step(size_t m) {
    switch (ch.vmSteps[m].kind) {
      case Kind::Map: return map(m);
      case Kind::Fold: return fold(m);
      case Kind::Slide: return slide(m);
      case Kind::SlideNulls: slideNulls(m); return true;
      case Kind::Window: window(m); return true;
    }
    return true;
  }
};

}  // namespace

void runChainOnVm(const jit::ChainArgs* args, int64_t count) {
  thread_local Scratch scratch;
  Chain& ch = *static_cast<Chain*>(args->ctx);
  VmRun run{ch, *args, int(count), scratch};
  for (size_t m = 0; m < ch.vmSteps.size(); ++m) {
    if (ch.vmSteps[m].view) continue;  // its reader reads its producer's records
    const uint64_t before = ir::val::ratRounded();
    const bool ok = run.step(m);
    args->members[m].rounded += ir::val::ratRounded() - before;
    if (!ok) return;  // the member's error stops the chain after this run
  }
}

}  // namespace engine::ops
