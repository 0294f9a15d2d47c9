// A @ (k, w): record n holds the |w| elements of A at positions n·k-|w|+1 ..
// n·k (window.hpp). A window that only copies (every field its own element,
// integer or RATIONAL types) is gathered straight into its history ring; a VOLATILE
// window read by one reducer (reduce.cpp folds it) or by one SELECT that
// loads at most half its elements (FusedSelectOp below) is not materialised
// at all, and keeps only its record count and NULL index here.
#include <algorithm>

#include "engine/convert.hpp"
#include "engine/operators/operators.hpp"
#include "engine/operators/window.hpp"

namespace engine::ops {

namespace {

// A NULL element's bytes as a program stores them: zeros (a RATIONAL 0/1).
inline void nullElement(uint8_t* d, const ir::Element& de) {
  memset(d, 0, size_t(de.size));
  if (de.type == ir::Type::RATIONAL) {
    const int32_t one = 1;
    memcpy(d + 4, &one, 4);
  }
}

// Element i of window record n, as a reader that sees `visible` records of
// the producer, into its slot `de` of a record: converted, a NULL one as a
// program stores it.
inline void windowElement(const WindowShape& w, int64_t n, int64_t i, int64_t visible, const ir::Element& de,
                          uint8_t* rec, uint8_t* nulls) {
  bool isNull;
  const ir::Element* se;
  const uint8_t* v = w.elementSeen(w.position(n, i), visible, isNull, se);
  nulls[i] = isNull ? 1 : 0;
  if (!v || isNull) nullElement(rec + de.offset, de);
  else if (se->type == de.type && se->size == 4 && de.size == 4) memcpy(rec + de.offset, v, 4);
  else convertElem(se->type, v, se->size, de.type, rec + de.offset, de.size);
}

// Record n of the window as a reader that sees `visible` records of the producer.
void windowRecord(const WindowShape& w, const Stream& s, int64_t n, int64_t visible, uint8_t* out, uint8_t* outNull) {
  for (int64_t i = 0; i < w.W; ++i) windowElement(w, n, i, visible, s.out.elems[size_t(i)], out, outNull);
}

struct WindowOp {
  BlockCtx& c;
  Stream& s;
  WindowShape w;
  WindowOp(BlockCtx& ctx, Stream& st) : c(ctx), s(st), w(st, ctx.src(st, 0)) {
    dense4 = st.identity && w.F > 1 && w.a->hist.elems == w.F;
    for (size_t e = 0; dense4 && e < w.a->out.elems.size(); ++e)
      dense4 = w.a->out.elems[e].size == 4 && w.a->out.elems[e].offset == int(4 * e);
    for (size_t i = 0; dense4 && i < st.out.elems.size(); ++i) dense4 = st.out.elems[i].offset == int(4 * i);
  }
  Form form(const Stream& st) const { return st.identity ? Form::Direct : Form::Gather; }
  void pointersRun(const int64_t*, const int*, int, const uint8_t**, const uint8_t**) {}
  void gather(int64_t n, int j, uint8_t* in, uint8_t* inNull) {
    for (int64_t i = 0; i < w.W; ++i) {
      const ir::Element& de = s.in.elems[size_t(i)];
      bool isNull;
      const ir::Element* se;
      const uint8_t* v = w.element(w.position(n, i), j, isNull, se);
      if (v) convertElem(se->type, v, se->size, de.type, in + de.offset, de.size);
      else memset(in + de.offset, 0, size_t(de.size));
      inNull[i] = isNull ? 1 : 0;
    }
  }
  // Identity: the element bytes as they are (a NULL one reads as zeros, as
  // the program would store it).
  void direct(int64_t n, int j, uint8_t* out, uint8_t* outNull) {
    if (w.F == 1 && w.newestFirst) {
      const History& h = w.a->hist;
      const int64_t vis = w.a->vis[size_t(j)], top = n * w.k - h.base, size = s.out.elems[0].size;
      if (top < vis && top - w.W + 1 >= std::max<int64_t>(vis - h.window, 0)) {
        // The whole window is held: one element per record, newest first.
        const int64_t p0 = h.pos(top);
        if (size == 4 && h.elems == 1 && p0 - (w.W - 1) >= 0) {  // one stretch of the ring, newest last
          const uint8_t* src = h.data.data() + p0 * h.rec;
          const uint8_t* nsrc = h.nulls.data() + p0;
          const int64_t W = w.W;  // a local: the stores below cannot change it
          const uint8_t* oldest = nsrc - (W - 1);
          uint8_t nulls = 0;
          for (int64_t i = 0; i < W; ++i) nulls |= oldest[i];
          if (nulls == 0 && h.rec == 4) {  // no NULL (the common record): a reversed word copy
            for (int64_t i = 0; i < W; ++i) memcpy(out + i * 4, src - i * 4, 4);
            memset(outNull, 0, size_t(W));
            return;
          }
          for (int64_t i = 0; i < w.W; ++i) {
            const uint8_t isNull = nsrc[-i] != 0;
            uint32_t v;
            memcpy(&v, src - i * h.rec, 4);
            v = isNull ? 0 : v;
            memcpy(out + i * 4, &v, 4);
            outNull[i] = isNull;
          }
          return;
        }
        if (size == 4) {  // INTEGER and UINT: word copies
          for (int64_t i = 0; i < w.W; ++i) {
            const int64_t p = h.pos(top - i);
            const uint8_t isNull = h.nulls[size_t(p)] != 0;
            uint32_t v;
            memcpy(&v, h.data.data() + p * h.rec, 4);
            v = isNull ? 0 : v;
            memcpy(out + i * 4, &v, 4);
            outNull[i] = isNull;
          }
          return;
        }
        for (int64_t i = 0; i < w.W; ++i) {
          const int64_t p = h.pos(top - i);
          const bool isNull = h.nulls[size_t(p)] != 0;
          outNull[i] = isNull ? 1 : 0;
          if (isNull) nullElement(out + i * size, s.out.elems[size_t(i)]);
          else memcpy(out + i * size, h.data.data() + p * h.rec, size_t(size));
        }
        return;
      }
    }
    if (dense4 && denseRecord(n, j, out, outNull)) return;
    windowRecord(w, s, n, w.a->vis[size_t(j)], out, outNull);
  }
  // Producer records of F 4-byte elements end to end (F > 1): while the
  // window's records are all held, its elements are word copies walked
  // record by record through the ring.
  bool dense4 = false;
  bool denseRecord(int64_t n, int j, uint8_t* out, uint8_t* outNull) const {
    const History& h = w.a->hist;
    const int64_t vis = w.a->vis[size_t(j)];
    const int64_t lo = w.lo(n), rl = floorDiv(lo, w.F) - h.base, rh = floorDiv(w.hi(n), w.F) - h.base;
    if (rh >= vis || rl < std::max<int64_t>(vis - h.window, 0)) return false;
    int64_t r = rl, el = lo - floorDiv(lo, w.F) * w.F;
    const uint8_t* d = h.data.data() + h.pos(r) * h.rec;
    const uint8_t* nl = h.nulls.data() + h.pos(r) * h.elems;
    for (int64_t q = 0; q < w.W; ++q) {  // q-th oldest element
      const int64_t i = w.newestFirst ? w.W - 1 - q : q;
      const uint8_t isNull = nl[el] != 0;
      uint32_t v;
      memcpy(&v, d + el * 4, 4);
      v = isNull ? 0 : v;
      memcpy(out + i * 4, &v, 4);
      outNull[i] = isNull;
      if (++el == w.F && q + 1 < w.W) {
        el = 0;
        ++r;
        d = h.data.data() + h.pos(r) * h.rec;
        nl = h.nulls.data() + h.pos(r) * h.elems;
      }
    }
    return true;
  }
};

// A SELECT over a fused window: its input record gets only the elements its
// program loads, read from the window's producer as the window would have
// copied them (a NULL one as zeros); the rest of the record is never read.
struct FusedSelectOp {
  Stream& s;
  WindowShape w;
  FusedSelectOp(BlockCtx& ctx, Stream& st) : s(st), w(*st.fusedWindow, ctx.src(*st.fusedWindow, 0)) {}
  Form form(const Stream&) const { return Form::Gather; }
  void pointersRun(const int64_t*, const int*, int, const uint8_t**, const uint8_t**) {}
  void gather(int64_t n, int j, uint8_t* in, uint8_t* inNull) {
    const int64_t visible = w.a->vis[size_t(j)];
    for (int i : s.fusedLoads) windowElement(w, n, i, visible, s.in.elems[size_t(i)], in, inNull);
  }
  void direct(int64_t, int, uint8_t*, uint8_t*) {}
};

// The input elements a program loads, each once, in order.
std::vector<int> loadedElements(const vm::Program& p) {
  std::vector<int> out;
  for (const vm::Instr& i : p.code)
    if (vm::kOps[int(i.op)].family == vm::Family::LOAD) out.push_back(i.a);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Whether the program stores each input element unchanged into the same
// output element (integers only: float stores canonicalise NaN, RATIONAL
// stores normalise), with the same layout on both sides.
bool copiesInput(const Stream& s) {
  if (s.in.elems.size() != s.out.elems.size() || s.program.bytecode.code.size() != 2 * s.out.elems.size()) return false;
  for (size_t e = 0; e < s.out.elems.size(); ++e) {
    const ir::Element &a = s.in.elems[e], &b = s.out.elems[e];
    if (a.type != b.type || a.size != b.size || a.offset != b.offset) return false;
    if (a.type != ir::Type::INTEGER && a.type != ir::Type::UINT && a.type != ir::Type::BYTE &&
        a.type != ir::Type::RATIONAL)
      return false;
    const vm::Instr &ld = s.program.bytecode.code[2 * e], &st = s.program.bytecode.code[2 * e + 1];
    const bool load =
        ld.op == vm::Op::LOAD_I32 || ld.op == vm::Op::LOAD_U32 || ld.op == vm::Op::LOAD_U8 || ld.op == vm::Op::LOAD_RAT;
    const bool store = st.op == vm::Op::STORE_I32 || st.op == vm::Op::STORE_U32 || st.op == vm::Op::STORE_U8 ||
                       st.op == vm::Op::STORE_RAT;
    if (!load || !store || ld.a != int(e) || st.a != int(e)) return false;
  }
  return true;
}

// The window's NULL index entry of record n, from the elements' flags.
void windowBitmap(Stream& s, const WindowShape& w, int64_t n, int j) {
  std::fill(s.bitmap.begin(), s.bitmap.end(), 0);
  for (int64_t i = 0; i < w.W; ++i) {
    bool isNull;
    const ir::Element* se;
    w.element(w.position(n, i), j, isNull, se);
    if (isNull) {
      const int f = s.out.elems[size_t(i)].field;
      s.bitmap[size_t(f / 8)] |= uint8_t(1u << (f % 8));
    }
  }
}

// A fused window: counts its records and writes its NULL index. The number
// of NULL elements in the window slides with it while the elements are
// settled (window.hpp); otherwise it is counted afresh.
void fusedWindowStep(BlockCtx& c, Stream& s) {
  const Block& b = c.block;
  const std::vector<char>& due = b.due[s.tickIndex];
  const WindowShape w(s, c.src(s, 0));
  Stream::Running& r = s.running;
  s.wrote = 0;
  uint64_t present = 0;  // records without a NULL element not yet in the index
  for (int j = 0; j < b.slots; ++j) {
    if (due[size_t(j)] && b.t[size_t(j)] >= s.joinAt) {
      ++s.due;
      const int64_t n = s.due - 1 - s.q->tail;
      if (n >= s.q->origin && n >= s.firstIndex) {
        const int64_t L = w.lo(n), H = w.hi(n);
        auto move = [&r](const uint8_t*, bool isNull, const ir::Element*, int sign) { r.nulls += isNull ? sign : 0; };
        if (!w.slideOne(r, L, H, j, move)) {  // the common case: one element left, one entered
          if (w.settled(L, H, j)) w.slide(r, L, H, j, move);
          else r.valid = false;
        }
        if (r.valid && r.nulls == 0) {
          ++present;
        } else {
          s.files.meta->appendPresent(present);
          present = 0;
          windowBitmap(s, w, n, j);
          s.files.meta->append(s.bitmap);
        }
        s.hist.commit();
        ++s.wrote;
      }
    }
    s.vis[size_t(j)] = s.hist.count;
  }
  s.files.meta->appendPresent(present);
}

}  // namespace

void fusedWindowIndex(Stream& s, const Stream& producer, const int64_t* ns, const int* js, const uint8_t* flags,
                      int k) {
  const WindowShape w(s, producer);
  for (int i = 0; i < k; ++i) {  // records without a NULL element go to the index as one count
    const void* set = memchr(flags + i, 1, size_t(k - i));
    const int next = set ? int(static_cast<const uint8_t*>(set) - flags) : k;
    s.files.meta->appendPresent(uint64_t(next - i));
    if (next == k) break;
    windowBitmap(s, w, ns[next], js[next]);
    s.files.meta->append(s.bitmap);
    i = next;
  }
}

StepFn setUpWindow(Stream& s, const Streams& streams) {
  // Copying needs the producer's elements to be of the window's type already.
  const Stream& a = *streams[size_t(s.srcs[0])];
  bool sameType = !a.out.elems.empty() && !s.in.elems.empty();
  for (auto& e : a.out.elems) sameType = sameType && e.type == s.in.elems[0].type && e.size == s.in.elems[0].size;
  s.identity = sameType && copiesInput(s);
  return &Driver<WindowOp>::step;
}

// The newest record of a fused window as a reader now would see it.
bool fusedNewest(Stream& s, const Streams& streams) {
  if (s.hist.count == 0) return false;
  const WindowShape w(s, *streams[size_t(s.srcs[0])]);
  windowRecord(w, s, s.hist.newest(), w.a->hist.count, s.outRec.data(), s.outNull.data());
  return true;
}

// Fusion is decided here and carried out by the reader (reduce.cpp for a
// reducer, FusedSelectOp for a SELECT).
void fuseWindows(const std::vector<Stream*>& computed, const Streams& streams) {
  for (Stream* r : computed) {
    const ir::Op op = r->q->program.back().op;
    const bool reducer = r->q->program.size() > 1 && (op == ir::Op::STREAM_AVG || op == ir::Op::STREAM_SUM ||
                                                      op == ir::Op::STREAM_MIN || op == ir::Op::STREAM_MAX);
    const bool select = r->q->program.size() == 1;
    if ((!reducer && !select) || r->srcs.size() != 1 || r->fusedWindow) continue;
    Stream& w = *streams[size_t(r->srcs[0])];
    if (w.declared || w.fusedInto || !w.q->isVolatile || w.rules || !w.identity || w.adhoc || r->adhoc) continue;
    if (!w.q->publish.empty()) continue;  // a published window is made record by record
    if (w.q->program.size() < 2 || w.q->program.back().op != ir::Op::STREAM_AGSE) continue;
    if (w.q->interval != r->q->interval || w.q->origin != r->q->origin || w.q->tail != r->q->tail) continue;
    int readers = 0;
    for (Stream* o : computed)
      for (int src : o->srcs) readers += src == w.index;
    if (readers != 1) continue;
    // The reducer folds the producer's elements: they must be of the window's type.
    const Stream& a = *streams[size_t(w.srcs[0])];
    bool same = !a.out.elems.empty();
    for (auto& e : a.out.elems) same = same && e.type == w.out.elems[0].type && e.size == w.out.elems[0].size;
    if (!same) continue;
    // A SELECT gains when it loads few of the window's elements (a whole
    // window copies faster than element by element); its input record must
    // be the window's record.
    std::vector<int> loads;
    if (select) {
      loads = loadedElements(r->program.bytecode);
      if (!r->operandPointers || loads.size() * 2 > w.out.elems.size()) continue;
    }
    w.fusedInto = r;
    w.step = &fusedWindowStep;
    w.running = {};
    r->fusedWindow = &w;
    r->running = {};
    if (select) {
      r->fusedLoads = std::move(loads);
      r->operandPointers = false;  // native code is compiled after this for gathered records
      r->step = &Driver<FusedSelectOp>::step;
    } else {
      r->step = fusedReduceStep(*r);
    }
  }
}

void unfuse(Stream& w, Streams& streams) {
  if (!w.fusedInto) return;
  if (w.chain) dissolve(*w.chain);  // its chain folded it in place
  Stream& r = *w.fusedInto;
  w.fusedInto = nullptr;
  r.fusedWindow = nullptr;
  w.step = &Driver<WindowOp>::step;
  if (r.q->program.size() == 1) {
    r.step = setUpSelect(r, streams);
    r.operandPointers = false;  // its code may be compiled for whole gathered records
    r.fusedLoads.clear();
  } else {
    r.step = setUpReduce(r, streams);
  }
  w.running = {};
  r.running = {};
  // Its ring gets the records a reader may still ask for, from the producer as it is now.
  Stream& a = *streams[size_t(w.srcs[0])];
  const WindowShape shape(w, a);
  const int64_t visible = a.hist.count;
  for (int64_t n = std::max(w.hist.base, w.hist.newest() - w.hist.window + 1); n <= w.hist.newest(); ++n) {
    const int64_t p = w.hist.pos(n - w.hist.base);
    windowRecord(shape, w, n, visible, w.hist.data.data() + p * w.hist.rec, w.hist.nulls.data() + p * w.hist.elems);
  }
}

}  // namespace engine::ops
