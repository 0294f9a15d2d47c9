// Fold and Slide steps of a chain's function (chain_emit.hpp): a reducer's
// input record from integer accumulators, by the rule of ir/fold_range.hpp
// that the engine's reducer (engine/operators/reduce.cpp) follows too; beyond
// the exact range the code calls the engine's fold itself.
#include <llvm/Support/MathExtras.h>

#include <cstddef>
#include <functional>
#include <limits>

#include "chain_emit.hpp"
#include "ir/fold_range.hpp"

namespace jit {

using llvm::Value;

namespace {

// Whether the step's program reads its one RATIONAL input element only to
// truncate it to an INTEGER (`to_integer(avg)`): then the fraction's value is
// all that matters, not its lowest terms (the input record is scratch, never
// stored), and a mean needs no gcd.
bool truncatesOnly(const ChainStep& s) {
  const auto& c = s.program.code;
  return s.in.elems.size() == 1 && c.size() == 3 && c[0].op == vm::Op::LOAD_RAT && c[0].a == 0 &&
         c[1].op == vm::Op::CVT_RAT_I32 && c[2].op == vm::Op::STORE_I32;
}

// The count of present elements, their sum, smallest, largest, and how to
// emit whether the sum of magnitudes is beyond the exact bound (empty: the
// bound limits the folded value itself, ir::boundsSumOnly).
struct Sums {
  Value *present, *sum, *lo, *hi;
  std::function<Value*()> over;
};

// Emitters of whether the fold is beyond its exact range (ir/fold_range.hpp):
// the folded value, or the sum of magnitudes, beyond the bound.
Value* valueBeyond(llvm::IRBuilder<>& B, Value* v, int64_t bound) {
  return B.CreateICmpUGT(B.CreateAdd(v, B.getInt64(uint64_t(bound))), B.getInt64(uint64_t(2 * bound)));
}
std::function<Value*()> magnitudesBeyond(llvm::IRBuilder<>& B, Value* sumAbs, int64_t bound) {
  return [&B, sumAbs, bound] { return B.CreateICmpSGT(sumAbs, B.getInt64(uint64_t(bound))); };
}

// Element i of a record of INTEGER elements: its value, whether NULL.
std::pair<Value*, Value*> elementAt(llvm::IRBuilder<>& B, Value* d, Value* nl, Value* i) {
  Value* v = B.CreateAlignedLoad(B.getInt32Ty(), B.CreateGEP(B.getInt8Ty(), d, B.CreateShl(i, 2)), llvm::MaybeAlign(1));
  Value* isNull = B.CreateICmpNE(B.CreateLoad(B.getInt8Ty(), B.CreateGEP(B.getInt8Ty(), nl, i)), B.getInt8(0));
  return {v, isNull};
}

// Up to 64 elements, straight-line, as vectors of a power of two lanes (the
// missing ones NULL) and their reductions.
Sums vectorSums(ChainEmitter& e, ir::Type type, int64_t ne, int64_t bound, Value* d, Value* nl) {
  llvm::IRBuilder<>& B = e.B;
  const unsigned P = unsigned(llvm::PowerOf2Ceil(uint64_t(ne)));
  auto count = llvm::ElementCount::getFixed(P);
  Value* v = llvm::ConstantVector::getSplat(count, B.getInt32(0));
  Value* none = llvm::ConstantVector::getSplat(count, B.getTrue());
  for (int64_t k = 0; k < ne; ++k) {
    auto [x, isNull] = elementAt(B, d, nl, B.getInt64(uint64_t(k)));
    v = B.CreateInsertElement(v, x, uint64_t(k));
    none = B.CreateInsertElement(none, isNull, uint64_t(k));
  }
  auto* v64t = llvm::FixedVectorType::get(e.i64, P);
  Value* wide = B.CreateSExt(v, v64t);
  Value* zero = llvm::Constant::getNullValue(v64t);
  Value* x = B.CreateSelect(none, zero, wide);
  auto splat = [&](int64_t c) { return llvm::ConstantVector::getSplat(count, B.getInt64(uint64_t(c))); };
  Sums r;
  r.present = B.CreateAddReduce(B.CreateZExt(B.CreateNot(none), v64t));
  r.lo = B.CreateIntMinReduce(B.CreateSelect(none, splat(std::numeric_limits<int64_t>::max()), wide), true);
  r.hi = B.CreateIntMaxReduce(B.CreateSelect(none, splat(std::numeric_limits<int64_t>::min()), wide), true);
  if (ir::boundsSumOnly(type)) {  // the 64-bit sum, and whether it is within the bound
    r.sum = B.CreateAddReduce(x);
    return r;  // `over` is the folded value's (finish)
  }
  // The sum of magnitudes is at most ne times the largest, found in 32-bit
  // lanes (INT_MIN's magnitude is 2^31 unsigned): the exact sum, four times
  // the work in 64-bit lanes, only when that bound is over.
  Value* zero32 = llvm::Constant::getNullValue(v->getType());
  Value* v32 = B.CreateSelect(none, zero32, v);
  Value* mag32 = B.CreateSelect(B.CreateICmpSLT(v32, zero32), B.CreateNeg(v32), v32);
  Value* most = B.CreateZExt(B.CreateIntMaxReduce(mag32, false), e.i64);
  r.over = [&e, most, ne, x, zero, bound] {
    llvm::IRBuilder<>& B = e.B;
    Value* loose = B.CreateICmpUGT(B.CreateMul(most, B.getInt64(uint64_t(ne))), B.getInt64(uint64_t(bound)));
    llvm::BasicBlock* from = B.GetInsertBlock();
    auto *exact = e.block("fold.exact"), *checked = e.block("fold.checked");
    B.CreateCondBr(loose, exact, checked);
    B.SetInsertPoint(exact);
    Value* sa = B.CreateAddReduce(B.CreateSelect(B.CreateICmpSLT(x, zero), B.CreateNeg(x), x));
    Value* beyond = B.CreateICmpSGT(sa, B.getInt64(uint64_t(bound)));
    llvm::BasicBlock* exactEnd = B.GetInsertBlock();
    B.CreateBr(checked);
    B.SetInsertPoint(checked);
    llvm::PHINode* o = B.CreatePHI(B.getInt1Ty(), 2);
    o->addIncoming(B.getFalse(), from);
    o->addIncoming(beyond, exactEnd);
    return static_cast<Value*>(o);
  };
  // Where the result is exact (its sum of magnitudes within 2^31) the wrapped
  // 32-bit sum is the sum: twice the lanes a vector.
  if (bound <= std::numeric_limits<int32_t>::max()) r.sum = B.CreateSExt(B.CreateAddReduce(v32), e.i64);
  else r.sum = B.CreateAddReduce(x);
  return r;
}

// More elements: a loop over them with scalar accumulators.
Sums loopSums(ChainEmitter& e, ir::Type type, int64_t ne, int64_t bound, Value* d, Value* nl) {
  llvm::IRBuilder<>& B = e.B;
  Value* i64max = B.getInt64(uint64_t(std::numeric_limits<int64_t>::max()));
  Value* i64min = B.getInt64(uint64_t(std::numeric_limits<int64_t>::min()));
  auto* pr = e.slot(e.i64, 1, "present");
  auto* su = e.slot(e.i64, 1, "sum");
  auto* sa = e.slot(e.i64, 1, "sumabs");
  auto* l = e.slot(e.i64, 1, "lo");
  auto* h = e.slot(e.i64, 1, "hi");
  auto* at = e.slot(e.i64, 1, "e");
  for (auto* a : {pr, su, sa, at}) B.CreateStore(B.getInt64(0), a);
  B.CreateStore(i64max, l);
  B.CreateStore(i64min, h);
  auto *head = e.block("fold"), *body = e.block("fold.elem"), *done = e.block("fold.done");
  B.CreateBr(head);
  B.SetInsertPoint(head);
  Value* k = e.load64(at);
  B.CreateCondBr(B.CreateICmpSLT(k, B.getInt64(uint64_t(ne))), body, done);
  B.SetInsertPoint(body);
  auto [x32, isNull] = elementAt(B, d, nl, k);
  Value* v = B.CreateSExt(x32, e.i64);
  Value* x = B.CreateSelect(isNull, B.getInt64(0), v);
  B.CreateStore(B.CreateAdd(e.load64(pr), B.CreateZExt(B.CreateNot(isNull), e.i64)), pr);
  B.CreateStore(B.CreateAdd(e.load64(su), x), su);
  B.CreateStore(B.CreateAdd(e.load64(sa), B.CreateSelect(B.CreateICmpSLT(x, B.getInt64(0)), B.CreateNeg(x), x)), sa);
  Value* lv = e.load64(l);
  Value* hv = e.load64(h);
  B.CreateStore(B.CreateSelect(isNull, lv, B.CreateSelect(B.CreateICmpSLT(v, lv), v, lv)), l);
  B.CreateStore(B.CreateSelect(isNull, hv, B.CreateSelect(B.CreateICmpSGT(v, hv), v, hv)), h);
  B.CreateStore(B.CreateAdd(k, B.getInt64(1)), at);
  B.CreateBr(head);
  B.SetInsertPoint(done);
  Sums r{e.load64(pr), e.load64(su), e.load64(l), e.load64(h), {}};
  if (!ir::boundsSumOnly(type)) r.over = magnitudesBeyond(B, e.load64(sa), bound);
  return r;
}

// The input record on the usual path: the folded value r (sum, smallest or
// largest) in the input element's type, then the program (`store`).
template <class Store>
void storeFolded(ChainEmitter& e, const ChainStep& s, Value* r, Value* n, int64_t full, Store&& store) {
  llvm::IRBuilder<>& B = e.B;
  if (s.in.elems[0].type != ir::Type::RATIONAL) {
    llvm::Type* ft = s.in.elems[0].type == ir::Type::FLOAT ? B.getFloatTy() : B.getDoubleTy();
    Value* f = B.CreateSIToFP(r, ft);
    if (s.fold == ir::Op::STREAM_AVG) f = B.CreateFDiv(f, B.CreateSIToFP(n, ft));
    store(f, nullptr);
    return;
  }
  Value* num = B.CreateTrunc(r, B.getInt32Ty());
  if (s.fold == ir::Op::STREAM_AVG && truncatesOnly(s)) {
    // sum / present as it is: only its value is read. A full window's count
    // is a constant: its division becomes a multiplication.
    auto *whole = e.block("fold.whole"), *part = e.block("fold.part");
    B.CreateCondBr(B.CreateICmpEQ(n, B.getInt64(uint64_t(full))), whole, part);
    B.SetInsertPoint(whole);
    store(num, B.getInt32(uint32_t(full)));
    B.SetInsertPoint(part);
    store(num, B.CreateTrunc(n, B.getInt32Ty()));
  } else if (s.fold == ir::Op::STREAM_AVG) {  // sum / present, reduced as the engine's fold reduces
    auto mean = e.M.getOrInsertFunction("rdb_rat_mean", llvm::FunctionType::get(e.i64, {e.i64, e.i64}, false));
    Value* q = B.CreateCall(mean, {r, n});
    store(B.CreateTrunc(q, B.getInt32Ty()), B.CreateTrunc(B.CreateLShr(q, 32), B.getInt32Ty()));
  } else {
    store(num, B.getInt32(1));
  }
}

// A reducer's input record from its integer accumulators, as the engine's
// reducer makes it: NULL without a present element, `slowPath` beyond the
// type's exact range. The step's program follows on each path: on the usual
// one it sees the record's values (e.g. a denominator of 1, or of `full`,
// the most elements it folds, when all are present).
template <class Slow>
void finish(ChainEmitter& e, size_t m, const Frame& fr, const Sums& sums, int64_t full, Slow&& slowPath) {
  llvm::IRBuilder<>& B = e.B;
  const ChainStep& s = e.steps[m];
  Value *in = e.members[m].foldIn, *inNull = e.members[m].foldNull;
  auto *none = e.block("fold.null"), *some = e.block("fold.some"), *slow = e.block("fold.slow"),
       *fast = e.block("fold.fast"), *end = e.block("fold.end");
  B.CreateCondBr(B.CreateICmpEQ(sums.present, B.getInt64(0)), none, some);
  B.SetInsertPoint(none);  // no present element: NULL (zero bytes)
  B.CreateMemSet(in, B.getInt8(0), uint64_t(s.in.elems[0].size), llvm::MaybeAlign(1));
  B.CreateStore(B.getInt8(1), inNull);
  e.programOnFold(m, fr);
  B.CreateBr(end);
  B.SetInsertPoint(some);
  B.CreateStore(B.getInt8(0), inNull);
  Value* r = s.fold == ir::Op::STREAM_MIN ? sums.lo : s.fold == ir::Op::STREAM_MAX ? sums.hi : sums.sum;
  const int64_t bound = ir::exactSumBound(s.in.elems[0].type);
  B.CreateCondBr(sums.over ? sums.over() : valueBeyond(B, r, bound), slow, fast);
  B.SetInsertPoint(slow);
  slowPath();
  e.programOnFold(m, fr);
  B.CreateBr(end);
  B.SetInsertPoint(fast);
  storeFolded(e, s, r, sums.present, full, [&](Value* first, Value* second) {
    B.CreateAlignedStore(first, in, llvm::MaybeAlign(1));
    if (second) B.CreateAlignedStore(second, B.CreateConstGEP1_32(B.getInt8Ty(), in, 4), llvm::MaybeAlign(1));
    e.programOnFold(m, fr);
    B.CreateBr(end);
  });
  B.SetInsertPoint(end);
}

}  // namespace

// The fold of the operand record's INTEGER elements into the input record.
void ChainEmitter::emitFold(size_t m, const Frame& fr) {
  const ChainStep& s = steps[m];
  const int64_t ne = s.foldElems, bound = ir::exactSumBound(s.in.elems[0].type);
  Value *d = fr.opData[0], *nl = fr.opNull[0];
  const ir::Type t = s.in.elems[0].type;
  const Sums sums = ne <= 64 ? vectorSums(*this, t, ne, bound, d, nl) : loopSums(*this, t, ne, bound, d, nl);
  finish(*this, m, fr, sums, ne, [&] {
    // Partial sums beyond the type's exact range: the engine's fold in that type.
    auto* ty = llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt32Ty(), ptr, ptr, i64, ptr}, false);
    B.CreateCall(ty, slowFold,
                 {B.getInt32(uint32_t(s.fold)), B.getInt32(uint32_t(s.in.elems[0].type)), d, nl,
                  B.getInt64(uint64_t(ne)), members[m].foldIn});
  });
}

// A fused window's .sumc/.avg: the element entering is added, the one leaving
// taken away (sum, sum of magnitudes, present count).
void ChainEmitter::emitSlide(size_t m, Value* i, const Frame& fr) {
  const ChainStep& s = steps[m];
  const MemberCode& mc = members[m];
  auto [vi, ni] = element(fr, 0);
  auto [vo, no] = element(fr, 1);
  Value* xi = B.CreateSelect(ni, B.getInt64(0), B.CreateSExt(vi, i64));
  Value* xo = B.CreateSelect(no, B.getInt64(0), B.CreateSExt(vo, i64));
  auto mag = [&](Value* x) { return B.CreateSelect(B.CreateICmpSLT(x, B.getInt64(0)), B.CreateNeg(x), x); };
  Value* sum = B.CreateSub(B.CreateAdd(load64(mc.sum), xi), xo);
  Value* sumAbs = B.CreateSub(B.CreateAdd(load64(mc.sumAbs), mag(xi)), mag(xo));
  Value* present = B.CreateSub(B.CreateAdd(load64(mc.present), B.CreateZExt(B.CreateNot(ni), i64)),
                               B.CreateZExt(B.CreateNot(no), i64));
  B.CreateStore(sum, mc.sum);
  B.CreateStore(sumAbs, mc.sumAbs);
  B.CreateStore(present, mc.present);
  const ir::Type t = s.in.elems[0].type;
  Sums sums{present, sum, sum, sum, {}};
  if (!ir::boundsSumOnly(t)) sums.over = magnitudesBeyond(B, sumAbs, ir::exactSumBound(t));
  // The window before it (SlideNulls) holds the most elements it folds.
  finish(*this, m, fr, sums, int64_t(steps[m - 1].out.elems.size()), [&] {
    auto* ty = llvm::FunctionType::get(B.getVoidTy(), {ptr, B.getInt32Ty(), i64, ptr}, false);
    B.CreateCall(ty, slowSlide, {ctx, B.getInt32(uint32_t(m)), i, mc.foldIn});
  });
}

}  // namespace jit
