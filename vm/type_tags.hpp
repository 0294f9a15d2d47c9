// Type tags of the VM instruction table's operand types (U8 I32 U32 RAT F32
// F64 STR, CVT pairs From_To), shared by the interpreter and the JIT lowering
// so that both dispatch on the same generated switch.
#pragma once

#include "ir/ir.hpp"
#include "values.hpp"
#include "vm.hpp"

namespace vm::tags {

using ir::Type;

struct U8 {
  using C = uint8_t;
  static constexpr Type T = Type::BYTE;
  static C get(const Slot& s) { return s.u8; }
  static void set(Slot& s, C v) { s.u8 = v; }
};
struct I32 {
  using C = int32_t;
  static constexpr Type T = Type::INTEGER;
  static C get(const Slot& s) { return s.i32; }
  static void set(Slot& s, C v) { s.i32 = v; }
};
struct U32 {
  using C = uint32_t;
  static constexpr Type T = Type::UINT;
  static C get(const Slot& s) { return s.u32; }
  static void set(Slot& s, C v) { s.u32 = v; }
};
struct F32 {
  using C = float;
  static constexpr Type T = Type::FLOAT;
  static C get(const Slot& s) { return s.f32; }
  static void set(Slot& s, C v) { s.f32 = v; }
};
struct F64 {
  using C = double;
  static constexpr Type T = Type::DOUBLE;
  static C get(const Slot& s) { return s.f64; }
  static void set(Slot& s, C v) { s.f64 = v; }
};
struct RAT {
  using C = val::Rat;
  static constexpr Type T = Type::RATIONAL;
  static C get(const Slot& s) { return {s.rat[0], s.rat[1]}; }
  static void set(Slot& s, C v) { s.rat[0] = v.num, s.rat[1] = v.den; }
};
struct STR {
  static constexpr Type T = Type::STRING;
};
struct ANY {};
template <class A, class B>
struct Pair {
  using From = A;
  using To = B;
};
#define PAIRS(X) \
  X(U8, I32) X(U8, U32) X(U8, RAT) X(U8, F32) X(U8, F64) X(U8, STR) X(I32, U8) X(I32, U32) X(I32, RAT) X(I32, F32) \
  X(I32, F64) X(I32, STR) X(U32, U8) X(U32, I32) X(U32, RAT) X(U32, F32) X(U32, F64) X(U32, STR) X(RAT, U8)        \
  X(RAT, I32) X(RAT, U32) X(RAT, F32) X(RAT, F64) X(RAT, STR) X(F32, U8) X(F32, I32) X(F32, U32) X(F32, RAT)        \
  X(F32, F64) X(F32, STR) X(F64, U8) X(F64, I32) X(F64, U32) X(F64, RAT) X(F64, F32) X(F64, STR) X(STR, U8)         \
  X(STR, I32) X(STR, U32) X(STR, RAT) X(STR, F32) X(STR, F64)
#define DEF_PAIR(a, b) using a##_##b = Pair<a, b>;
PAIRS(DEF_PAIR)
#undef DEF_PAIR


}  // namespace vm::tags
