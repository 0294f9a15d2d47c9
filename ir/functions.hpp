// The scalar function table shared by the compiler (name and arity checks,
// result types) and the evaluators. Names match case-insensitively; the
// canonical spelling is what the plan stores.
#pragma once

#include <optional>
#include <string>

#include "ir.hpp"

namespace ir {

enum class ResultRule : uint8_t {
  SAME,     // the argument's type
  INTEGER,  // always INTEGER
  FLOAT,
  DOUBLE,
  STRING,
};

struct FunctionInfo {
  const char* name;  // canonical spelling
  int arity;
  ResultRule result;
  bool rejectsRational;  // transcendental functions need to_double first
  const char* meaning;
};

// Looks a function up by any letter case. nullopt when unknown.
std::optional<FunctionInfo> findFunction(const std::string& name);

}  // namespace ir
