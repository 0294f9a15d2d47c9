#include "functions.hpp"

#include <strings.h>

namespace ir {

static const FunctionInfo kFunctions[] = {
    {"Sqrt", 1, ResultRule::SAME, true, "square root, computed in double"},
    {"Ceil", 1, ResultRule::SAME, false, "round up"},
    {"Floor", 1, ResultRule::SAME, false, "round down"},
    {"Abs", 1, ResultRule::SAME, false, "absolute value"},
    {"round", 1, ResultRule::SAME, false, "round half away from zero"},
    {"trunc", 1, ResultRule::SAME, false, "round toward zero"},
    {"sin", 1, ResultRule::DOUBLE, true, "sine"},
    {"cos", 1, ResultRule::DOUBLE, true, "cosine"},
    {"tan", 1, ResultRule::SAME, true, "tangent"},
    {"exp", 1, ResultRule::DOUBLE, true, "e to the power x"},
    {"log", 1, ResultRule::SAME, true, "natural logarithm"},
    {"log2", 1, ResultRule::SAME, true, "base-2 logarithm"},
    {"isnull", 1, ResultRule::INTEGER, false, "1 when the argument is NULL, else 0"},
    {"null2zero", 1, ResultRule::SAME, false, "NULL becomes 0"},
    {"IsZero", 1, ResultRule::INTEGER, false, "1 when the argument is zero"},
    {"IsNonZero", 1, ResultRule::INTEGER, false, "1 when the argument is not zero"},
    {"Length", 1, ResultRule::INTEGER, false, "length of a string"},
    {"to_integer", 1, ResultRule::INTEGER, false, "convert to INTEGER (truncating)"},
    {"to_float", 1, ResultRule::FLOAT, false, "convert to FLOAT"},
    {"to_double", 1, ResultRule::DOUBLE, false, "convert to DOUBLE"},
    {"to_string", 1, ResultRule::STRING, false, "convert to STRING"},
};

std::optional<FunctionInfo> findFunction(const std::string& name) {
  for (auto& f : kFunctions)
    if (strcasecmp(f.name, name.c_str()) == 0) return f;
  return std::nullopt;
}

}  // namespace ir
