// Type tags of the VM instruction table's operand types (U8 I32 U32 RAT F32
// F64 STR, CVT pairs From_To), shared by the interpreter and the JIT lowering
// so that both dispatch on the same switch, generated from the table.
#pragma once

#include "ir/ir.hpp"
#include "ir/values.hpp"
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
  using C = ir::val::Rat;
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
// The CVT pairs of the instruction table: U8_I32 = Pair<U8, I32>, ...
#define VM_DEF_PAIR(name, fam, tag, from, to) using tag = Pair<from, to>;
VM_T_PAIRS(VM_DEF_PAIR, CVT)
#undef VM_DEF_PAIR

}  // namespace vm::tags
