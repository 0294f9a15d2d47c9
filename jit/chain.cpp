// A chain's function (jit.hpp, ChainStep): the streams of a chain run record
// by record in one loop. Each step writes its record straight into its
// history ring and the next step reads it there (no copy between them), or,
// not materialised, into scratch the optimiser keeps in registers.
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>

#include <llvm/IR/MDBuilder.h>
#include <llvm/Support/MathExtras.h>

#include <array>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

#include "lower.hpp"

namespace jit {

using llvm::IRBuilder;
using llvm::Value;

namespace {

// The largest sum of magnitudes whose integer partial sums are all exact in t
// (the engine's reducer folds in 64-bit integers below it, so does the chain).
int64_t exactBound(ir::Type t) {
  if (t == ir::Type::RATIONAL) return std::numeric_limits<int32_t>::max();
  if (t == ir::Type::FLOAT) return int64_t(1) << 24;
  return int64_t(1) << 53;
}

// Whether the step's program reads its one RATIONAL input element only to
// truncate it to an INTEGER (`to_integer(avg)`): then the fraction's value is
// all that matters, not its lowest terms (the input record is scratch, never
// stored), and a mean needs no gcd.
bool truncatesOnly(const ChainStep& s) {
  const auto& c = s.program.code;
  return s.in.elems.size() == 1 && c.size() == 3 && c[0].op == vm::Op::LOAD_RAT && c[0].a == 0 &&
         c[1].op == vm::Op::CVT_RAT_I32 && c[2].op == vm::Op::STORE_I32;
}

struct ChainLowering {
  llvm::Module& M;
  IRBuilder<>& B;
  llvm::Function* fn;
  llvm::LLVMContext& C;
  llvm::Type* i64;

  ChainLowering(llvm::Module& m, IRBuilder<>& b, llvm::Function* f)
      : M(m), B(b), fn(f), C(m.getContext()), i64(b.getInt64Ty()) {}

  llvm::BasicBlock* block(const char* name) { return llvm::BasicBlock::Create(C, name, fn); }
  llvm::AllocaInst* slot(llvm::Type* t, uint64_t n, const char* name) {
    IRBuilder<> E(&fn->getEntryBlock(), fn->getEntryBlock().begin());
    auto* a = E.CreateAlloca(t, E.getInt64(n), name);
    a->setAlignment(llvm::Align(8));
    return a;
  }
  Value* load64(Value* p) { return B.CreateLoad(i64, p); }

  // The fold of step s over operand record (d, nl) into its input record
  // (in: one element; inNull: its flag), as the engine's reducer folds a
  // record of INTEGER elements.
  template <class Then>
  void fold(const ChainStep& s, Value* d, Value* nl, Value* in, Value* inNull, Value* slowFold, Then&& then) {
    const int64_t ne = s.foldElems;
    auto load = [&](Value* i) {  // element i: its value, whether NULL
      Value* v =
          B.CreateAlignedLoad(B.getInt32Ty(), B.CreateGEP(B.getInt8Ty(), d, B.CreateShl(i, 2)), llvm::MaybeAlign(1));
      Value* isNull = B.CreateICmpNE(B.CreateLoad(B.getInt8Ty(), B.CreateGEP(B.getInt8Ty(), nl, i)), B.getInt8(0));
      return std::pair<Value*, Value*>{v, isNull};
    };
    // The count of present elements, their sum, sum of magnitudes, smallest, largest.
    Value *present, *sum, *lo, *hi;
    const int64_t bound = exactBound(s.in.elems[0].type);
    std::function<Value*()> over;  // emits whether the sum of magnitudes is beyond bound
    if (ne <= 64) {
      // Straight-line, as vectors of a power of two lanes (the missing ones
      // NULL) and their reductions: each element as the step before left it.
      const unsigned P = unsigned(llvm::PowerOf2Ceil(uint64_t(ne)));
      Value* v = llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(P), B.getInt32(0));
      Value* none = llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(P), B.getTrue());
      for (int64_t e = 0; e < ne; ++e) {
        auto [x, isNull] = load(B.getInt64(uint64_t(e)));
        v = B.CreateInsertElement(v, x, uint64_t(e));
        none = B.CreateInsertElement(none, isNull, uint64_t(e));
      }
      auto* v64t = llvm::FixedVectorType::get(i64, P);
      Value* wide = B.CreateSExt(v, v64t);
      Value* zero = llvm::Constant::getNullValue(v64t);
      Value* x = B.CreateSelect(none, zero, wide);
      auto splat = [&](int64_t c) {
        return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(P), B.getInt64(uint64_t(c)));
      };
      present = B.CreateAddReduce(B.CreateZExt(B.CreateNot(none), v64t));
      // The sum of magnitudes is at most ne times the largest, found in
      // 32-bit lanes (INT_MIN's magnitude is 2^31 unsigned): the exact sum,
      // four times the work in 64-bit lanes, only when that bound is over.
      Value* v32 = B.CreateSelect(none, llvm::Constant::getNullValue(v->getType()), v);
      Value* mag32 =
          B.CreateSelect(B.CreateICmpSLT(v32, llvm::Constant::getNullValue(v->getType())), B.CreateNeg(v32), v32);
      Value* most = B.CreateZExt(B.CreateIntMaxReduce(mag32, false), i64);
      over = [this, most, ne, x, zero, bound] {
        Value* loose = B.CreateICmpUGT(B.CreateMul(most, B.getInt64(uint64_t(ne))), B.getInt64(uint64_t(bound)));
        llvm::BasicBlock* from = B.GetInsertBlock();
        auto *exact = block("fold.exact"), *checked = block("fold.checked");
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
      lo = B.CreateIntMinReduce(B.CreateSelect(none, splat(std::numeric_limits<int64_t>::max()), wide), true);
      hi = B.CreateIntMaxReduce(B.CreateSelect(none, splat(std::numeric_limits<int64_t>::min()), wide), true);
      // Where the result is exact (its sum of magnitudes within 2^31) the
      // wrapped 32-bit sum is the sum: twice the lanes a vector.
      if (bound <= std::numeric_limits<int32_t>::max())
        sum = B.CreateSExt(B.CreateAddReduce(B.CreateSelect(none, llvm::Constant::getNullValue(v->getType()), v)), i64);
      else sum = B.CreateAddReduce(x);
    } else {
      auto* pr = slot(i64, 1, "present");
      auto* su = slot(i64, 1, "sum");
      auto* sa = slot(i64, 1, "sumabs");
      auto* l = slot(i64, 1, "lo");
      auto* h = slot(i64, 1, "hi");
      for (auto* a : {pr, su, sa}) B.CreateStore(B.getInt64(0), a);
      B.CreateStore(B.getInt64(uint64_t(std::numeric_limits<int64_t>::max())), l);
      B.CreateStore(B.getInt64(uint64_t(std::numeric_limits<int64_t>::min())), h);
      auto* e = slot(i64, 1, "e");
      B.CreateStore(B.getInt64(0), e);
      auto *head = block("fold"), *body = block("fold.elem"), *done = block("fold.done");
      B.CreateBr(head);
      B.SetInsertPoint(head);
      Value* ev = load64(e);
      B.CreateCondBr(B.CreateICmpSLT(ev, B.getInt64(uint64_t(ne))), body, done);
      B.SetInsertPoint(body);
      auto [x32, isNull] = load(ev);
      Value* v = B.CreateSExt(x32, i64);
      Value* x = B.CreateSelect(isNull, B.getInt64(0), v);
      B.CreateStore(B.CreateAdd(load64(pr), B.CreateZExt(B.CreateNot(isNull), i64)), pr);
      B.CreateStore(B.CreateAdd(load64(su), x), su);
      B.CreateStore(B.CreateAdd(load64(sa), B.CreateSelect(B.CreateICmpSLT(x, B.getInt64(0)), B.CreateNeg(x), x)), sa);
      Value* lv = load64(l);
      Value* hv = load64(h);
      B.CreateStore(B.CreateSelect(isNull, lv, B.CreateSelect(B.CreateICmpSLT(v, lv), v, lv)), l);
      B.CreateStore(B.CreateSelect(isNull, hv, B.CreateSelect(B.CreateICmpSGT(v, hv), v, hv)), h);
      B.CreateStore(B.CreateAdd(ev, B.getInt64(1)), e);
      B.CreateBr(head);
      B.SetInsertPoint(done);
      present = load64(pr), sum = load64(su), lo = load64(l), hi = load64(h);
      Value* sumAbs = load64(sa);
      over = [this, sumAbs, bound] { return B.CreateICmpSGT(sumAbs, B.getInt64(uint64_t(bound))); };
    }
    finish(
        s, present, sum, over, lo, hi, ne, in, inNull,
        [&] {
          // Partial sums beyond the type's exact range: the engine's fold in that type.
          auto ptr = llvm::PointerType::getUnqual(C);
          auto* ty =
              llvm::FunctionType::get(B.getVoidTy(), {B.getInt32Ty(), B.getInt32Ty(), ptr, ptr, i64, ptr}, false);
          B.CreateCall(ty, slowFold,
                       {B.getInt32(uint32_t(s.fold)), B.getInt32(uint32_t(s.in.elems[0].type)), d, nl,
                        B.getInt64(uint64_t(ne)), in});
        },
        then);
  }

  // A reducer's input record from its integer accumulators, as the engine's
  // intResult makes it: NULL without a present element, `slow` beyond the
  // type's exact range (`over` emits that test). `then` (the step's program)
  // follows on each path: on the usual one it sees the record's values (e.g.
  // a denominator of 1, or of `full`, the most elements it folds, when all are
  // present).
  template <class Over, class Slow, class Then>
  void finish(const ChainStep& s, Value* n, Value* sum, Over&& over, Value* lo, Value* hi, int64_t full, Value* in,
              Value* inNull, Slow&& slowPath, Then&& then) {
    const ir::Type t = s.in.elems[0].type;
    auto *none = block("fold.null"), *some = block("fold.some"), *slow = block("fold.slow"), *fast = block("fold.fast"),
         *end = block("fold.end");
    B.CreateCondBr(B.CreateICmpEQ(n, B.getInt64(0)), none, some);
    // No present element: NULL (zero bytes).
    B.SetInsertPoint(none);
    B.CreateMemSet(in, B.getInt8(0), uint64_t(s.in.elems[0].size), llvm::MaybeAlign(1));
    B.CreateStore(B.getInt8(1), inNull);
    then();
    B.CreateBr(end);
    B.SetInsertPoint(some);
    B.CreateStore(B.getInt8(0), inNull);
    B.CreateCondBr(over(), slow, fast);
    B.SetInsertPoint(slow);
    slowPath();
    then();
    B.CreateBr(end);
    B.SetInsertPoint(fast);
    Value* r = s.fold == ir::Op::STREAM_MIN ? lo : s.fold == ir::Op::STREAM_MAX ? hi : sum;
    // The input record, then the program, on to the end.
    auto store = [&](Value* first, Value* second) {
      B.CreateAlignedStore(first, in, llvm::MaybeAlign(1));
      if (second) B.CreateAlignedStore(second, B.CreateConstGEP1_32(B.getInt8Ty(), in, 4), llvm::MaybeAlign(1));
      then();
      B.CreateBr(end);
    };
    if (t == ir::Type::RATIONAL) {
      Value* num = B.CreateTrunc(r, B.getInt32Ty());
      if (s.fold == ir::Op::STREAM_AVG && truncatesOnly(s)) {
        // sum / present as it is: only its value is read. A full window's
        // count is a constant: its division becomes a multiplication.
        auto *whole = block("fold.whole"), *part = block("fold.part");
        B.CreateCondBr(B.CreateICmpEQ(n, B.getInt64(uint64_t(full))), whole, part);
        B.SetInsertPoint(whole);
        store(num, B.getInt32(uint32_t(full)));
        B.SetInsertPoint(part);
        store(num, B.CreateTrunc(n, B.getInt32Ty()));
      } else if (s.fold == ir::Op::STREAM_AVG) {  // sum / present, reduced as the engine's fold reduces
        auto mean = M.getOrInsertFunction("rdb_rat_mean", llvm::FunctionType::get(i64, {i64, i64}, false));
        Value* q = B.CreateCall(mean, {r, n});
        store(B.CreateTrunc(q, B.getInt32Ty()), B.CreateTrunc(B.CreateLShr(q, 32), B.getInt32Ty()));
      } else {
        store(num, B.getInt32(1));
      }
    } else {
      llvm::Type* ft = t == ir::Type::FLOAT ? B.getFloatTy() : B.getDoubleTy();
      Value* f = B.CreateSIToFP(r, ft);
      if (s.fold == ir::Op::STREAM_AVG) f = B.CreateFDiv(f, B.CreateSIToFP(n, ft));
      store(f, nullptr);
    }
    B.SetInsertPoint(end);
  }
};

// The memory a chain's function reads and writes, as distinct objects: each
// member's ring and its flags, the records of streams outside the chain, its
// own scratch. Every access whose pointer leads to one object is told it
// touches none of the others (alias scopes), so LLVM keeps a record a step
// just wrote in registers for the next step and vectorises across elements
// instead of assuming each store may change every ring. Accesses it cannot
// trace (the thread's rounding counter, helpers' calls) stay as they were.
// Sound while the function stores only into members' rings and its own
// scratch, and no two streams' histories share memory: an outside record, or
// a zero record standing in for an absent one, is only ever read here.
struct Objects {
  std::map<Value*, int> base;  // a pointer the code derives addresses from -> its object
  int count = 0;

  // Registers v as a pointer into object `as` (-1: a new object); its object.
  int add(Value* v, int as = -1) { return base[v] = as < 0 ? count++ : as; }
  int of(Value* v) const { return base.at(v); }

  // The object p points into, through offsets and choices between pointers
  // into one object; -1 when unknown.
  int find(Value* p) const {
    for (;;) {
      p = p->stripPointerCasts();
      if (auto it = base.find(p); it != base.end()) return it->second;
      if (auto* g = llvm::dyn_cast<llvm::GEPOperator>(p)) {
        p = g->getPointerOperand();
        continue;
      }
      if (auto* s = llvm::dyn_cast<llvm::SelectInst>(p)) {
        const int a = find(s->getTrueValue());
        return a == find(s->getFalseValue()) ? a : -1;
      }
      return -1;
    }
  }

  void annotate(llvm::Function& fn) const {
    if (count < 2) return;
    llvm::MDBuilder md(fn.getContext());
    llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(fn.getName());
    std::vector<llvm::Metadata*> scopes;
    for (int o = 0; o < count; ++o) scopes.push_back(md.createAnonymousAliasScope(domain));
    auto tag = [&](llvm::Instruction& ins, std::vector<int> objs) {
      std::vector<llvm::Metadata*> own, others;
      for (int o = 0; o < count; ++o)
        (std::find(objs.begin(), objs.end(), o) != objs.end() ? own : others).push_back(scopes[size_t(o)]);
      ins.setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(fn.getContext(), own));
      ins.setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(fn.getContext(), others));
    };
    for (auto& bb : fn)
      for (auto& ins : bb) {
        std::vector<int> objs;
        if (auto* l = llvm::dyn_cast<llvm::LoadInst>(&ins)) objs = {find(l->getPointerOperand())};
        else if (auto* s = llvm::dyn_cast<llvm::StoreInst>(&ins)) objs = {find(s->getPointerOperand())};
        else if (auto* t = llvm::dyn_cast<llvm::MemTransferInst>(&ins))
          objs = {find(t->getDest()), find(t->getSource())};
        else if (auto* f = llvm::dyn_cast<llvm::MemSetInst>(&ins)) objs = {find(f->getDest())};
        else continue;
        if (std::find(objs.begin(), objs.end(), -1) == objs.end()) tag(ins, objs);
      }
  }
};

// The first n lanes of vector v, or v with lanes added (poison) up to n.
Value* resized(IRBuilder<>& B, Value* v, unsigned n) {
  const unsigned have = unsigned(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements());
  std::vector<int> lanes(n);
  for (unsigned e = 0; e < n; ++e) lanes[e] = e < have ? int(e) : -1;
  return B.CreateShuffleVector(v, llvm::PoisonValue::get(v->getType()), lanes);
}

}  // namespace

bool defineChain(llvm::Module& M, IRBuilder<>& B, const std::string& name, const std::vector<ChainStep>& steps,
                 const std::vector<int>& externalMembers, const std::vector<char>& settled, std::string& why) {
  const int externals = int(externalMembers.size());
  using Kind = ChainStep::Kind;
  llvm::LLVMContext& C = M.getContext();
  auto ptr = llvm::PointerType::getUnqual(C);
  auto i64 = B.getInt64Ty();
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(B.getVoidTy(), {ptr, i64}, false),
                                    llvm::Function::ExternalLinkage, name, &M);
  Value *args = fn->getArg(0), *count = fn->getArg(1);
  auto* entry = llvm::BasicBlock::Create(C, "entry", fn);
  B.SetInsertPoint(entry);
  // ChainArgs: twelve pointers and a flag, in the order of its fields.
  auto field = [&](uint64_t f) { return B.CreateLoad(ptr, B.CreateConstGEP1_64(ptr, args, f)); };
  Value *ext = field(0), *extNull = field(1), *outs = field(2), *outNulls = field(3), *rounded = field(4);
  Value *threadRounded = field(5), *slowFold = field(6), *last = field(7), *state = field(8), *ctx = field(9);
  Value *slowSlide = field(10), *strided = field(11);
  Value* clean = B.CreateICmpNE(B.CreateLoad(i64, B.CreateConstGEP1_64(ptr, args, 12)), B.getInt64(0));
  ChainLowering L(M, B, fn);
  // A clean run reads the externals' flags from zeros the optimiser can see:
  // as many as any record of the chain has elements.
  size_t widest = 1;
  for (const ChainStep& s : steps)
    widest = std::max({widest, s.in.elems.size(), s.out.elems.size(), size_t(s.foldElems)});
  auto* zeroType = llvm::ArrayType::get(B.getInt8Ty(), widest);
  auto* noNulls = new llvm::GlobalVariable(M, zeroType, true, llvm::GlobalValue::PrivateLinkage,
                                           llvm::ConstantAggregateZero::get(zeroType), name + ".no_nulls");
  const size_t n = steps.size();
  Objects objects;
  // The thread's rounding counter changes only inside helpers' calls: an
  // object of its own, so its loads between two calls are one load.
  objects.add(threadRounded);
  // Each step's ring (its first record of the run) and, for a window, its
  // record before the run; a fused window's flag; its fold's input record, its
  // roundings, a sliding step's accumulators (sum, sum of magnitudes, present;
  // NULLs). Loaded once: nothing the loop writes moves them.
  std::vector<Value*> outBase(n), outNullBase(n), lastRec(n, nullptr), lastNull(n, nullptr);
  std::vector<llvm::AllocaInst*> flag(n, nullptr), foldIn(n, nullptr), foldNull(n, nullptr), roundings(n);
  std::vector<llvm::AllocaInst*> window(n, nullptr), windowNulls(n, nullptr), scratch(n, nullptr);
  std::vector<std::array<llvm::AllocaInst*, 3>> acc(n);
  for (size_t m = 0; m < n; ++m) {
    const ChainStep& s = steps[m];
    outBase[m] = B.CreateLoad(ptr, B.CreateConstGEP1_64(ptr, outs, m));
    outNullBase[m] = B.CreateLoad(ptr, B.CreateConstGEP1_64(ptr, outNulls, m));
    const int data = objects.add(outBase[m]), flags = objects.add(outNullBase[m]);
    if (s.kind == Kind::Window) {
      // Its record before the run (in its ring too), then each record it
      // makes, carried to the next as a value: read back from the ring, the
      // record just stored would hold each record up until the one before
      // had left the store buffer (a load spanning two stores is not forwarded).
      lastRec[m] = B.CreateLoad(ptr, B.CreateConstGEP1_64(ptr, last, 2 * m));
      lastNull[m] = B.CreateLoad(ptr, B.CreateConstGEP1_64(ptr, last, 2 * m + 1));
      objects.add(lastRec[m], data);
      objects.add(lastNull[m], flags);
      // The value is a vector of a power of two lanes (LLVM keeps such a one
      // in vector registers), the record its first W.
      const unsigned W = unsigned(s.out.elems.size()), P = unsigned(llvm::PowerOf2Ceil(W));
      for (auto [a, from, t] : {std::tuple{&window[m], lastRec[m], B.getInt32Ty()},
                                std::tuple{&windowNulls[m], lastNull[m], B.getInt8Ty()}}) {
        objects.add(*a = L.slot(llvm::FixedVectorType::get(t, P), 1, "window"));
        B.CreateStore(resized(B, B.CreateAlignedLoad(llvm::FixedVectorType::get(t, W), from, llvm::MaybeAlign(1)), P),
                      *a);
      }
    }
    if (s.kind == Kind::SlideNulls) objects.add(flag[m] = L.slot(B.getInt8Ty(), 1, "flag"));
    if (s.kind == Kind::Fold || s.kind == Kind::Slide) {
      objects.add(foldIn[m] = L.slot(B.getInt8Ty(), uint64_t(std::max(s.in.recordSize, 8)), "foldin"));
      objects.add(foldNull[m] = L.slot(B.getInt8Ty(), 1, "foldnull"));
    }
    if (s.kind == Kind::Slide || s.kind == Kind::SlideNulls)
      for (uint64_t a = 0; a < 3; ++a) {
        acc[m][a] = L.slot(i64, 1, "acc");
        B.CreateStore(L.load64(B.CreateConstGEP1_64(i64, state, 4 * m + a)), acc[m][a]);
      }
    if (!s.materialised) objects.add(scratch[m] = L.slot(B.getInt8Ty(), uint64_t(s.out.recordSize), "record"));
    roundings[m] = L.slot(i64, 1, "rounded");
    B.CreateStore(B.getInt64(0), roundings[m]);
  }
  // An external read in steps through its ring during the run (base, stride
  // of its records and flags), or through the pointer arrays (base 0).
  std::vector<std::array<Value*, 4>> ring(static_cast<size_t>(externals));
  std::vector<Value*> inRing(static_cast<size_t>(externals));
  for (int e = 0; e < externals; ++e) {
    for (uint64_t a = 0; a < 4; ++a)
      ring[size_t(e)][a] = L.load64(B.CreateConstGEP1_64(i64, strided, 4 * uint64_t(e) + a));
    inRing[size_t(e)] = B.CreateICmpNE(ring[size_t(e)][0], B.getInt64(0));
  }
  auto* idx = L.slot(i64, 1, "i");
  auto* seen = L.slot(i64, 1, "seen");  // the thread's roundings after the last step
  B.CreateStore(L.load64(threadRounded), seen);
  auto* exit = L.block("done");
  // The loop over the run's records, emitted twice: for a clean run (no
  // flag set in the settled externals' records, windows without NULLs: the
  // caller checked) those flags are constants, so the optimiser drops the
  // NULL work a record; otherwise the general one.
  auto *cleanLoop = L.block("clean"), *generalLoop = L.block("general");
  B.CreateCondBr(clean, cleanLoop, generalLoop);
  auto loop = [&](bool isClean) {
    B.SetInsertPoint(isClean ? cleanLoop : generalLoop);
    B.CreateStore(B.getInt64(0), idx);
    if (isClean)  // what the caller checked, as constants
      for (size_t m = 0; m < n; ++m) {
        const ChainStep& s = steps[m];
        if (s.kind == Kind::Window)
          B.CreateStore(llvm::Constant::getNullValue(windowNulls[m]->getAllocatedType()), windowNulls[m]);
        if (s.kind == Kind::SlideNulls) B.CreateStore(B.getInt64(0), acc[m][0]);
        if (s.kind == Kind::Slide) B.CreateStore(B.getInt64(steps[m - 1].out.elems.size()), acc[m][2]);
      }
    auto *head = L.block("record"), *body = L.block("record.body");
    B.CreateBr(head);
    B.SetInsertPoint(head);
    Value* i = L.load64(idx);
    B.CreateCondBr(B.CreateICmpSLT(i, count), body, exit);
    B.SetInsertPoint(body);
    // Record i of each step, written in place in its ring (the standalone
    // step's code writes there too); the next step reads it there.
    std::vector<Value*> rec(n), nulls(n);
    for (size_t m = 0; m < n; ++m) {
      const ChainStep& s = steps[m];
      const uint64_t rs = uint64_t(s.out.recordSize), ne = s.out.elems.size();
      rec[m] = s.materialised ? B.CreateGEP(B.getInt8Ty(), outBase[m], B.CreateMul(i, B.getInt64(rs))) : scratch[m];
      nulls[m] = s.kind == Kind::SlideNulls
                     ? flag[m]
                     : B.CreateGEP(B.getInt8Ty(), outNullBase[m], B.CreateMul(i, B.getInt64(ne)));
      Frame fr;
      for (size_t k = 0; k < s.from.size(); ++k) {
        if (s.from[k] < 0) {
          fr.opData.push_back(rec[size_t(int(m) + s.from[k])]);
          fr.opNull.push_back(nulls[size_t(int(m) + s.from[k])]);
        } else {
          const auto& r = ring[size_t(s.from[k])];
          Value* at = B.CreateAdd(B.CreateMul(i, B.getInt64(uint64_t(externals))), B.getInt64(uint64_t(s.from[k])));
          Value* d = B.CreateIntToPtr(B.CreateAdd(r[0], B.CreateMul(i, r[1])), ptr);
          Value* nl = B.CreateIntToPtr(B.CreateAdd(r[2], B.CreateMul(i, r[3])), ptr);
          // The array's entry is loaded either way (it is there, maybe stale): no branch.
          // A member's ring is that member's object; another stream's records
          // are only read here: an object of their own.
          const int from = externalMembers[size_t(s.from[k])];
          fr.opData.push_back(
              B.CreateSelect(inRing[size_t(s.from[k])], d, B.CreateLoad(ptr, B.CreateGEP(ptr, ext, at))));
          objects.add(fr.opData.back(), from < 0 ? -1 : objects.of(outBase[size_t(from)]));
          // Records the run itself may write (a member's, few records
          // back): their flags are read, clean or not.
          if (isClean && settled[size_t(s.from[k])]) {
            fr.opNull.push_back(B.CreateConstGEP2_64(zeroType, noNulls, 0, 0));
          } else {
            fr.opNull.push_back(
                B.CreateSelect(inRing[size_t(s.from[k])], nl, B.CreateLoad(ptr, B.CreateGEP(ptr, extNull, at))));
            objects.add(fr.opNull.back(), from < 0 ? -1 : objects.of(outNullBase[size_t(from)]));
          }
        }
      }
      fr.outData = rec[m];
      fr.outNulls = nulls[m];
      // Element 0 of an operand: its value (sign-extended) and whether it is NULL.
      auto element = [&](size_t k) {
        Value* isNull = B.CreateICmpNE(B.CreateLoad(B.getInt8Ty(), fr.opNull[k]), B.getInt8(0));
        Value* v = B.CreateAlignedLoad(B.getInt32Ty(), fr.opData[k], llvm::MaybeAlign(1));
        return std::pair<Value*, Value*>{v, isNull};
      };
      // A fold's program reads its input record (scratch), on each of the fold's paths.
      Frame foldFrame;
      if (s.kind == Kind::Fold || s.kind == Kind::Slide) {
        foldFrame.opData = {foldIn[m]};
        foldFrame.opNull = {foldNull[m]};
        foldFrame.opBase = {0};
        foldFrame.opOff = {0};
        foldFrame.outData = fr.outData;
        foldFrame.outNulls = fr.outNulls;
      }
      auto program = [&] { lowerProgram(M, B, s.program, s.in, s.out, foldFrame); };
      if (s.kind == Kind::Window) {
        // Newest first: every element moves one place back, the producer's
        // new one goes first (NULL as zero bytes).
        const unsigned W = unsigned(ne);
        auto [v, isNull] = element(0);
        auto moved = [&](llvm::AllocaInst* a, Value* first) {
          llvm::Type* t = a->getAllocatedType();
          const unsigned P = unsigned(llvm::cast<llvm::FixedVectorType>(t)->getNumElements());
          Value* before = B.CreateLoad(t, a);
          std::vector<int> back(P);
          for (unsigned e = 0; e < P; ++e) back[e] = int(e) - 1;
          back[0] = int(P);  // a lane of the poison operand: replaced below
          Value* now =
              B.CreateInsertElement(B.CreateShuffleVector(before, llvm::PoisonValue::get(t), back), first, uint64_t(0));
          B.CreateStore(now, a);
          return resized(B, now, W);
        };
        B.CreateAlignedStore(moved(window[m], B.CreateSelect(isNull, B.getInt32(0), v)), rec[m], llvm::MaybeAlign(1));
        B.CreateAlignedStore(moved(windowNulls[m], B.CreateZExt(isNull, B.getInt8Ty())), nulls[m], llvm::MaybeAlign(1));
      } else if (s.kind == Kind::SlideNulls) {
        // One element enters, one leaves (absent ones count as NULL).
        auto [vi, ni] = element(0);
        auto [vo, no] = element(1);
        (void)vi, (void)vo;
        Value* c = B.CreateSub(B.CreateAdd(L.load64(acc[m][0]), B.CreateZExt(ni, i64)), B.CreateZExt(no, i64));
        B.CreateStore(c, acc[m][0]);
        B.CreateStore(B.CreateZExt(B.CreateICmpNE(c, B.getInt64(0)), B.getInt8Ty()), nulls[m]);
      } else if (s.kind == Kind::Slide) {
        auto [vi, ni] = element(0);
        auto [vo, no] = element(1);
        Value* xi = B.CreateSelect(ni, B.getInt64(0), B.CreateSExt(vi, i64));
        Value* xo = B.CreateSelect(no, B.getInt64(0), B.CreateSExt(vo, i64));
        auto mag = [&](Value* x) { return B.CreateSelect(B.CreateICmpSLT(x, B.getInt64(0)), B.CreateNeg(x), x); };
        Value* sum = B.CreateSub(B.CreateAdd(L.load64(acc[m][0]), xi), xo);
        Value* sumAbs = B.CreateSub(B.CreateAdd(L.load64(acc[m][1]), mag(xi)), mag(xo));
        Value* present = B.CreateSub(B.CreateAdd(L.load64(acc[m][2]), B.CreateZExt(B.CreateNot(ni), i64)),
                                     B.CreateZExt(B.CreateNot(no), i64));
        B.CreateStore(sum, acc[m][0]);
        B.CreateStore(sumAbs, acc[m][1]);
        B.CreateStore(present, acc[m][2]);
        // The window before it (SlideNulls) holds the most elements it folds.
        const int64_t full = int64_t(steps[m - 1].out.elems.size());
        L.finish(
            s, present, sum,
            [&] { return B.CreateICmpSGT(sumAbs, B.getInt64(uint64_t(exactBound(s.in.elems[0].type)))); }, sum, sum,
            full, foldIn[m], foldNull[m],
            [&] {
              auto* ty = llvm::FunctionType::get(B.getVoidTy(), {ptr, B.getInt32Ty(), i64, ptr}, false);
              B.CreateCall(ty, slowSlide, {ctx, B.getInt32(uint32_t(m)), i, foldIn[m]});
            },
            program);
      } else if (s.kind == Kind::Fold) {
        L.fold(s, fr.opData[0], fr.opNull[0], foldIn[m], foldNull[m], slowFold, program);
      } else {
        for (int b : s.bases) {
          fr.opBase.push_back(b);
          fr.opOff.push_back(size_t(b) < s.in.elems.size() ? s.in.elems[size_t(b)].offset : 0);
        }
      }
      if (s.kind == Kind::Map) lowerProgram(M, B, s.program, s.in, s.out, fr);
      // A fused window is not materialised: its flag byte goes to its NULL index.
      if (s.kind == Kind::SlideNulls)
        B.CreateStore(B.CreateLoad(B.getInt8Ty(), flag[m]),
                      B.CreateGEP(B.getInt8Ty(), outNullBase[m], B.CreateMul(i, B.getInt64(ne))));
      // Its roundings: what the thread's counter gained during its code.
      Value* now = L.load64(threadRounded);
      B.CreateStore(B.CreateAdd(L.load64(roundings[m]), B.CreateSub(now, L.load64(seen))), roundings[m]);
      B.CreateStore(now, seen);
    }
    B.CreateStore(B.CreateAdd(i, B.getInt64(1)), idx);
    B.CreateBr(head);
  };
  try {
    loop(true);
    loop(false);
  } catch (const Unsupported& e) {
    why = e.what();
    fn->eraseFromParent();
    noNulls->eraseFromParent();
    return false;
  }
  B.SetInsertPoint(exit);
  // A member not materialised leaves its newest record in its ring (the
  // next run's window starts from it; clients ask for it).
  for (size_t m = 0; m < n; ++m) {
    if (steps[m].materialised) continue;
    const uint64_t rs = uint64_t(steps[m].out.recordSize);
    auto *store = L.block("newest"), *next = L.block("newest.done");
    B.CreateCondBr(B.CreateICmpSGT(count, B.getInt64(0)), store, next);
    B.SetInsertPoint(store);
    B.CreateMemCpy(
        B.CreateGEP(B.getInt8Ty(), outBase[m], B.CreateMul(B.CreateSub(count, B.getInt64(1)), B.getInt64(rs))),
        llvm::MaybeAlign(1), scratch[m], llvm::MaybeAlign(1), rs);
    B.CreateBr(next);
    B.SetInsertPoint(next);
  }
  for (size_t m = 0; m < n; ++m) {
    Value* at = B.CreateConstGEP1_64(i64, rounded, m);
    B.CreateStore(B.CreateAdd(L.load64(at), L.load64(roundings[m])), at);
    if (steps[m].kind == Kind::Slide || steps[m].kind == Kind::SlideNulls)
      for (uint64_t a = 0; a < 3; ++a) B.CreateStore(L.load64(acc[m][a]), B.CreateConstGEP1_64(i64, state, 4 * m + a));
  }
  B.CreateRetVoid();
  objects.annotate(*fn);
  return true;
}

}  // namespace jit
