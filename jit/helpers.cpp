// Runtime helpers called from generated code for the operations that are not
// a single instruction: the VM's own value functions (vm/values.hpp) and the
// function table's double functions. Rationals travel packed: numerator in the
// low 32 bits.
#include "ir/functions.hpp"
#include "lower.hpp"
#include "vm/values.hpp"

namespace {
using vm::val::Rat;
inline uint64_t pack(Rat r) { return uint64_t(uint32_t(r.num)) | (uint64_t(uint32_t(r.den)) << 32); }
}  // namespace

extern "C" {
uint64_t rdb_rat_add(int32_t an, int32_t ad, int32_t bn, int32_t bd) { return pack(vm::val::ratAdd({an, ad}, {bn, bd})); }
uint64_t rdb_rat_sub(int32_t an, int32_t ad, int32_t bn, int32_t bd) { return pack(vm::val::ratSub({an, ad}, {bn, bd})); }
uint64_t rdb_rat_mul(int32_t an, int32_t ad, int32_t bn, int32_t bd) { return pack(vm::val::ratMul({an, ad}, {bn, bd})); }
uint64_t rdb_rat_div(int32_t an, int32_t ad, int32_t bn, int32_t bd) {
  if (bn == 0) return pack({0, 1});  // the caller marks the result NULL
  return pack(vm::val::ratDiv({an, ad}, {bn, bd}));
}
int32_t rdb_rat_cmp(int32_t an, int32_t ad, int32_t bn, int32_t bd) { return vm::val::ratCmp({an, ad}, {bn, bd}); }
uint64_t rdb_rationalize(double x) { return pack(vm::val::rationalize(x)); }
uint64_t rdb_rat_from_int(int64_t v) { return pack(vm::val::ratFromInt(v)); }
int32_t rdb_f2i32(double d) { return vm::val::f2i32(d); }
uint32_t rdb_f2u32(double d) { return vm::val::f2u32(d); }
uint32_t rdb_f2u8(double d) { return vm::val::f2u8(d); }
double rdb_math(int32_t fn, double x) { return ir::functionById(fn).math(x); }
}
