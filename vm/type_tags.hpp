// Type tags of the VM instruction table's operand types (U8 I32 U32 RAT F32
// F64 STR, CVT pairs From_To), shared by the interpreter and the JIT lowering
// so that both dispatch on the same switch, generated from the table.
#pragma once

#include "ir/ir.hpp"
#include "ir/values.hpp"
#include "vm.hpp"

namespace vm::tags {

using ir::Type;

// A numeric tag: its C type, its ir::Type and the Slot member that holds it.
#define VM_SCALAR_TAG(Tag, CType, IrType, member)    \
  struct Tag {                                       \
    using C = CType;                                 \
    static constexpr Type T = Type::IrType;          \
    static C get(const Slot& s) { return s.member; } \
    static void set(Slot& s, C v) { s.member = v; }  \
  };
VM_SCALAR_TAG(U8, uint8_t, BYTE, u8)
VM_SCALAR_TAG(I32, int32_t, INTEGER, i32)
VM_SCALAR_TAG(U32, uint32_t, UINT, u32)
VM_SCALAR_TAG(F32, float, FLOAT, f32)
VM_SCALAR_TAG(F64, double, DOUBLE, f64)
#undef VM_SCALAR_TAG
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
