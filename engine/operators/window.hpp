// The element positions of a window A@(k, w) (shared by the window operator
// and the reducers that fold a window in place). A's records are laid end to
// end as one sequence of elements (F per record); record n of the window
// holds positions n·k-|w|+1 .. n·k, newest first for w > 0.
#pragma once

#include "engine/operators/driver.hpp"

namespace engine::ops {

// b == 1 (one element a record, the common window) skips the division.
inline int64_t floorDiv(int64_t a, int64_t b) { return b == 1 ? a : a >= 0 ? a / b : -((-a + b - 1) / b); }

struct WindowShape {
  const Stream* a = nullptr;  // the producer
  int64_t k = 1, W = 1, F = 1;
  bool newestFirst = true;
  WindowShape() = default;
  WindowShape(const Stream& window, const Stream& producer) : a(&producer) {
    auto [kk, w] = std::get<std::pair<int32_t, int32_t>>(window.q->program.back().v);
    k = kk;
    W = std::abs(w);
    newestFirst = w > 0;
    F = std::max<int64_t>(int64_t(producer.out.elems.size()), 1);
  }
  int64_t hi(int64_t n) const { return n * k; }
  int64_t lo(int64_t n) const { return n * k - W + 1; }
  // Position of field i of record n.
  int64_t position(int64_t n, int64_t i) const { return newestFirst ? n * k - i : n * k - (W - 1) + i; }
  // Every element of positions [l, h] reads now as it will for as long as it
  // stays in a window: its record is visible, or lies before the producer's
  // first record, and none has left the producer's ring.
  bool settled(int64_t l, int64_t h, int j) const {
    const int64_t vis = a->vis[size_t(j)];
    const int64_t rl = floorDiv(l, F) - a->hist.base, rh = floorDiv(h, F) - a->hist.base;
    if (rh >= vis) return false;
    return std::max<int64_t>(rl, 0) >= vis - a->hist.window;
  }
  // The element at a position: data pointer and NULL flag (nullptr: absent).
  const uint8_t* element(int64_t pos, int j, bool& isNull, const ir::Element*& e) const {
    return elementSeen(pos, a->vis[size_t(j)], isNull, e);
  }
  // An element that left the window, as it was read when it entered: from
  // the ring while the ring still holds its record (`gone` when not).
  const uint8_t* leaving(int64_t pos, bool& isNull, const ir::Element*& e, bool& gone) const {
    const int64_t rec = floorDiv(pos, F), el = pos - rec * F, i = rec - a->hist.base;
    e = &a->out.elems[size_t(el)];
    gone = false;
    if (i < 0) {  // before the producer's first record: never there
      isNull = true;
      return nullptr;
    }
    if (i >= a->hist.count || i < a->hist.count - a->hist.cap) {
      gone = true;
      isNull = true;
      return nullptr;
    }
    const int64_t p = a->hist.pos(i);
    isNull = a->hist.nulls[size_t(p * a->hist.elems + el)] != 0;
    return a->hist.data.data() + p * a->hist.rec + e->offset;
  }
  // Moves a running fold to positions [L, H] (settled): f(v, isNull, e, -1)
  // for each element that leaves, as it was read when it entered, and
  // f(..., +1) for each that enters. It starts afresh when [L, H] does not
  // follow the folded positions or the ring no longer holds what leaves.
  template <class Fn>
  void slide(Stream::Running& r, int64_t L, int64_t H, int j, Fn&& f) const {
    auto restart = [&] {
      r = Stream::Running{};
      r.valid = true;
      r.lo = L;
      r.hi = L - 1;
    };
    if (!r.valid || L < r.lo || H < r.hi || L > r.hi + 1) restart();
    bool lost = false;
    for (int64_t p = r.lo; p < L; ++p) {
      bool isNull;
      const ir::Element* e;
      const uint8_t* v = leaving(p, isNull, e, lost);
      if (lost) break;
      f(v, isNull, e, -1);
    }
    if (lost) restart();
    for (int64_t p = std::max(r.hi + 1, L); p <= H; ++p) {
      bool isNull;
      const ir::Element* e;
      const uint8_t* v = element(p, j, isNull, e);
      f(v, isNull, e, +1);
    }
    r.lo = L;
    r.hi = H;
  }
  // slide() for one-element records moving by one record (the common
  // window), with no division or search: false, with nothing changed, unless
  // [L, H] is settled, follows the folded positions by one, and the leaving
  // record is still in the ring (slide() handles every other case). A
  // window has at least one record, so the leaving one is never the entering one.
  template <class Fn>
  bool slideOne(Stream::Running& r, int64_t L, int64_t H, int j, Fn&& f) const {
    if (F != 1 || k != 1 || !r.valid || r.lo != L - 1 || r.hi != H - 1) return false;
    const History& h = a->hist;
    const int64_t vis = a->vis[size_t(j)], il = L - h.base, ih = H - h.base, io = il - 1;
    if (ih >= vis || std::max<int64_t>(il, 0) < vis - h.window) return false;  // not settled
    if (io >= 0 && (io >= h.count || io < h.count - h.cap)) return false;      // left the ring
    const ir::Element* e = &a->out.elems[0];
    auto at = [&](int64_t i, int sign) {  // i < 0: before the first record, an absent (NULL) element
      if (i < 0) return f(nullptr, true, e, sign);
      const int64_t p = h.pos(i);
      f(h.data.data() + p * h.rec + e->offset, h.nulls[size_t(p * h.elems)] != 0, e, sign);
    };
    at(io, -1);
    at(ih, +1);
    r.lo = L;
    r.hi = H;
    return true;
  }
  // The same for a reader that sees `visible` records of the producer.
  const uint8_t* elementSeen(int64_t pos, int64_t visible, bool& isNull, const ir::Element*& e) const {
    const int64_t rec = floorDiv(pos, F), el = pos - rec * F;
    const uint8_t *d, *nl;
    e = &a->out.elems[size_t(el)];
    if (!a->hist.get(rec, visible, d, nl)) {
      isNull = true;
      return nullptr;
    }
    isNull = nl[el] != 0;
    return d + e->offset;
  }
};

}  // namespace engine::ops
