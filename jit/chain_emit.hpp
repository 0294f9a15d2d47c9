// The generation of a chain's function (jit.hpp, ChainFn), shared by its
// files: chain.cpp (the function's frame, the loop, Map steps, alias scopes),
// chain_window.cpp (Window and SlideNulls), chain_fold.cpp (Fold and Slide).
// What the function reads and writes is chain_abi.hpp's, by field name.
#pragma once

#include <array>
#include <map>

#include "lower.hpp"

namespace jit {

using Kind = ChainStep::Kind;

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
struct AliasObjects {
  std::map<llvm::Value*, int> base;  // a pointer the code derives addresses from -> its object
  int count = 0;

  // Registers v as a pointer into object `as` (-1: a new object); its object.
  int add(llvm::Value* v, int as = -1) { return base[v] = as < 0 ? count++ : as; }
  int of(llvm::Value* v) const { return base.at(v); }
  // The object p points into, through offsets and choices between pointers
  // into one object; -1 when unknown.
  int find(llvm::Value* p) const;
  void annotate(llvm::Function& fn) const;
};

// One step's values in the function.
struct MemberCode {
  llvm::Value* args = nullptr;                      // its ChainMember
  llvm::Value *out = nullptr, *outNulls = nullptr;  // its first record of the run, in its ring
  llvm::AllocaInst* rounding = nullptr;             // roundings its code made this run
  llvm::AllocaInst* scratch = nullptr;              // not materialised: its record
  // Window: its record carried from iteration to iteration as a vector.
  llvm::AllocaInst *window = nullptr, *windowNulls = nullptr;
  llvm::AllocaInst* flag = nullptr;                                        // SlideNulls: its record's flag
  llvm::AllocaInst *foldIn = nullptr, *foldNull = nullptr;                 // Fold, Slide: the input record
  llvm::AllocaInst* nullCount = nullptr;                                   // SlideNulls
  llvm::AllocaInst *sum = nullptr, *sumAbs = nullptr, *present = nullptr;  // Slide
  // This iteration's record and flags.
  llvm::Value *rec = nullptr, *recNulls = nullptr;
};

// One external record's run (ChainExternal), loaded once.
struct ExternalCode {
  llvm::Value *data, *dataStep, *nulls, *nullsStep;
  llvm::Value* inRing;  // data is set: the run lies in a ring
  int from;             // the member whose ring it reads, or -1
  bool settled;         // a clean run has checked its flags
};

struct ChainEmitter {
  llvm::Module& M;
  llvm::IRBuilder<>& B;
  llvm::LLVMContext& C;
  const std::vector<ChainStep>& steps;
  llvm::Function* fn = nullptr;
  llvm::Type *i64, *ptr;
  llvm::Value *args = nullptr, *count = nullptr;
  llvm::Value *ext = nullptr, *extNulls = nullptr, *threadRounded = nullptr;
  llvm::Value *slowFold = nullptr, *slowSlide = nullptr, *ctx = nullptr, *clean = nullptr;
  llvm::ArrayType* zeroType = nullptr;  // flags of a clean record: zeros the optimiser sees
  llvm::GlobalVariable* noNulls = nullptr;
  std::vector<MemberCode> members;
  std::vector<ExternalCode> externals;
  AliasObjects objects;
  llvm::AllocaInst *idx = nullptr, *seen = nullptr;

  ChainEmitter(llvm::Module& m, llvm::IRBuilder<>& b, const std::vector<ChainStep>& s);

  // chain.cpp
  void begin(const std::string& name, const std::vector<int>& externalMembers, const std::vector<char>& settled);
  void loop(bool isClean, llvm::BasicBlock* entry, llvm::BasicBlock* exit);
  void iteration(llvm::Value* i, bool isClean);
  Frame operands(size_t m, llvm::Value* i, bool isClean);
  void end(llvm::BasicBlock* exit);
  void emitMap(size_t m, Frame& fr);

  // chain_window.cpp
  void setUpWindow(size_t m);
  void emitWindow(size_t m, const Frame& fr);
  void emitSlideNulls(size_t m, llvm::Value* i, const Frame& fr);

  // chain_fold.cpp
  void emitFold(size_t m, const Frame& fr);
  void emitSlide(size_t m, llvm::Value* i, const Frame& fr);

  // Helpers.
  llvm::BasicBlock* block(const char* name) { return llvm::BasicBlock::Create(C, name, fn); }
  llvm::AllocaInst* slot(llvm::Type* t, uint64_t n, const char* name);
  llvm::Value* load64(llvm::Value* p) { return B.CreateLoad(i64, p); }
  // The address of the field at byte `offset` (offsetof) of the struct at p.
  llvm::Value* fieldAt(llvm::Value* p, size_t offset) { return B.CreateConstGEP1_64(B.getInt8Ty(), p, offset); }
  // Operand k's element 0: its value (INTEGER) and whether it is NULL.
  std::pair<llvm::Value*, llvm::Value*> element(const Frame& fr, size_t k);
  // The step's program over its fold's input record, writing its record.
  void programOnFold(size_t m, const Frame& fr);
};

}  // namespace jit
