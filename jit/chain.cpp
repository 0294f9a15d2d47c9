// A chain's function (chain_abi.hpp): the streams of a chain run record by
// record in one loop. Each step writes its record straight into its history
// ring and the next step reads it there (no copy between them), or, not
// materialised, into scratch the optimiser keeps in registers. This file
// holds the function's frame and loop, Map steps and the alias scopes;
// chain_window.cpp and chain_fold.cpp the other step kinds.
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <cstddef>

#include "chain_emit.hpp"

namespace jit {

using llvm::Value;

int AliasObjects::find(Value* p) const {
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

void AliasObjects::annotate(llvm::Function& fn) const {
  if (count < 2) return;
  llvm::MDBuilder md(fn.getContext());
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(fn.getName());
  std::vector<llvm::Metadata*> scopes;
  for (int o = 0; o < count; ++o) scopes.push_back(md.createAnonymousAliasScope(domain));
  auto tag = [&](llvm::Instruction& ins, const std::vector<int>& objs) {
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
      else if (auto* t = llvm::dyn_cast<llvm::MemTransferInst>(&ins)) objs = {find(t->getDest()), find(t->getSource())};
      else if (auto* f = llvm::dyn_cast<llvm::MemSetInst>(&ins)) objs = {find(f->getDest())};
      else continue;
      if (std::find(objs.begin(), objs.end(), -1) == objs.end()) tag(ins, objs);
    }
}

ChainEmitter::ChainEmitter(llvm::Module& m, llvm::IRBuilder<>& b, const std::vector<ChainStep>& s)
    : M(m),
      B(b),
      C(m.getContext()),
      steps(s),
      i64(b.getInt64Ty()),
      ptr(llvm::PointerType::getUnqual(m.getContext())),
      members(s.size()) {}

llvm::AllocaInst* ChainEmitter::slot(llvm::Type* t, uint64_t n, const char* name) {
  llvm::IRBuilder<> E(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  auto* a = E.CreateAlloca(t, E.getInt64(n), name);
  a->setAlignment(llvm::Align(8));
  return a;
}

std::pair<Value*, Value*> ChainEmitter::element(const Frame& fr, size_t k) {
  Value* isNull = B.CreateICmpNE(B.CreateLoad(B.getInt8Ty(), fr.opNull[k]), B.getInt8(0));
  Value* v = B.CreateAlignedLoad(B.getInt32Ty(), fr.opData[k], llvm::MaybeAlign(1));
  return {v, isNull};
}

// The function's arguments (ChainArgs), each member's ring and state, each
// external's run: loaded once, nothing the loop writes moves them.
void ChainEmitter::begin(const std::string& name, const std::vector<int>& externalMembers,
                         const std::vector<char>& settled) {
  fn = llvm::Function::Create(llvm::FunctionType::get(B.getVoidTy(), {ptr, i64}, false),
                              llvm::Function::ExternalLinkage, name, &M);
  args = fn->getArg(0), count = fn->getArg(1);
  B.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", fn));
  auto arg = [&](size_t offset) { return B.CreateLoad(ptr, fieldAt(args, offset)); };
  ext = arg(offsetof(ChainArgs, ext)), extNulls = arg(offsetof(ChainArgs, extNulls));
  threadRounded = arg(offsetof(ChainArgs, threadRounded));
  slowFold = arg(offsetof(ChainArgs, slowFold)), slowSlide = arg(offsetof(ChainArgs, slowSlide));
  ctx = arg(offsetof(ChainArgs, ctx));
  clean = B.CreateICmpNE(load64(fieldAt(args, offsetof(ChainArgs, clean))), B.getInt64(0));
  Value *memberArgs = arg(offsetof(ChainArgs, members)), *runs = arg(offsetof(ChainArgs, externals));
  // A clean run reads the externals' flags from zeros the optimiser can see:
  // as many as any record of the chain has elements.
  size_t widest = 1;
  for (const ChainStep& s : steps)
    widest = std::max({widest, s.in.elems.size(), s.out.elems.size(), size_t(s.foldElems)});
  zeroType = llvm::ArrayType::get(B.getInt8Ty(), widest);
  noNulls = new llvm::GlobalVariable(M, zeroType, true, llvm::GlobalValue::PrivateLinkage,
                                     llvm::ConstantAggregateZero::get(zeroType), name + ".no_nulls");
  // The thread's rounding counter changes only inside helpers' calls: an
  // object of its own, so its loads between two calls are one load.
  objects.add(threadRounded);
  for (size_t m = 0; m < steps.size(); ++m) {
    const ChainStep& s = steps[m];
    MemberCode& mc = members[m];
    mc.args = fieldAt(memberArgs, m * sizeof(ChainMember));
    mc.out = B.CreateLoad(ptr, fieldAt(mc.args, offsetof(ChainMember, out)));
    mc.outNulls = B.CreateLoad(ptr, fieldAt(mc.args, offsetof(ChainMember, outNulls)));
    objects.add(mc.out), objects.add(mc.outNulls);
    if (s.kind == Kind::Window && !s.view) setUpWindow(m);
    if (s.kind == Kind::SlideNulls) objects.add(mc.flag = slot(B.getInt8Ty(), 1, "flag"));
    if (s.kind == Kind::Fold || s.kind == Kind::Slide) {
      objects.add(mc.foldIn = slot(B.getInt8Ty(), uint64_t(std::max(s.in.recordSize, 8)), "foldin"));
      objects.add(mc.foldNull = slot(B.getInt8Ty(), 1, "foldnull"));
    }
    auto accumulator = [&](size_t offset) {
      auto* a = slot(i64, 1, "acc");
      B.CreateStore(load64(fieldAt(mc.args, offset)), a);
      return a;
    };
    if (s.kind == Kind::SlideNulls) mc.nullCount = accumulator(offsetof(ChainMember, nulls));
    if (s.kind == Kind::Slide) {
      mc.sum = accumulator(offsetof(ChainMember, sum));
      mc.sumAbs = accumulator(offsetof(ChainMember, sumAbs));
      mc.present = accumulator(offsetof(ChainMember, present));
    }
    if (!s.materialised && !s.view) objects.add(mc.scratch = slot(B.getInt8Ty(), uint64_t(s.out.recordSize), "record"));
    mc.rounding = slot(i64, 1, "rounded");
    B.CreateStore(B.getInt64(0), mc.rounding);
  }
  for (size_t e = 0; e < externalMembers.size(); ++e) {
    Value* run = fieldAt(runs, e * sizeof(ChainExternal));
    ExternalCode x{};
    x.data = load64(fieldAt(run, offsetof(ChainExternal, data)));
    x.dataStep = load64(fieldAt(run, offsetof(ChainExternal, dataStep)));
    x.nulls = load64(fieldAt(run, offsetof(ChainExternal, nulls)));
    x.nullsStep = load64(fieldAt(run, offsetof(ChainExternal, nullsStep)));
    x.inRing = B.CreateICmpNE(x.data, B.getInt64(0));
    x.from = externalMembers[e];
    x.settled = settled[e] != 0;
    externals.push_back(x);
  }
  idx = slot(i64, 1, "i");
  seen = slot(i64, 1, "seen");  // the thread's roundings after the last step
  B.CreateStore(load64(threadRounded), seen);
}

// Operand records of step m at iteration i: the previous steps' records of
// this iteration, or external records (in place in a ring, or through the
// engine's pointer arrays).
Frame ChainEmitter::operands(size_t m, Value* i, bool isClean) {
  const ChainStep& s = steps[m];
  const uint64_t E = externals.size();
  Frame fr;
  for (int from : s.from) {
    if (from < 0) {
      fr.opData.push_back(members[size_t(int(m) + from)].rec);
      fr.opNull.push_back(members[size_t(int(m) + from)].recNulls);
      continue;
    }
    const ExternalCode& x = externals[size_t(from)];
    Value* at = B.CreateAdd(B.CreateMul(i, B.getInt64(E)), B.getInt64(uint64_t(from)));
    Value* d = B.CreateIntToPtr(B.CreateAdd(x.data, B.CreateMul(i, x.dataStep)), ptr);
    Value* nl = B.CreateIntToPtr(B.CreateAdd(x.nulls, B.CreateMul(i, x.nullsStep)), ptr);
    // The array's entry is loaded either way (it is there, maybe stale): no
    // branch. A member's ring is that member's object; another stream's
    // records are only read here: an object of their own.
    fr.opData.push_back(B.CreateSelect(x.inRing, d, B.CreateLoad(ptr, B.CreateGEP(ptr, ext, at))));
    objects.add(fr.opData.back(), x.from < 0 ? -1 : objects.of(members[size_t(x.from)].out));
    // Records the run itself may write (a member's, few records back): their
    // flags are read, clean or not.
    if (isClean && x.settled) {
      fr.opNull.push_back(B.CreateConstGEP2_64(zeroType, noNulls, 0, 0));
    } else {
      fr.opNull.push_back(B.CreateSelect(x.inRing, nl, B.CreateLoad(ptr, B.CreateGEP(ptr, extNulls, at))));
      objects.add(fr.opNull.back(), x.from < 0 ? -1 : objects.of(members[size_t(x.from)].outNulls));
    }
  }
  return fr;
}

void ChainEmitter::emitMap(size_t m, Frame& fr) {
  const ChainStep& s = steps[m];
  for (int b : s.bases) {
    fr.opBase.push_back(b);
    fr.opOff.push_back(size_t(b) < s.in.elems.size() ? s.in.elems[size_t(b)].offset : 0);
  }
  fr.opReversed = s.reversed;
  lowerProgram(M, B, s.program, s.in, s.out, fr);
}

void ChainEmitter::programOnFold(size_t m, const Frame& fr) {
  Frame f;
  f.opData = {members[m].foldIn};
  f.opNull = {members[m].foldNull};
  f.opBase = {0};
  f.opOff = {0};
  f.outData = fr.outData;
  f.outNulls = fr.outNulls;
  lowerProgram(M, B, steps[m].program, steps[m].in, steps[m].out, f);
}

// Record i of each step, written in place in its ring (the standalone step's
// code writes there too); the next step reads it there.
void ChainEmitter::iteration(Value* i, bool isClean) {
  for (size_t m = 0; m < steps.size(); ++m) {
    const ChainStep& s = steps[m];
    if (s.view) continue;  // its reader reads its producer's records
    MemberCode& mc = members[m];
    const uint64_t rs = uint64_t(s.out.recordSize), ne = s.out.elems.size();
    mc.rec = s.materialised ? B.CreateGEP(B.getInt8Ty(), mc.out, B.CreateMul(i, B.getInt64(rs))) : mc.scratch;
    mc.recNulls =
        s.kind == Kind::SlideNulls ? mc.flag : B.CreateGEP(B.getInt8Ty(), mc.outNulls, B.CreateMul(i, B.getInt64(ne)));
    Frame fr = operands(m, i, isClean);
    fr.outData = mc.rec;
    fr.outNulls = mc.recNulls;
    switch (s.kind) {
      case Kind::Map: emitMap(m, fr); break;
      case Kind::Fold: emitFold(m, fr); break;
      case Kind::Window: emitWindow(m, fr); break;
      case Kind::SlideNulls: emitSlideNulls(m, i, fr); break;
      case Kind::Slide: emitSlide(m, i, fr); break;
    }
    // Its roundings: what the thread's counter gained during its code.
    Value* now = load64(threadRounded);
    B.CreateStore(B.CreateAdd(load64(mc.rounding), B.CreateSub(now, load64(seen))), mc.rounding);
    B.CreateStore(now, seen);
  }
}

// The loop over the run's records, emitted twice: for a clean run (no flag
// set in the settled externals' records, windows without NULLs: the caller
// checked) those flags are constants, so the optimiser drops the NULL work a
// record; otherwise the general one.
void ChainEmitter::loop(bool isClean, llvm::BasicBlock* entry, llvm::BasicBlock* exit) {
  B.SetInsertPoint(entry);
  B.CreateStore(B.getInt64(0), idx);
  if (isClean)  // what the caller checked, as constants
    for (size_t m = 0; m < steps.size(); ++m) {
      const MemberCode& mc = members[m];
      if (steps[m].kind == Kind::Window && !steps[m].view)
        B.CreateStore(llvm::Constant::getNullValue(mc.windowNulls->getAllocatedType()), mc.windowNulls);
      if (steps[m].kind == Kind::SlideNulls) B.CreateStore(B.getInt64(0), mc.nullCount);
      if (steps[m].kind == Kind::Slide) B.CreateStore(B.getInt64(steps[m - 1].out.elems.size()), mc.present);
    }
  auto *head = block("record"), *body = block("record.body");
  B.CreateBr(head);
  B.SetInsertPoint(head);
  Value* i = load64(idx);
  B.CreateCondBr(B.CreateICmpSLT(i, count), body, exit);
  B.SetInsertPoint(body);
  iteration(i, isClean);
  B.CreateStore(B.CreateAdd(i, B.getInt64(1)), idx);
  B.CreateBr(head);
}

// After the run: a member not materialised leaves its newest record in its
// ring (the next run's window starts from it; clients ask for it); roundings
// and accumulators go back to the members' args.
void ChainEmitter::end(llvm::BasicBlock* exit) {
  B.SetInsertPoint(exit);
  for (size_t m = 0; m < steps.size(); ++m) {
    if (steps[m].materialised || steps[m].view) continue;
    const uint64_t rs = uint64_t(steps[m].out.recordSize);
    auto *store = block("newest"), *next = block("newest.done");
    B.CreateCondBr(B.CreateICmpSGT(count, B.getInt64(0)), store, next);
    B.SetInsertPoint(store);
    B.CreateMemCpy(
        B.CreateGEP(B.getInt8Ty(), members[m].out, B.CreateMul(B.CreateSub(count, B.getInt64(1)), B.getInt64(rs))),
        llvm::MaybeAlign(1), members[m].scratch, llvm::MaybeAlign(1), rs);
    B.CreateBr(next);
    B.SetInsertPoint(next);
  }
  for (size_t m = 0; m < steps.size(); ++m) {
    const MemberCode& mc = members[m];
    Value* at = fieldAt(mc.args, offsetof(ChainMember, rounded));
    B.CreateStore(B.CreateAdd(load64(at), load64(mc.rounding)), at);
    auto back = [&](llvm::AllocaInst* a, size_t offset) { B.CreateStore(load64(a), fieldAt(mc.args, offset)); };
    if (mc.nullCount) back(mc.nullCount, offsetof(ChainMember, nulls));
    if (mc.sum) {
      back(mc.sum, offsetof(ChainMember, sum));
      back(mc.sumAbs, offsetof(ChainMember, sumAbs));
      back(mc.present, offsetof(ChainMember, present));
    }
  }
  B.CreateRetVoid();
}

bool defineChain(llvm::Module& M, llvm::IRBuilder<>& B, const std::string& name, const std::vector<ChainStep>& steps,
                 const std::vector<int>& externalMembers, const std::vector<char>& settled, std::string& why) {
  ChainEmitter e(M, B, steps);
  e.begin(name, externalMembers, settled);
  auto *exit = e.block("done"), *cleanLoop = e.block("clean"), *generalLoop = e.block("general");
  B.CreateCondBr(e.clean, cleanLoop, generalLoop);
  try {
    e.loop(true, cleanLoop, exit);
    e.loop(false, generalLoop, exit);
  } catch (const Unsupported& u) {
    why = u.what();
    e.fn->eraseFromParent();
    e.noNulls->eraseFromParent();
    return false;
  }
  e.end(exit);
  e.objects.annotate(*e.fn);
  return true;
}

}  // namespace jit
