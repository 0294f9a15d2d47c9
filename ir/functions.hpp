// The scalar function table shared by the compiler (name and arity checks,
// result types, folding, the simplifier's typing) and the evaluators (the VM's
// lowering and its double functions). Each row says everything about its
// function; no pass chooses behaviour by name. Names match case-insensitively;
// the canonical spelling is what the plan stores.
#pragma once

#include <optional>
#include <string>

#include "ir.hpp"

namespace ir {

// The result type (shape inference and the field's type).
enum class ResultRule : uint8_t {
  SAME,     // the argument's numeric type
  KEEP,     // the argument's shape as it is (any type, a string's width too)
  INTEGER,  // always INTEGER
  FLOAT,
  DOUBLE,
  STRING,  // a STRING of 32 characters
};
// What the argument must be (the VM's lowering rejects others).
enum class ArgRule : uint8_t { ANY, NUMBER, STRING };
// How the VM computes it (vm/lower.cpp turns the row into opcodes).
enum class VmImpl : uint8_t {
  MATH,       // MATH_<argument type>: `math` in double, cast back
  MATHD,      // converted to DOUBLE, MATHD_F64: `math`, a non-finite result is NULL
  ABS,        // ABS_<type>
  ISNULL,     // ISNULL
  NULL2ZERO,  // NULL2ZERO_<type>
  ISZERO,     // TRUTH_<type>, NOT_I32
  ISNONZERO,  // TRUTH_<type>
  LENGTH,     // LENGTH_STR
  CONVERT,    // an explicit CVT to the result type (a failed parse gives NULL)
};
// How the JIT lowers it.
enum class JitImpl : uint8_t {
  HELPER,  // generated code calls `math` through the runtime helper rdb_math
  NATIVE,  // inline code of the row's opcodes
  NONE,    // not in the JIT: the program runs on the VM
};
// How the constant folder (passes/eval.cpp) evaluates it over a numeric,
// non-RATIONAL constant; no fold leaves the call to run time.
enum class FoldRule : uint8_t {
  NONE,      // never folded
  MATH,      // `math` in double, truncated for integral types; no fold when it does not fit the argument's type
  CONVERT,   // to the result type (INTEGER truncated; no fold when out of range)
  ZERO,      // a constant is never NULL: INTEGER 0
  IDENTITY,  // the constant itself
};
// The type the simplifier (passes/simplify.cpp) gives the call when it
// decides on rewrites of the expression around it.
enum class RewriteType : uint8_t {
  NONE,    // unknown: no rewrite relies on it
  RESULT,  // the result rule's type
};

struct FunctionInfo {
  const char* name;  // canonical spelling
  int arity;
  ResultRule result;
  bool rejectsRational;  // transcendental functions need to_double first
  ArgRule arg;
  VmImpl vm;
  double (*math)(double);  // MATH and MATHD, and the MATH fold (nullptr: none)
  JitImpl jit;
  FoldRule fold;
  RewriteType rewrite;
  const char* meaning;
  int id = -1;  // the row's index: operand a of MATH and MATHD
};

// Looks a function up by any letter case. nullopt when unknown.
std::optional<FunctionInfo> findFunction(const std::string& name);
// The row of a MATH / MATHD operand.
const FunctionInfo& functionById(int id);
int functionCount();

// The result type of a call over an argument of type `arg` (RESULT rows).
Type resultType(const FunctionInfo& f, Type arg);

}  // namespace ir
