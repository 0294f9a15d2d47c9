// The VM instruction table: one row per handler family, with its operand
// types, operand mode, JIT support, NULL policy and meaning. The opcode enum
// (one opcode per family and type, CVT per ordered pair of distinct types),
// the (family, type) -> opcode table, the interpreter's and the JIT's dispatch,
// the disassembler and docs/opcodes.md are all generated from it.
#pragma once

#include <array>
#include <cstdint>

#include "ir/ir.hpp"

// VM_FAMILY(family, types, mode, stack, jit, nulls, meaning)
//   types: a type list below; mode: what fields a/b of the instruction mean;
//   stack: how many values the instruction leaves on the stack minus how many it takes;
//   jit: which of the family's opcodes the JIT lowers; nulls: NULL policy.
// Stack machine over typed slots; every slot carries a NULL flag. "a" is the
// top of the stack, "b" the value under it.
// The tables keep their columns:
// clang-format off
#define VM_FAMILIES(F, ...)                                                                                          \
  F(LOAD, ALL, ELEM, +1, NON_STRING, CARRY, "push input element a with its NULL flag", __VA_ARGS__)                     \
  F(CONST, ALL, CONST, +1, NON_STRING, NEVER, "push constant a", __VA_ARGS__)                                           \
  F(CVT, PAIRS, CONV, 0, NON_STRING, INTRODUCE,                                                                        \
    "convert the value at depth a between the pair's types; b=1 (explicit): a failed parse gives NULL, "            \
    "b=0: 0", __VA_ARGS__)                                                                                            \
  F(ADD, ARITH_STR, NONE, -1, NON_STRING, PROPAGATE, "b + a (STRING: concatenate b and a)", __VA_ARGS__)               \
  F(SUB, ARITH, NONE, -1, NON_STRING, PROPAGATE, "b - a", __VA_ARGS__)                                                  \
  F(MUL, ARITH, NONE, -1, NON_STRING, PROPAGATE, "b * a", __VA_ARGS__)                                                  \
  F(DIV, ARITH, NONE, -1, NON_STRING, INTRODUCE, "b / a; a zero divisor gives NULL", __VA_ARGS__)                       \
  F(POW, ARITH, NONE, -1, NON_STRING, INTRODUCE,                                                                        \
    "b ^ a: an integral power of an exact type multiplies, else floating point; a non-finite result gives NULL",  \
    __VA_ARGS__)                                                                                                     \
  F(NEG, NUM, NONE, 0, NON_STRING, PROPAGATE, "negate a (BYTE and UINT: bitwise complement)", __VA_ARGS__)             \
  F(EQ, ALL, NONE, -1, NON_STRING, PROPAGATE, "b = a, 1 or 0 in the operand type (STRING: INTEGER)", __VA_ARGS__)      \
  F(NE, ALL, NONE, -1, NON_STRING, PROPAGATE, "b != a, 1 or 0 in the operand type (STRING: INTEGER)", __VA_ARGS__)     \
  F(LT, ALL, NONE, -1, NON_STRING, PROPAGATE, "b < a, 1 or 0 in the operand type (STRING: INTEGER)", __VA_ARGS__)      \
  F(GT, ALL, NONE, -1, NON_STRING, PROPAGATE, "b > a, 1 or 0 in the operand type (STRING: INTEGER)", __VA_ARGS__)      \
  F(LE, ALL, NONE, -1, NON_STRING, PROPAGATE, "b <= a, 1 or 0 in the operand type (STRING: INTEGER)", __VA_ARGS__)     \
  F(GE, ALL, NONE, -1, NON_STRING, PROPAGATE, "b >= a, 1 or 0 in the operand type (STRING: INTEGER)", __VA_ARGS__)     \
  F(TRUTH, ALL, DEPTH, 0, NON_STRING, PROPAGATE, "truth of the value at depth a as INTEGER 1/0", __VA_ARGS__)          \
  F(AND, I32, NONE, -1, NON_STRING, KLEENE, "three-valued b AND a over INTEGER truth values", __VA_ARGS__)              \
  F(OR, I32, NONE, -1, NON_STRING, KLEENE, "three-valued b OR a over INTEGER truth values", __VA_ARGS__)                \
  F(NOT, I32, NONE, 0, NON_STRING, PROPAGATE, "three-valued NOT a over an INTEGER truth value", __VA_ARGS__)           \
  F(MATH, NUM, FN, 0, NON_STRING, PROPAGATE, "function a computed in DOUBLE, result cast back to the type",           \
    __VA_ARGS__)                                                                                                     \
  F(MATHD, F64, FN, 0, NON_STRING, INTRODUCE, "function a over DOUBLE; a non-finite result gives NULL", __VA_ARGS__)  \
  F(ABS, NUM, NONE, 0, NON_STRING, PROPAGATE, "absolute value", __VA_ARGS__)                                           \
  F(ISNULL, ANY, NONE, 0, ALL, ABSORB, "INTEGER 1 when a is NULL, else 0", __VA_ARGS__)                                \
  F(NULL2ZERO, ALL, NONE, 0, NON_STRING, ABSORB, "NULL becomes 0", __VA_ARGS__)                                        \
  F(LENGTH, STR, NONE, 0, NON_STRING, PROPAGATE, "INTEGER byte length of a string", __VA_ARGS__)                       \
  F(STORE, ALL, ELEM, -1, NON_STRING, CARRY, "pop a into output element a with its NULL flag", __VA_ARGS__)

// The operand types (tag, ir::Type) in the order of ir::Type.
#define VM_TYPES(X, ...)                                                                                            \
  X(U8, BYTE, __VA_ARGS__) X(I32, INTEGER, __VA_ARGS__) X(U32, UINT, __VA_ARGS__) X(RAT, RATIONAL, __VA_ARGS__)     \
  X(F32, FLOAT, __VA_ARGS__) X(F64, DOUBLE, __VA_ARGS__) X(STR, STRING, __VA_ARGS__)

// Type lists of the family rows. Each expands X(opcode, family, type tag, from, to).
#define VM_OP1(X, f, t) X(f##_##t, f, t, t, t)
#define VM_OP1_(t, irt, X, f) VM_OP1(X, f, t)
#define VM_T_ALL(X, f) VM_TYPES(VM_OP1_, X, f)
#define VM_T_ARITH(X, f) VM_OP1(X, f, I32) VM_OP1(X, f, U32) VM_OP1(X, f, RAT) VM_OP1(X, f, F32) VM_OP1(X, f, F64)
#define VM_T_NUM(X, f) VM_OP1(X, f, U8) VM_T_ARITH(X, f)
#define VM_T_ARITH_STR(X, f) VM_T_ARITH(X, f) VM_OP1(X, f, STR)
#define VM_T_I32(X, f) VM_OP1(X, f, I32)
#define VM_T_F64(X, f) VM_OP1(X, f, F64)
#define VM_T_STR(X, f) VM_OP1(X, f, STR)
#define VM_T_ANY(X, f) X(f, f, ANY, ANY, ANY)
// Every ordered pair of distinct types: VM_TYPES over VM_TYPES, the inner
// expansion deferred to a second scan (a macro cannot expand inside itself).
#define VM_EMPTY()
#define VM_EXPAND(...) __VA_ARGS__
#define VM_TYPES_INDIRECT() VM_TYPES
#define VM_PAIR_FROM(from, irf, X, f) VM_TYPES_INDIRECT VM_EMPTY()()(VM_PAIR_TO, X, f, from)
#define VM_PAIR_TO(to, irt, X, f, from) VM_PAIR_IF(from, to)(X(f##_##from##_##to, f, from##_##to, from, to))
#define VM_T_PAIRS(X, f) VM_EXPAND(VM_TYPES(VM_PAIR_FROM, X, f))
// VM_PAIR_IF(a, b)(tokens): the tokens when a and b differ.
#define VM_SAME_U8_U8 ~, 1
#define VM_SAME_I32_I32 ~, 1
#define VM_SAME_U32_U32 ~, 1
#define VM_SAME_RAT_RAT ~, 1
#define VM_SAME_F32_F32 ~, 1
#define VM_SAME_F64_F64 ~, 1
#define VM_SAME_STR_STR ~, 1
#define VM_SECOND(a, b, ...) b
#define VM_PROBE(...) VM_SECOND(__VA_ARGS__, 0, ~)
#define VM_CAT(a, b) VM_CAT_(a, b)
#define VM_CAT_(a, b) a##b
#define VM_KEEP_0(...) __VA_ARGS__
#define VM_KEEP_1(...)
#define VM_PAIR_IF(a, b) VM_CAT(VM_KEEP_, VM_PROBE(VM_SAME_##a##_##b))

// Every opcode: X(opcode, family, type tag, from tag, to tag).
#define VM_ROW_OPS(fam, types, mode, stack, jit, nulls, meaning, X) VM_T_##types(X, fam)
#define VM_OPCODES(X) VM_FAMILIES(VM_ROW_OPS, X)
// clang-format on

namespace vm {

enum class Family : uint8_t {
#define VM_ENUM_FAMILY(fam, ...) fam,
  VM_FAMILIES(VM_ENUM_FAMILY, ~)
#undef VM_ENUM_FAMILY
      COUNT_
};

enum class Op : uint16_t {
#define VM_ENUM_OP(name, ...) name,
  VM_OPCODES(VM_ENUM_OP)
#undef VM_ENUM_OP
      COUNT_
};

// What the instruction fields a/b mean.
enum class Mode : uint8_t {
  NONE,   // no operand
  ELEM,   // a: element of the input (LOAD) or output (STORE) record
  CONST,  // a: index into the program's constants
  DEPTH,  // a: stack depth of the operand (0 = top)
  CONV,   // a: stack depth; b: 1 for an explicit conversion
  FN,     // a: row of the scalar function table (ir/functions.hpp)
};
// Which of a family's opcodes the JIT lowers (the rest run on the VM).
enum class Jit : uint8_t { NON_STRING, ALL };
// How NULL flows through an instruction.
enum class Nulls : uint8_t {
  CARRY,      // the record's NULL flag moves with the value
  NEVER,      // the result is never NULL
  PROPAGATE,  // NULL when an operand is NULL
  INTRODUCE,  // PROPAGATE, and some non-NULL operands give NULL too
  KLEENE,     // three-valued logic: false AND NULL is false, true OR NULL is true
  ABSORB,     // a NULL operand becomes a value
};

// Operand type tags; ANY: the family takes a value of any type.
enum class Tag : uint8_t { U8, I32, U32, RAT, F32, F64, STR, ANY };
constexpr int kTagCount = int(Tag::ANY);

struct FamilyInfo {
  const char* name;
  const char* types;  // the row's type list
  Mode mode;
  int stack;  // values left on the stack minus values taken
  Jit jit;
  Nulls nulls;
  const char* meaning;
};
inline constexpr FamilyInfo kFamilies[] = {
#define VM_FAMILY_INFO(fam, types, mode, stack, jit, nulls, meaning, _) \
  {#fam, #types, Mode::mode, stack, Jit::jit, Nulls::nulls, meaning},
    VM_FAMILIES(VM_FAMILY_INFO, ~)
#undef VM_FAMILY_INFO
};

struct OpInfo {
  const char* name;
  Family family;
  Tag from, to;  // the operand type; CVT: from -> to
};
inline constexpr OpInfo kOps[] = {
#define VM_OP_INFO(name, fam, tag, from, to) {#name, Family::fam, Tag::from, Tag::to},
    VM_OPCODES(VM_OP_INFO)
#undef VM_OP_INFO
};
static_assert(std::size(kOps) == size_t(Op::COUNT_));

inline constexpr const FamilyInfo& familyOf(Op op) { return kFamilies[int(kOps[int(op)].family)]; }
inline constexpr const char* opName(Op op) { return kOps[int(op)].name; }
inline constexpr Mode opMode(Op op) { return familyOf(op).mode; }
inline constexpr int opStack(Op op) { return familyOf(op).stack; }
inline constexpr const char* opMeaning(Op op) { return familyOf(op).meaning; }
// Whether the JIT lowers this opcode (otherwise its program runs on the VM).
inline constexpr bool jitSupports(Op op) {
  const OpInfo& o = kOps[int(op)];
  return familyOf(op).jit == Jit::ALL || (o.from != Tag::STR && o.to != Tag::STR);
}

// The tag of an ir::Type (Tag::ANY: no VM type).
inline constexpr Tag tagOf(ir::Type t) {
  switch (t) {
#define VM_TAG_OF(tag, irt, _) \
  case ir::Type::irt: return Tag::tag;
    VM_TYPES(VM_TAG_OF, ~)
#undef VM_TAG_OF
    default: return Tag::ANY;
  }
}
inline constexpr const char* tagName(Tag t) {
  constexpr const char* names[] = {"U8", "I32", "U32", "RAT", "F32", "F64", "STR", "ANY"};
  return names[int(t)];
}

// (family, type) -> opcode and (from, to) -> CVT opcode; Op::COUNT_: none.
struct OpTables {
  std::array<std::array<Op, kTagCount + 1>, size_t(Family::COUNT_)> byType{};
  std::array<std::array<Op, kTagCount>, kTagCount> cvt{};
};
inline constexpr OpTables kOpTables = [] {
  OpTables t;
  for (auto& row : t.byType) row.fill(Op::COUNT_);
  for (auto& row : t.cvt) row.fill(Op::COUNT_);
  for (size_t i = 0; i < std::size(kOps); ++i) {
    const OpInfo& o = kOps[i];
    if (o.family == Family::CVT) t.cvt[int(o.from)][int(o.to)] = Op(i);
    else t.byType[int(o.family)][int(o.from)] = Op(i);
  }
  return t;
}();
inline constexpr Op findOp(Family f, ir::Type t) { return kOpTables.byType[int(f)][int(tagOf(t))]; }
inline constexpr Op findCvt(ir::Type from, ir::Type to) {
  Tag a = tagOf(from), b = tagOf(to);
  return a == Tag::ANY || b == Tag::ANY ? Op::COUNT_ : kOpTables.cvt[int(a)][int(b)];
}
static_assert(findOp(Family::ADD, ir::Type::STRING) == Op::ADD_STR);
static_assert(findCvt(ir::Type::STRING, ir::Type::DOUBLE) == Op::CVT_STR_F64);
static_assert(findCvt(ir::Type::DOUBLE, ir::Type::DOUBLE) == Op::COUNT_);
static_assert(!jitSupports(Op::LOAD_STR) && jitSupports(Op::ISNULL) && !jitSupports(Op::LENGTH_STR));

}  // namespace vm
