// A stream operator's compile-time half, one file an operator
// (ir/operators/<name>.cpp) and one row of the table in operators.cpp: its
// interval, logical origin, tail, the history it demands of its operands, its
// checks, the schema `*` expands to and the input record its field programs
// read. The passes ask the operator through
// streamOperator() instead of switching on the token. The run-time half of
// the same operator is engine/operators/<name>.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/ir.hpp"

namespace ir::passes {
class FlatIndex;
}

namespace ir::ops {

// A callable passed down without owning it (a lambda of the calling pass).
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F>
  requires(!std::is_same_v<std::decay_t<F>, FnRef>) FnRef(F&& f)  // f must outlive the call it is passed to
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, A... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(a...); }) {}
  R operator()(A... a) const { return call_(obj_, a...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

// What the rules read of one stream `q` = s1 op s2 (s2: + and # only).
struct Site {
  const Query& q;             // the stream; q.interval is 0 while intervals resolve
  const Token& op;            // the operator token, its argument in op.v
  const Query& s1;            // the first stream operand
  const Query* s2 = nullptr;  // the second, for the binary operators
  FnRef<int()> width1;        // flat width of s1, computed when asked
  const Rational& argument() const { return std::get<Rational>(q.program[1].v); }  // & and %: the rational
};

// Interval resolution reads operand intervals that may be unresolved (0).
struct IntervalSite {
  const Query& q;
  const Token& op;
  Rational d1;           // s1's interval (0 = unresolved: the result is 0 unless the operator knows better)
  FnRef<Rational()> d2;  // s2's interval (0 = unresolved), asked by + and # only
  FnRef<int()> width1;   // flat width of s1
};

// The origin and tail sweeps: the operands' values so far.
struct SweepSite {
  Site at;
  int64_t v1 = 0, v2 = 0;  // s1's and s2's origin (or tail)
};

// History a stream demands of an operand: `records` of `stream`.
using DemandFn = FnRef<void(const Query& stream, int64_t records)>;

struct StreamOperator {
  Op op;
  bool binary;  // two stream operands (+ #)
  Rational (*interval)(const IntervalSite&);
  int64_t (*origin)(const SweepSite&);
  int64_t (*tail)(const SweepSite&);
  void (*demand)(const Site&, DemandFn);
  void (*check)(const Site&, passes::FlatIndex&);  // CompileError when the operands do not fit the operator
  int64_t (*outputWidth)(const Site&, FnRef<int64_t(const Query&)> widthOf);  // of the schema `*` expands to
  std::vector<Field> (*schema)(const Site&, passes::FlatIndex&);              // that schema
  // The input record the field programs read (PUSH_ID k): its flat width and
  // slot i < width. Here s2 may be null (a name not resolved yet): the record
  // is then s1's alone.
  int64_t (*inputWidth)(const Site&, passes::FlatIndex&);
  Field (*inputSlot)(const Site&, passes::FlatIndex&, int i);
  bool uniformInput;  // every input slot has one shape (windows, reducers)
};

// The operator of a FROM program's last token; nullptr for a token that is none.
const StreamOperator* streamOperator(Op op);

// A stream's operator and operands, looked up by name (RefError when one is
// missing). `so` is nullptr for a copy of its one operand or a token that is
// no operator.
struct Operands {
  const StreamOperator* so;
  const Query& s1;
  const Query* s2;  // binary operators only
};
Operands operandsOf(const Plan& p, const Query& q);

// Shared by the index maps of the origin rules: the smallest n >= 0 with
// m(n) >= T for a monotone m (CompileError when it lies beyond 2^40).
int64_t firstIndex(FnRef<int64_t(int64_t)> m, int64_t T, const Query& q);

// The pieces of the operators that copy s1's elements (& % - >), and of
// those with nothing to check.
std::vector<Field> copiedSchema(const Site& s, passes::FlatIndex&);  // s1's flat fields, each reading s1[i]
int64_t copiedOutputWidth(const Site& s, FnRef<int64_t(const Query&)> widthOf);
void noCheck(const Site&, passes::FlatIndex&);

// The input record of & % - >: s1's flat elements.
int64_t copiedInputWidth(const Site& s, passes::FlatIndex& flat);
Field copiedInputSlot(const Site& s, passes::FlatIndex& flat, int i);

// The table rows, one an operator file.
extern const StreamOperator kAdd, kHash, kDehashDiv, kDehashMod, kSubtract, kTimemove, kWindow, kReduceAvg, kReduceMin,
    kReduceMax, kReduceSum;

}  // namespace ir::ops
