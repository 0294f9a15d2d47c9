// Runtime helpers called from generated code for the operations that are not
// a single instruction: the VM's own per-value functions (vm/semantics.hpp) and the
// function table's double functions. Rationals travel packed: numerator in the
// low 32 bits.
#include "ir/functions.hpp"
#include "ir/semantics.hpp"
#include "lower.hpp"

namespace {
using ir::val::Rat;
inline uint64_t pack(Rat r) { return uint64_t(uint32_t(r.num)) | (uint64_t(uint32_t(r.den)) << 32); }
}  // namespace

extern "C" {
uint64_t rdb_rat_add(int32_t an, int32_t ad, int32_t bn, int32_t bd) {
  return pack(ir::val::add(Rat{an, ad}, Rat{bn, bd}));
}
uint64_t rdb_rat_sub(int32_t an, int32_t ad, int32_t bn, int32_t bd) {
  return pack(ir::val::sub(Rat{an, ad}, Rat{bn, bd}));
}
uint64_t rdb_rat_mul(int32_t an, int32_t ad, int32_t bn, int32_t bd) {
  return pack(ir::val::mul(Rat{an, ad}, Rat{bn, bd}));
}
uint64_t rdb_rat_div(int32_t an, int32_t ad, int32_t bn, int32_t bd) {
  Rat r{0, 1};  // a zero divisor: the caller marks the result NULL
  ir::val::div(Rat{an, ad}, Rat{bn, bd}, r);
  return pack(r);
}
int32_t rdb_rat_cmp(int32_t an, int32_t ad, int32_t bn, int32_t bd) { return ir::val::ratCmp({an, ad}, {bn, bd}); }
uint64_t rdb_rationalize(double x) { return pack(ir::val::convert<Rat>(x)); }
uint64_t rdb_rat_mean(int64_t sum, int64_t n) { return pack(ir::val::ratMean(sum, n)); }
uint64_t rdb_rat_from_int(int64_t v) { return pack(ir::val::ratFromInt(v)); }
int32_t rdb_f2i32(double d) { return ir::val::convert<int32_t>(d); }
uint32_t rdb_f2u32(double d) { return ir::val::convert<uint32_t>(d); }
uint32_t rdb_f2u8(double d) { return ir::val::convert<uint8_t>(d); }
double rdb_math(int32_t fn, double x) { return ir::functionById(fn).math(x); }
uint64_t rdb_pow_i32(int32_t b, int32_t a) {
  int32_t r = 0;
  return ir::val::pow(b, a, r) ? uint64_t(uint32_t(r)) : uint64_t(1) << 32;
}
uint64_t rdb_pow_u32(uint32_t b, uint32_t a) {
  uint32_t r = 0;
  return ir::val::pow(b, a, r) ? uint64_t(r) : uint64_t(1) << 32;
}
uint64_t rdb_pow_rat(int32_t bn, int32_t bd, int32_t an, int32_t ad) {
  Rat r{0, 1};
  return ir::val::pow(Rat{bn, bd}, Rat{an, ad}, r) ? pack(r) : 0;
}
float rdb_pow_f32(float b, float a) {
  float r = 0;
  return ir::val::pow(b, a, r) ? r : std::numeric_limits<float>::quiet_NaN();
}
double rdb_pow_f64(double b, double a) {
  double r = 0;
  return ir::val::pow(b, a, r) ? r : std::numeric_limits<double>::quiet_NaN();
}
}
