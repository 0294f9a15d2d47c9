// .avg .min .max .sumc: record n folds every present element of record n of
// A into one value of the input slot's type T (RATIONAL for exact types,
// else FLOAT/DOUBLE); no present element gives NULL.
// SUMC and AVG over exact types take the exact sum of the elements, rounded
// once (ir/exact_sum.hpp): integer elements in 64 bits, RATIONAL ones in an
// ExactSum. FLOAT/DOUBLE sums fold left to right, in 64-bit integers while
// that is exact in T (the bytes of the T fold).
// A fused window (window.cpp) is folded from its producer's elements; its
// sum slides with the window while its elements are settled.
#include <limits>

#include "engine/convert.hpp"
#include "engine/operators/operators.hpp"
#include "engine/operators/window.hpp"
#include "ir/exact_sum.hpp"
#include "ir/fold_range.hpp"

namespace engine::ops {

namespace {

using ir::val::Rat;

inline bool foldLess(Rat a, Rat b) { return ir::val::ratCmp(a, b) < 0; }
template <class T>
T foldAdd(T a, T b) {
  return a + b;
}
template <class T>
bool foldLess(T a, T b) {
  return a < b;
}
template <class T>
T foldMean(T sum, int64_t n) {
  return sum / T(n);
}

// Largest sum of magnitudes for which every integer partial sum is exact in T.
template <class T>
constexpr int64_t exactBound() {
  if constexpr (std::is_same_v<T, Rat>) return ir::exactSumBound(ir::Type::RATIONAL);
  else if constexpr (std::is_same_v<T, float>) return ir::exactSumBound(ir::Type::FLOAT);
  else return ir::exactSumBound(ir::Type::DOUBLE);
}
template <class T>
T fromInt(int64_t v) {
  if constexpr (std::is_same_v<T, Rat>) return Rat{int32_t(v), 1};
  else return T(v);
}

inline bool integral(ir::Type t) { return t == ir::Type::BYTE || t == ir::Type::INTEGER || t == ir::Type::UINT; }
inline int64_t intAt(const uint8_t* p, ir::Type t) {
  if (t == ir::Type::BYTE) return *p;
  if (t == ir::Type::INTEGER) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

template <class T>
void put(uint8_t* out, T v) {
  memcpy(out, &v, sizeof v);
}

// Element i of a record of INTEGER elements end to end, as the folds read elements.
inline auto integerElems(const uint8_t* d, const uint8_t* nl) {
  static const ir::Element kInteger{ir::Type::INTEGER, 0, 4, 0};
  return [d, nl](int64_t i, bool& isNull, const ir::Element*& se) {
    se = &kInteger;
    isNull = nl[i] != 0;
    return d + 4 * i;
  };
}

// Integer accumulators of one fold.
struct IntFold {
  int64_t sum = 0, sumAbs = 0, present = 0, lo = 0, hi = 0;
  void add(int64_t v) {
    if (present++ == 0) lo = hi = v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    sumAbs += v < 0 ? -v : v;
  }
};

// The result of an exact integer fold: RATIONAL rounds the exact sum once;
// false when FLOAT/DOUBLE could not have held every partial sum (the caller
// folds in T instead).
template <class T>
bool intResult(ir::Op op, const IntFold& f, uint8_t* out) {
  if constexpr (std::is_same_v<T, Rat>) {
    switch (op) {
      case ir::Op::STREAM_MIN: put(out, ir::val::ratFromInt(f.lo)); break;
      case ir::Op::STREAM_MAX: put(out, ir::val::ratFromInt(f.hi)); break;
      case ir::Op::STREAM_SUM: put(out, ir::val::ratFromInt(f.sum)); break;
      default:
        put(out, f.sum >= -exactBound<T>() && f.sum <= exactBound<T>() ? ir::val::ratMean(f.sum, f.present)
                                                                       : ir::val::ratFromWide(f.sum, f.present));
        break;
    }
    return true;
  }
  if (f.sumAbs > exactBound<T>()) return false;
  switch (op) {
    case ir::Op::STREAM_MIN: put(out, fromInt<T>(f.lo)); break;
    case ir::Op::STREAM_MAX: put(out, fromInt<T>(f.hi)); break;
    case ir::Op::STREAM_SUM: put(out, fromInt<T>(f.sum)); break;
    default:
      if constexpr (!std::is_same_v<T, Rat>) put(out, foldMean(fromInt<T>(f.sum), f.present));
      break;
  }
  return true;
}

// An element of an exact fold, in (sign +1) or out (-1).
template <class Sum>
void addExact(Sum& s, const uint8_t* v, const ir::Element* se, int sign) {
  auto add = [&](auto x) {
    if constexpr (std::is_same_v<Sum, ir::val::ExactSum>) s.add(x, sign);
    else s.add(x);
  };
  if (integral(se->type)) return add(intAt(v, se->type));
  Rat r;
  if (se->type == ir::Type::RATIONAL) memcpy(&r, v, sizeof r);
  else convertElem(se->type, v, se->size, ir::Type::RATIONAL, reinterpret_cast<uint8_t*>(&r), int(sizeof r));
  add(r);
}

// The sum (avg: the mean) of the elements in GMP's exact rationals: when
// an ExactSum cannot tell the rounded result.
template <class Elem>
Rat gmpFold(bool avg, int64_t count, Elem&& elem) {
  ir::val::ExactFold f;
  for (int64_t i = 0; i < count; ++i) {
    bool isNull;
    const ir::Element* se;
    const uint8_t* v = elem(i, isNull, se);
    if (v && !isNull) addExact(f, v, se, +1);
  }
  return f.result(avg);
}

// Adds elements 0..count-1 to an empty ExactSum (as images when `images`).
template <class Elem>
void addAll(ir::val::ExactSum& s, bool images, int64_t count, Elem&& elem) {
  s.reset(images);
  for (int64_t i = 0; i < count; ++i) {
    bool isNull;
    const ir::Element* se;
    const uint8_t* v = elem(i, isNull, se);
    if (v && !isNull) addExact(s, v, se, +1);
  }
  if (!images && s.needsRebuild()) addAll(s, true, count, elem);
}

// SUMC / AVG over exact elements: their exact sum, rounded once.
template <class Elem>
bool exactFold(ir::Op op, int64_t count, Elem&& elem, uint8_t* out) {
  ir::val::ExactSum s;
  addAll(s, false, count, elem);
  if (s.present() == 0) return false;
  const bool avg = op == ir::Op::STREAM_AVG;
  const std::optional<Rat> r = s.result(avg);
  put(out, r ? *r : gmpFold(avg, count, elem));
  return true;
}

// Folds elements 0..count-1 (elem(i, v, isNull, se)) in T, left to right.
template <class T, class Elem>
bool foldT(ir::Op op, int64_t count, Elem&& elem, ir::Type t, uint8_t* out) {
  if constexpr (std::is_same_v<T, Rat>)
    if (op == ir::Op::STREAM_SUM || op == ir::Op::STREAM_AVG) return exactFold(op, count, elem, out);
  T acc{};
  int64_t present = 0;
  for (int64_t i = 0; i < count; ++i) {
    bool isNull;
    const ir::Element* se;
    const uint8_t* v = elem(i, isNull, se);
    if (!v || isNull) continue;
    // Converted through 8 bytes: the compiler cannot see that the conversion
    // writes only T's (convertElem's branches for wider types).
    uint8_t converted[8];
    convertElem(se->type, v, se->size, t, converted, int(sizeof(T)));
    T x;
    memcpy(&x, converted, sizeof x);
    if (present++ == 0 && (op == ir::Op::STREAM_MIN || op == ir::Op::STREAM_MAX)) acc = x;
    else if (op == ir::Op::STREAM_MIN) acc = foldLess(x, acc) ? x : acc;
    else if (op == ir::Op::STREAM_MAX) acc = foldLess(acc, x) ? x : acc;
    else if constexpr (!std::is_same_v<T, Rat>) acc = foldAdd(acc, x);  // RATIONAL sums: exactFold above
  }
  if (present == 0) return false;
  if constexpr (!std::is_same_v<T, Rat>)
    if (op == ir::Op::STREAM_AVG) acc = foldMean(acc, present);
  put(out, acc);
  return true;
}

// The whole fold: in 64-bit integers when the elements are integers and that
// is exact, else in T.
template <class T, class Elem>
bool fold(ir::Op op, bool ints, int64_t count, Elem&& elem, ir::Type t, uint8_t* out) {
  if (ints) {
    IntFold f;
    for (int64_t i = 0; i < count; ++i) {
      bool isNull;
      const ir::Element* se;
      const uint8_t* v = elem(i, isNull, se);
      if (v && !isNull) f.add(intAt(v, se->type));
    }
    if (f.present == 0) return false;
    if (intResult<T>(op, f, out)) return true;
  }
  return foldT<T>(op, count, elem, t, out);
}

// A record of `ne` INTEGER elements end to end (4 bytes each): the integer
// fold in one loop, then T's own fold when the sum leaves T's exact range.
template <class T>
bool foldInt32Record(ir::Op op, ir::Type t, const uint8_t* d, const uint8_t* nl, int64_t ne, uint8_t* in) {
  IntFold f;
  const bool additive = op == ir::Op::STREAM_SUM || op == ir::Op::STREAM_AVG;
  int64_t nulls = 0;
  if (additive)
    for (int64_t i = 0; i < ne; ++i) nulls += nl[i] != 0;
  if (additive && nulls == 0) {
    // No NULL (the common record): loops without a test per element, which vectorise.
    for (int64_t i = 0; i < ne; ++i) {
      int32_t v;
      memcpy(&v, d + 4 * i, 4);
      f.sum += v;
    }
    if constexpr (!std::is_same_v<T, Rat>)  // RATIONAL's bound is on the sum itself (intResult)
      for (int64_t i = 0; i < ne; ++i) {
        int32_t v;
        memcpy(&v, d + 4 * i, 4);
        f.sumAbs += std::abs(int64_t(v));
      }
    f.present = ne;
  } else if (additive) {  // no minimum or maximum to track
    for (int64_t i = 0; i < ne; ++i) {
      int32_t v;
      memcpy(&v, d + 4 * i, 4);
      const int64_t x = nl[i] ? 0 : v;
      f.sum += x;
      f.sumAbs += x < 0 ? -x : x;
      f.present += nl[i] ? 0 : 1;
    }
  } else {
    for (int64_t i = 0; i < ne; ++i) {
      if (nl[i]) continue;
      int32_t v;
      memcpy(&v, d + 4 * i, 4);
      f.add(v);
    }
  }
  if (f.present == 0) return false;
  if (intResult<T>(op, f, in)) return true;
  return foldT<T>(op, ne, integerElems(d, nl), t, in);
}

template <class T, bool Fused>
struct ReduceOp {
  BlockCtx& c;
  Stream& s;
  const Stream& a;  // the record folded (not fused), or the window's producer (fused)
  WindowShape w;
  ir::Op op;
  ir::Type t;
  bool ints = true;
  bool int32s = false;  // INTEGER elements end to end
  ReduceOp(BlockCtx& ctx, Stream& st)
      : c(ctx),
        s(st),
        a(Fused ? ctx.src(*st.fusedWindow, 0) : ctx.src(st, 0)),
        op(st.q->program.back().op),
        t(st.in.elems[0].type) {
    if constexpr (Fused) w = WindowShape(*st.fusedWindow, a);
    for (auto& e : a.out.elems) ints = ints && integral(e.type);
    int32s = !Fused && !a.out.elems.empty();
    for (size_t e = 0; e < a.out.elems.size(); ++e)
      int32s = int32s && a.out.elems[e].type == ir::Type::INTEGER && a.out.elems[e].offset == int(4 * e);
  }
  Form form(const Stream&) const { return Form::Gather; }
  void pointersRun(const int64_t*, const int*, int, const uint8_t**, const uint8_t**) {}
  void direct(int64_t, int, uint8_t*, uint8_t*) {}

  void gather(int64_t n, int j, uint8_t* in, uint8_t* inNull) {
    const ir::Element& de = s.in.elems[0];
    memset(in, 0, size_t(de.size));
    bool some;
    if constexpr (Fused) some = foldWindow(n, j, in);
    else if (int32s) {
      const uint8_t *d, *nl;
      some = a.hist.get(n, a.vis[size_t(j)], d, nl) && foldInt32s(d, nl, in);
    } else {
      const uint8_t *d, *nl;
      some = a.hist.get(n, a.vis[size_t(j)], d, nl) && fold<T>(
                                                           op, ints, int64_t(a.out.elems.size()),
                                                           [&](int64_t i, bool& isNull, const ir::Element*& se) {
                                                             se = &a.out.elems[size_t(i)];
                                                             isNull = nl[i] != 0;
                                                             return d + se->offset;
                                                           },
                                                           t, in);
    }
    if (!some) memset(in, 0, size_t(de.size));
    inNull[0] = some ? 0 : 1;
  }

  bool foldInt32s(const uint8_t* d, const uint8_t* nl, uint8_t* in) {
    return foldInt32Record<T>(op, t, d, nl, int64_t(a.out.elems.size()), in);
  }

  // A window of RATIONAL elements: its ExactSum slides. One that left the
  // common denominator for images is rebuilt from the window's elements,
  // and tries the common denominator again after 8 windows' worth of records.
  template <class Elem, class Whole>
  bool slideExact(uint8_t* in, int j, int64_t L, int64_t H, Elem& elem, Whole& whole) {
    Stream::Running& r = s.running;
    auto move = [&r](const uint8_t* v, bool isNull, const ir::Element* se, int sign) {
      if (v && !isNull) addExact(r.exact, v, se, sign);
    };
    if (!w.slideOne(r, L, H, j, move)) {
      if (!w.settled(L, H, j)) return whole();
      w.slide(r, L, H, j, move);
    }
    if (r.exact.needsRebuild()) {
      addAll(r.exact, true, w.W, elem);
      r.sinceImages = 0;
    } else if (r.exact.imageMode() && ++r.sinceImages >= 8 * w.W) {
      addAll(r.exact, false, w.W, elem);
      r.sinceImages = 0;
    }
    if (r.exact.present() == 0) return false;
    const bool avg = op == ir::Op::STREAM_AVG;
    std::optional<Rat> v = r.exact.result(avg);
    if (!v && r.exact.imageMode()) {
      // The images cannot tell, the window may have a common denominator again.
      addAll(r.exact, false, w.W, elem);
      r.sinceImages = 0;
      v = r.exact.result(avg);
    }
    put(in, v ? *v : gmpFold(avg, w.W, elem));
    return true;
  }

  bool foldWindow(int64_t n, int j, uint8_t* in) {
    auto elem = [&](int64_t i, bool& isNull, const ir::Element*& se) {
      return w.element(w.position(n, i), j, isNull, se);
    };
    Stream::Running& r = s.running;
    const int64_t L = w.lo(n), H = w.hi(n);
    const bool additive = op == ir::Op::STREAM_SUM || op == ir::Op::STREAM_AVG;
    auto whole = [&] {  // no running sum: fold the window's elements
      r.valid = false;
      return fold<T>(op, ints, w.W, elem, t, in);
    };
    if constexpr (std::is_same_v<T, Rat>)
      if (additive && !ints) return slideExact(in, j, L, H, elem, whole);
    auto move = [&r](const uint8_t* v, bool isNull, const ir::Element* se, int sign) {
      if (!v || isNull) return;
      const int64_t x = intAt(v, se->type);
      r.sum += sign * x;
      r.sumAbs += sign * (x < 0 ? -x : x);
      r.present += sign;
    };
    if (!(ints && additive)) return whole();
    if (!w.slideOne(r, L, H, j, move)) {
      if (!w.settled(L, H, j)) return whole();
      w.slide(r, L, H, j, move);
    }
    if (r.present == 0) return false;
    IntFold f;
    f.sum = r.sum;
    f.sumAbs = r.sumAbs;
    f.present = r.present;
    if (intResult<T>(op, f, in)) return true;
    return foldT<T>(op, w.W, elem, t, in);  // partial sums beyond T: the fold itself
  }
};

template <bool Fused>
StepFn reduceStep(const Stream& s) {
  switch (s.in.elems[0].type) {
    case ir::Type::RATIONAL: return &Driver<ReduceOp<Rat, Fused>>::step;
    case ir::Type::FLOAT: return &Driver<ReduceOp<float, Fused>>::step;
    default: return &Driver<ReduceOp<double, Fused>>::step;
  }
}

}  // namespace

StepFn setUpReduce(Stream& s, const Streams&) {
  if (s.in.elems.size() != 1) throw std::runtime_error("a reducer's input is one element");
  return reduceStep<false>(s);
}

StepFn fusedReduceStep(const Stream& s) { return reduceStep<true>(s); }

void foldIntegerRecord(int32_t op, int32_t type, const uint8_t* d, const uint8_t* nl, int64_t count, uint8_t* out) {
  const auto o = ir::Op(op);
  const auto t = ir::Type(type);
  if (t == ir::Type::RATIONAL) foldT<Rat>(o, count, integerElems(d, nl), t, out);
  else if (t == ir::Type::FLOAT) foldT<float>(o, count, integerElems(d, nl), t, out);
  else foldT<double>(o, count, integerElems(d, nl), t, out);
}

bool foldIntegers(int32_t op, int32_t type, const uint8_t* d, const uint8_t* nl, int64_t count, uint8_t* out) {
  const auto o = ir::Op(op);
  const auto t = ir::Type(type);
  if (t == ir::Type::RATIONAL) return foldInt32Record<Rat>(o, t, d, nl, count, out);
  if (t == ir::Type::FLOAT) return foldInt32Record<float>(o, t, d, nl, count, out);
  return foldInt32Record<double>(o, t, d, nl, count, out);
}

bool slidingResult(int32_t op, int32_t type, int64_t sum, int64_t sumAbs, int64_t present, uint8_t* out) {
  IntFold f;
  f.sum = sum, f.sumAbs = sumAbs, f.present = present;
  const auto o = ir::Op(op);
  const auto t = ir::Type(type);
  if (t == ir::Type::RATIONAL) return intResult<Rat>(o, f, out);
  if (t == ir::Type::FLOAT) return intResult<float>(o, f, out);
  return intResult<double>(o, f, out);
}

}  // namespace engine::ops
