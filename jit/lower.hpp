// The JIT's lowering of one VM program to LLVM IR (lower.cpp), driven by the
// same instruction table as the interpreter, and the runtime helpers its code
// calls (helpers.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <stdexcept>
#include <vector>

#include "ir/layout.hpp"
#include "jit/jit.hpp"
#include "vm/vm.hpp"

namespace jit {

// A program the lowering cannot take (the reason is the message).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where the function being generated reads and writes.
struct Frame {
  // Operand k's record and NULL flags; input elements opBase[k].. belong to
  // it, at byte opOff[k] of the input layout (one operand: the input record).
  std::vector<llvm::Value*> opData, opNull;
  std::vector<int> opBase, opOff;
  // w > 0: operand k holds its w elements in reverse, 4 bytes and a flag
  // apart (a window read in its producer's ring, ChainStep::reversed).
  std::vector<int> opReversed;
  llvm::Value *outData = nullptr, *outNulls = nullptr;
};

// Appends the code of program p at B's insertion point; throws Unsupported.
void lowerProgram(llvm::Module& M, llvm::IRBuilder<>& B, const vm::Program& p, const ir::Layout& in,
                  const ir::Layout& out, Frame& frame);

// Defines a chain's function (jit.hpp, ChainFn) named `name` in M: false
// (with `why`) when a step cannot be lowered.
bool defineChain(llvm::Module& M, llvm::IRBuilder<>& B, const std::string& name, const std::vector<ChainStep>& steps,
                 const std::vector<int>& externals, const std::vector<char>& settled, std::string& why);

// The runtime helpers generated code calls, by symbol name.
// One row a helper:
// clang-format off
#define RDB_JIT_HELPERS(X)                                                                                      \
  X(rdb_rat_add) X(rdb_rat_sub) X(rdb_rat_mul) X(rdb_rat_div) X(rdb_rat_cmp) X(rdb_rationalize) X(rdb_rat_from_int) \
  X(rdb_rat_mean) X(rdb_f2i32) X(rdb_f2u32) X(rdb_f2u8) X(rdb_math) X(rdb_pow_i32) X(rdb_pow_u32) X(rdb_pow_rat)    \
  X(rdb_pow_f32) X(rdb_pow_f64)
// clang-format on

}  // namespace jit

extern "C" {
uint64_t rdb_rat_add(int32_t an, int32_t ad, int32_t bn, int32_t bd);
uint64_t rdb_rat_sub(int32_t an, int32_t ad, int32_t bn, int32_t bd);
uint64_t rdb_rat_mul(int32_t an, int32_t ad, int32_t bn, int32_t bd);
uint64_t rdb_rat_div(int32_t an, int32_t ad, int32_t bn, int32_t bd);
int32_t rdb_rat_cmp(int32_t an, int32_t ad, int32_t bn, int32_t bd);
uint64_t rdb_rationalize(double x);
uint64_t rdb_rat_from_int(int64_t v);
uint64_t rdb_rat_mean(int64_t sum, int64_t n);
int32_t rdb_f2i32(double d);
uint32_t rdb_f2u32(double d);
uint32_t rdb_f2u8(double d);
double rdb_math(int32_t fn, double x);
// b ^ a: integers return the value in the low 32 bits and bit 32 set for NULL;
// RATIONAL packs a zero denominator for NULL; floats return NaN for NULL.
uint64_t rdb_pow_i32(int32_t b, int32_t a);
uint64_t rdb_pow_u32(uint32_t b, uint32_t a);
uint64_t rdb_pow_rat(int32_t bn, int32_t bd, int32_t an, int32_t ad);
float rdb_pow_f32(float b, float a);
double rdb_pow_f64(double b, double a);
}
