// The history ring of one stream: its newest records, addressed by logical
// index. A ring holds the compiler's demand (`window`, ir::historyRing) plus
// one block of slots, so that a consumer running later in the same block
// still reads exactly what it would have read slot by slot: get() takes the
// record count that consumer could see then (`visible`) and answers as a
// ring of `window` records holding that many would.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace engine {

struct History {
  int rec = 0, elems = 0;
  int64_t window = 1;  // records a reader may go back (the compiler's ring)
  int64_t cap = 1;     // records held: window + one block
  int64_t mask = -1;   // cap - 1 when cap is a power of two, else -1 (modulo)
  int64_t base = 0;    // logical index of the first record ever stored
  int64_t count = 0;   // records stored so far
  std::vector<uint8_t> data, nulls;

  void init(int recordSize, int elemCount, int64_t records, int64_t block, int64_t firstIndex) {
    rec = recordSize;
    elems = elemCount;
    window = std::max<int64_t>(records, 1);
    cap = window + std::max<int64_t>(block, 1);
    // Small rings round up to a power of two (positions by mask); large ones
    // keep their size (positions by modulo) so memory follows the demand.
    if (cap <= (int64_t(1) << 20)) {
      int64_t p = 1;
      while (p < cap) p <<= 1;
      cap = p;
    }
    mask = (cap & (cap - 1)) == 0 ? cap - 1 : -1;
    base = firstIndex;
    data.assign(size_t(cap * rec), 0);
    nulls.assign(size_t(cap * elems), 1);
  }
  int64_t pos(int64_t i) const { return mask >= 0 ? (i & mask) : i % cap; }
  // A larger ring for a reader that goes further back (an ad hoc import):
  // the records held now are kept, at their logical indices. Returns how
  // many are held.
  int64_t grow(int64_t records, int64_t block) {
    const int64_t keep = std::min(count, window);
    History g;
    g.init(rec, elems, records, block, base);
    g.count = count;
    for (int64_t i = count - keep; i < count; ++i) {
      memcpy(g.data.data() + g.pos(i) * rec, data.data() + pos(i) * rec, size_t(rec));
      memcpy(g.nulls.data() + g.pos(i) * elems, nulls.data() + pos(i) * elems, size_t(elems));
    }
    *this = std::move(g);
    return keep;
  }
  // Record n as a reader that saw `visible` records finds it.
  bool get(int64_t n, int64_t visible, const uint8_t*& d, const uint8_t*& nl) const {
    const int64_t i = n - base;
    if (i < 0 || i >= visible || i < visible - window) return false;
    const int64_t p = pos(i);
    d = data.data() + p * rec;
    nl = nulls.data() + p * elems;
    return true;
  }
  bool get(int64_t n, const uint8_t*& d, const uint8_t*& nl) const { return get(n, count, d, nl); }
  // Record n while the ring still holds it (readers see only `window` of them).
  bool held(int64_t n, const uint8_t*& d, const uint8_t*& nl) const {
    const int64_t i = n - base;
    if (i < 0 || i >= count || i < count - cap) return false;
    d = data.data() + pos(i) * rec;
    nl = nulls.data() + pos(i) * elems;
    return true;
  }
  // The slot the next record goes to; fill it, then commit().
  uint8_t* nextData() { return data.data() + pos(count) * rec; }
  uint8_t* nextNulls() { return nulls.data() + pos(count) * elems; }
  // Records that fit from the next slot on before the ring wraps.
  int64_t contiguous() const { return cap - pos(count); }
  void commit(int64_t k = 1) { count += k; }
  int64_t newest() const { return base + count - 1; }
};

}  // namespace engine
