// The loop every operator's step shares: walks the block's slots, numbers the
// stream's records, and runs them in runs of up to kRun records that lie
// contiguously in the stream's history ring. The operator (a template
// parameter, so nothing is dispatched per record) supplies the record's
// inputs in one of three forms:
//   pointersRun(...)      the operands' records in place (program reads them)
//   gather(n, j, in, nl)   a scratch input record it fills
//   direct(n, j, out, nl)  the output record itself (a window that copies)
// After the program, each record goes to rules, the NULL index and the store.
#pragma once

#include <cstring>

#include "engine/stream.hpp"
#include "ir/values.hpp"

namespace engine::ops {

constexpr int kRun = 256;

enum class Form { Pointers, Gather, Direct };

// Where record n of producer p lies for a reader in slot j; an absent record
// reads as zeros with every flag NULL.
inline void recordAt(const Stream& reader, const Stream& p, int64_t n, int j, const uint8_t*& d, const uint8_t*& nl) {
  if (!p.hist.get(n, p.vis[size_t(j)], d, nl)) {
    d = reader.zeroRec.data();
    nl = reader.nullFlags.data();
  }
}

// Copies record idx of operand k into the input record at its place,
// converting element types where they differ.
void copyOperand(const Stream& s, const Stream& src, int k, int64_t idx, int j, uint8_t* in, uint8_t* inNull);

// The NULL index entry of one output record with a NULL element.
inline void appendNullBits(Stream& s, const uint8_t* nl) {
  std::fill(s.bitmap.begin(), s.bitmap.end(), 0);
  for (size_t e = 0; e < s.out.elems.size(); ++e)
    if (nl[e]) {
      const int f = s.out.elems[e].field;
      s.bitmap[size_t(f / 8)] |= uint8_t(1u << (f % 8));
    }
  s.files.meta->append(s.bitmap);
}

// The index entries of the records a store on disk wrote since it held
// `durableBefore`, in the stream's own step (on its pipeline's thread) rather
// than after the block. A store in memory's index goes with the scheduler's
// (as a VOLATILE stream's does).
inline void flushIndex(Stream& s, uint64_t durableBefore) {
  if (!s.files.store || s.files.store->inMemory() || !s.error.empty() || s.files.store->durable() == durableBefore)
    return;
  try {
    s.files.meta->flush(s.files.store->durable());
  } catch (const std::exception& e) {
    s.error = e.what();
  }
}

// Rules, NULL index and store for the records of one run, in order (runs of
// records without NULLs go to the index at once).
inline void emitRun(Stream& s, const int64_t* ns, int k, const uint8_t* out, const uint8_t* outNull) {
  const int rec = s.out.recordSize;
  const size_t ne = s.out.elems.size();
  if (!s.rules && (ne == 0 || !memchr(outNull, 1, size_t(k) * ne))) {  // nothing NULL in the run
    s.files.meta->appendPresent(uint64_t(k));
    if (s.files.store) s.files.store->appendMany(out, size_t(k), size_t(rec));
    return;
  }
  uint64_t present = 0;  // records without NULL not yet in the index
  for (int i = 0; i < k; ++i) {
    const uint8_t* r = out + int64_t(i) * rec;
    const uint8_t* nl = outNull + i * ne;
    if (s.rules) {
      const History& h = s.hist;
      const int64_t seen = ns[i] - h.base + 1;  // the rule sees the stream as it was after record n
      const int64_t from = s.heldFrom;          // a chain member not materialised held no earlier ones
      s.rules->onRecord(ns[i], r, nl, [&h, seen, from](int64_t x, const uint8_t*& d) {
        const uint8_t* f;
        return x >= from && h.get(x, seen, d, f);
      });
    }
    if (ne == 0 || !memchr(nl, 1, ne)) {
      ++present;
    } else {
      s.files.meta->appendPresent(present);
      present = 0;
      appendNullBits(s, nl);
    }
  }
  s.files.meta->appendPresent(present);
  if (s.files.store) s.files.store->appendMany(out, size_t(k), size_t(rec));
}

template <class Op>
struct Driver {
  // Runs the program over records [0, k) whose inputs are ready.
  static void runProgram(Stream& s, Op& op, const int64_t* ns, const int* js, int k, uint8_t* out, uint8_t* outNull) {
    const int rec = s.out.recordSize;
    const size_t ne = s.out.elems.size();
    if (op.form(s) == Form::Direct) {
      for (int i = 0; i < k; ++i) op.direct(ns[i], js[i], out + int64_t(i) * rec, outNull + i * ne);
      return;
    }
    const size_t inRec = size_t(std::max(s.in.recordSize, 1)), inNe = std::max<size_t>(s.in.elems.size(), 1);
    const uint8_t* d[kRun * 2];  // at most two operands a record
    const uint8_t* nl[kRun * 2];
    if (op.form(s) == Form::Pointers) {  // operands read in place, by native code or the VM
      op.pointersRun(ns, js, k, d, nl);
      if (!s.program.run(s.in, s.out, d, nl, out, outNull, k, s.slotBase)) s.error = s.program.error();
      return;
    }
    for (int i = 0; i < k; ++i) {
      uint8_t* in = s.inRec.data() + i * inRec;
      uint8_t* inNull = s.inNull.data() + i * inNe;
      op.gather(ns[i], js[i], in, inNull);
      d[i] = in;
      nl[i] = inNull;
    }
    if (!s.program.run(s.in, s.out, d, nl, out, outNull, k)) s.error = s.program.error();
  }

  static void step(BlockCtx& c, Stream& s) {
    Op op(c, s);
    const Block& b = c.block;
    const std::vector<char>& due = b.due[s.tickIndex];
    const uint64_t roundedBefore = ir::val::ratRounded();
    const uint64_t durableBefore = s.files.store ? s.files.store->durable() : 0;
    int64_t ns[kRun];
    int js[kRun];
    int k = 0;
    s.wrote = 0;
    // After a failure (s.error) nothing more is written; the engine stops after this block.
    auto flush = [&] {
      if (!s.error.empty()) k = 0;
      if (k == 0) return;
      uint8_t* out = s.hist.nextData();
      uint8_t* outNull = s.hist.nextNulls();
      runProgram(s, op, ns, js, k, out, outNull);
      s.hist.commit(k);
      try {
        emitRun(s, ns, k, out, outNull);
      } catch (const std::exception& e) {
        s.error = e.what();
      }
      k = 0;
    };
    int limit = int(std::min<int64_t>(s.runCap, s.hist.contiguous()));
    const int64_t origin = std::max<int64_t>(s.q->origin, s.firstIndex), tail = s.q->tail;
    const bool joined = b.t[0] >= s.joinAt;  // an ad hoc stream joins at a slot boundary
    int j = 0;
    if (b.allDue && joined && s.due - tail >= origin) {
      // Every slot of the block is due and writes a record: number them in runs.
      while (j < b.slots && s.error.empty()) {
        const int take = std::min(limit - k, b.slots - j);
        const int64_t n0 = s.due - tail, c0 = s.hist.count + k;
        for (int i = 0; i < take; ++i) {
          ns[k + i] = n0 + i;
          js[k + i] = j + i;
          s.vis[size_t(j + i)] = c0 + i + 1;
        }
        s.due += take;
        k += take;
        j += take;
        if (k == limit) {
          s.wrote += k;
          flush();
          limit = int(std::min<int64_t>(s.runCap, s.hist.contiguous()));
        }
      }
      if (j == b.slots && s.error.empty()) s.visStepAt = b.serial;  // a record every slot
    }
    for (; j < b.slots && s.error.empty(); ++j) {
      if (due[size_t(j)] && (joined || b.t[size_t(j)] >= s.joinAt)) {
        const int64_t n = s.due++ - tail;
        if (n >= origin) {  // else a silent slot: no record exists yet
          ns[k] = n;
          js[k] = j;
          ++k;
        }
      }
      s.vis[size_t(j)] = s.hist.count + k;
      if (k == limit) {
        s.wrote += k;
        flush();
        limit = int(std::min<int64_t>(s.runCap, s.hist.contiguous()));
      }
    }
    s.wrote += k;
    flush();
    flushIndex(s, durableBefore);
    for (; j < b.slots; ++j) s.vis[size_t(j)] = s.hist.count;  // stopped by a failure: nothing more to read
    // Roundings are counted per thread; this stream's are those made in its step.
    s.rounded += ir::val::ratRounded() - roundedBefore;
  }
};

}  // namespace engine::ops
