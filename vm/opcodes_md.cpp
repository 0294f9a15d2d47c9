// Prints docs/opcodes.md from the instruction table (vm/opcodes.hpp) and the
// scalar function table (ir/functions.hpp); the opcodes-doc test diffs it
// against the checked-in file.
#include <cstdio>
#include <string>

#include "ir/functions.hpp"
#include "vm/opcodes.hpp"

namespace {

const char* modeText(vm::Mode m) {
  switch (m) {
    case vm::Mode::NONE: return "-";
    case vm::Mode::ELEM: return "a: element";
    case vm::Mode::CONST: return "a: constant";
    case vm::Mode::DEPTH: return "a: depth";
    case vm::Mode::CONV: return "a: depth, b: explicit";
    case vm::Mode::FN: return "a: function";
  }
  return "?";
}
const char* jitText(vm::Jit j) { return j == vm::Jit::ALL ? "all" : "non-string"; }
const char* nullsText(vm::Nulls n) {
  constexpr const char* names[] = {"carry", "never", "propagate", "introduce", "kleene", "absorb"};
  return names[int(n)];
}

// The family's operand types, from its opcodes.
std::string typesOf(size_t f) {
  if (vm::Family(f) == vm::Family::CVT) return "each ordered pair of distinct types";
  std::string s;
  for (const vm::OpInfo& o : vm::kOps)
    if (size_t(o.family) == f) {
      if (!s.empty()) s += ' ';
      s += vm::tagName(o.from);
    }
  return s;
}

void families() {
  printf("## Families\n\n");
  printf("| family | types | operands | stack | JIT | NULL | meaning |\n|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < std::size(vm::kFamilies); ++i) {
    const vm::FamilyInfo& f = vm::kFamilies[i];
    printf("| %s | %s | %s | %+d | %s | %s | %s |\n", f.name, typesOf(i).c_str(), modeText(f.mode), f.stack,
           jitText(f.jit), nullsText(f.nulls), f.meaning);
  }
  printf(
      "\nNULL: carry = the record's NULL flag moves with the value; never = the result is never NULL; "
      "propagate = NULL when an operand is NULL; introduce = propagate, and some non-NULL operands give NULL; "
      "kleene = three-valued logic; absorb = a NULL operand becomes a value. Stack: values the instruction "
      "leaves minus values it takes.\n\n");
}

void opcodes() {
  printf("## Opcodes\n\n| family | opcodes |\n|---|---|\n");
  for (size_t f = 0; f < std::size(vm::kFamilies); ++f) {
    std::string ops;
    for (size_t i = 0; i < size_t(vm::Op::COUNT_); ++i)
      if (size_t(vm::kOps[i].family) == f) {
        if (!ops.empty()) ops += ' ';
        ops += vm::kOps[i].name;
      }
    printf("| %s | %s |\n", vm::kFamilies[f].name, ops.c_str());
  }
  printf("\n%d opcodes.\n\n", int(vm::Op::COUNT_));
}

void functions() {
  constexpr const char* result[] = {"argument's type", "argument as is", "INTEGER", "FLOAT", "DOUBLE", "STRING"};
  constexpr const char* arg[] = {"any", "number", "string"};
  constexpr const char* vmImpl[] = {"MATH",      "MATHD", "ABS",    "ISNULL", "NULL2ZERO",
                                    "TRUTH NOT", "TRUTH", "LENGTH", "CVT"};
  constexpr const char* jit[] = {"calls rdb_math", "native", "not in JIT"};
  constexpr const char* fold[] = {"-", "math", "convert", "0", "identity"};
  printf(
      "## Functions\n\n| function | result | argument | VM | JIT | folded | meaning "
      "|\n|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < ir::functionCount(); ++i) {
    const ir::FunctionInfo& f = ir::functionById(i);
    printf("| %s | %s%s | %s | %s | %s | %s | %s |\n", f.name, result[int(f.result)],
           f.rejectsRational ? " (not RATIONAL)" : "", arg[int(f.arg)], vmImpl[int(f.vm)], jit[int(f.jit)],
           fold[int(f.fold)], f.meaning);
  }
}

}  // namespace

int main() {
  printf("# VM instructions\n\n");
  printf(
      "Generated from the instruction table `vm/opcodes.hpp` and the function table `ir/functions.cpp` by\n"
      "`vm/opcodes_md.cpp`; do not edit. After changing a table: `ninja -C build update-opcodes-doc`.\n\n");
  printf(
      "A stack machine over typed slots; every slot carries a NULL flag. `a` is the top of the stack and `b` the\n"
      "value under it; binary instructions pop both and push the result. One opcode per family and type\n"
      "(`ADD_I32`); CVT has one per ordered pair of distinct types (`CVT_F64_I32`). Programs with an opcode\n"
      "the JIT does not lower run on the VM.\n\n");
  families();
  opcodes();
  functions();
  return 0;
}
