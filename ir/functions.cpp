#include "functions.hpp"

#include <strings.h>

#include <cmath>
#include <iterator>

namespace ir {

namespace {

using R = ResultRule;
using A = ArgRule;
using V = VmImpl;
using J = JitImpl;
using F = FoldRule;
using T = RewriteType;

double sqrtD(double x) { return std::sqrt(x); }
double ceilD(double x) { return std::ceil(x); }
double floorD(double x) { return std::floor(x); }
double fabsD(double x) { return std::fabs(x); }
double roundD(double x) { return std::round(x); }
double truncD(double x) { return std::trunc(x); }
double sinD(double x) { return std::sin(x); }
double cosD(double x) { return std::cos(x); }
double tanD(double x) { return std::tan(x); }
double expD(double x) { return std::exp(x); }
double logD(double x) { return std::log(x); }
double log2D(double x) { return std::log2(x); }

// name, arity, result, rejects RATIONAL, argument, VM, double function, JIT, fold, simplifier's type, meaning
const FunctionInfo kFunctions[] = {
    {"Sqrt", 1, R::SAME, true, A::NUMBER, V::MATH, sqrtD, J::HELPER, F::MATH, T::RESULT,
     "square root, computed in double"},
    {"Ceil", 1, R::SAME, false, A::NUMBER, V::MATH, ceilD, J::HELPER, F::MATH, T::RESULT, "round up"},
    {"Floor", 1, R::SAME, false, A::NUMBER, V::MATH, floorD, J::HELPER, F::MATH, T::RESULT, "round down"},
    {"Abs", 1, R::SAME, false, A::NUMBER, V::ABS, fabsD, J::NATIVE, F::MATH, T::NONE, "absolute value"},
    {"round", 1, R::SAME, false, A::NUMBER, V::MATH, roundD, J::HELPER, F::MATH, T::RESULT,
     "round half away from zero"},
    {"trunc", 1, R::SAME, false, A::NUMBER, V::MATH, truncD, J::HELPER, F::MATH, T::RESULT, "round toward zero"},
    {"sin", 1, R::DOUBLE, true, A::NUMBER, V::MATHD, sinD, J::HELPER, F::NONE, T::RESULT, "sine"},
    {"cos", 1, R::DOUBLE, true, A::NUMBER, V::MATHD, cosD, J::HELPER, F::NONE, T::RESULT, "cosine"},
    {"tan", 1, R::SAME, true, A::NUMBER, V::MATH, tanD, J::HELPER, F::NONE, T::RESULT, "tangent"},
    {"exp", 1, R::DOUBLE, true, A::NUMBER, V::MATHD, expD, J::HELPER, F::NONE, T::NONE, "e to the power x"},
    {"log", 1, R::SAME, true, A::NUMBER, V::MATH, logD, J::HELPER, F::NONE, T::RESULT, "natural logarithm"},
    {"log2", 1, R::SAME, true, A::NUMBER, V::MATH, log2D, J::HELPER, F::NONE, T::RESULT, "base-2 logarithm"},
    {"isnull", 1, R::INTEGER, false, A::ANY, V::ISNULL, nullptr, J::NATIVE, F::ZERO, T::RESULT,
     "1 when the argument is NULL, else 0"},
    {"null2zero", 1, R::KEEP, false, A::ANY, V::NULL2ZERO, nullptr, J::NATIVE, F::IDENTITY, T::NONE, "NULL becomes 0"},
    {"IsZero", 1, R::INTEGER, false, A::NUMBER, V::ISZERO, nullptr, J::NATIVE, F::NONE, T::NONE,
     "1 when the argument is zero"},
    {"IsNonZero", 1, R::INTEGER, false, A::NUMBER, V::ISNONZERO, nullptr, J::NATIVE, F::NONE, T::NONE,
     "1 when the argument is not zero"},
    {"Length", 1, R::INTEGER, false, A::STRING, V::LENGTH, nullptr, J::NONE, F::NONE, T::NONE, "length of a string"},
    {"to_integer", 1, R::INTEGER, false, A::ANY, V::CONVERT, nullptr, J::NATIVE, F::CONVERT, T::RESULT,
     "convert to INTEGER (truncating)"},
    {"to_float", 1, R::FLOAT, false, A::ANY, V::CONVERT, nullptr, J::NATIVE, F::CONVERT, T::RESULT, "convert to FLOAT"},
    {"to_double", 1, R::DOUBLE, false, A::ANY, V::CONVERT, nullptr, J::NATIVE, F::CONVERT, T::RESULT,
     "convert to DOUBLE"},
    {"to_string", 1, R::STRING, false, A::ANY, V::CONVERT, nullptr, J::NONE, F::NONE, T::RESULT, "convert to STRING"},
};

}  // namespace

std::optional<FunctionInfo> findFunction(const std::string& name) {
  for (size_t i = 0; i < std::size(kFunctions); ++i)
    if (strcasecmp(kFunctions[i].name, name.c_str()) == 0) {
      FunctionInfo f = kFunctions[i];
      f.id = int(i);
      return f;
    }
  return std::nullopt;
}

const FunctionInfo& functionById(int id) { return kFunctions[id]; }
int functionCount() { return int(std::size(kFunctions)); }

Type resultType(const FunctionInfo& f, Type arg) {
  switch (f.result) {
    case ResultRule::SAME:
    case ResultRule::KEEP: return arg;
    case ResultRule::INTEGER: return Type::INTEGER;
    case ResultRule::FLOAT: return Type::FLOAT;
    case ResultRule::DOUBLE: return Type::DOUBLE;
    case ResultRule::STRING: return Type::STRING;
  }
  return arg;
}

}  // namespace ir
