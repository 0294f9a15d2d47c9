// Window and SlideNulls steps of a chain's function (chain_emit.hpp); their
// run-time counterparts are engine/operators/window.cpp (a window's own step)
// and engine/operators/chain.cpp (the record before a run, the NULL index).
#include <llvm/Support/MathExtras.h>

#include <cstddef>
#include <tuple>

#include "chain_emit.hpp"

namespace jit {

using llvm::Value;

namespace {

// The first n lanes of vector v, or v with lanes added (poison) up to n.
Value* resized(llvm::IRBuilder<>& B, Value* v, unsigned n) {
  const unsigned have = unsigned(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements());
  std::vector<int> lanes(n);
  for (unsigned e = 0; e < n; ++e) lanes[e] = e < have ? int(e) : -1;
  return B.CreateShuffleVector(v, llvm::PoisonValue::get(v->getType()), lanes);
}

}  // namespace

// Its record before the run (in its ring too), then each record it makes,
// carried to the next as a value: read back from the ring, the record just
// stored would hold each record up until the one before had left the store
// buffer (a load spanning two stores is not forwarded). The value is a vector
// of a power of two lanes (LLVM keeps such a one in vector registers), the
// record its first W.
void ChainEmitter::setUpWindow(size_t m) {
  MemberCode& mc = members[m];
  Value* before = B.CreateLoad(ptr, fieldAt(mc.args, offsetof(ChainMember, before)));
  Value* beforeNulls = B.CreateLoad(ptr, fieldAt(mc.args, offsetof(ChainMember, beforeNulls)));
  objects.add(before, objects.of(mc.out));
  objects.add(beforeNulls, objects.of(mc.outNulls));
  const unsigned W = unsigned(steps[m].out.elems.size()), P = unsigned(llvm::PowerOf2Ceil(W));
  for (auto [a, from, t] :
       {std::tuple{&mc.window, before, B.getInt32Ty()}, std::tuple{&mc.windowNulls, beforeNulls, B.getInt8Ty()}}) {
    objects.add(*a = slot(llvm::FixedVectorType::get(t, P), 1, "window"));
    B.CreateStore(resized(B, B.CreateAlignedLoad(llvm::FixedVectorType::get(t, W), from, llvm::MaybeAlign(1)), P), *a);
  }
}

// Newest first: every element moves one place back, the producer's new one
// goes first (NULL as zero bytes).
void ChainEmitter::emitWindow(size_t m, const Frame& fr) {
  const MemberCode& mc = members[m];
  const unsigned W = unsigned(steps[m].out.elems.size());
  auto [v, isNull] = element(fr, 0);
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
  B.CreateAlignedStore(moved(mc.window, B.CreateSelect(isNull, B.getInt32(0), v)), mc.rec, llvm::MaybeAlign(1));
  B.CreateAlignedStore(moved(mc.windowNulls, B.CreateZExt(isNull, B.getInt8Ty())), mc.recNulls, llvm::MaybeAlign(1));
}

// A fused window: one element enters, one leaves (absent ones count as
// NULL); its flag (1 while it holds a NULL) goes to its NULL index, its
// elements nowhere (its reducer slides over the producer's).
void ChainEmitter::emitSlideNulls(size_t m, Value* i, const Frame& fr) {
  const MemberCode& mc = members[m];
  Value* enters = element(fr, 0).second;
  Value* leaves = element(fr, 1).second;
  Value* c = B.CreateSub(B.CreateAdd(load64(mc.nullCount), B.CreateZExt(enters, i64)), B.CreateZExt(leaves, i64));
  B.CreateStore(c, mc.nullCount);
  B.CreateStore(B.CreateZExt(B.CreateICmpNE(c, B.getInt64(0)), B.getInt8Ty()), mc.flag);
  const uint64_t ne = steps[m].out.elems.size();
  B.CreateStore(B.CreateLoad(B.getInt8Ty(), mc.flag),
                B.CreateGEP(B.getInt8Ty(), mc.outNulls, B.CreateMul(i, B.getInt64(ne))));
}

}  // namespace jit
