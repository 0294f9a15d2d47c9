// Constant evaluation of a field program with no input record, used only by
// the simplifier, with the VM's per-value functions (ir/semantics.hpp).
// Anything it cannot do exactly (NULL results, rationals,
// comparisons) reports "no value", and the simplifier then leaves the
// expression as written.
#include <cmath>
#include <limits>

#include "ir/functions.hpp"
#include "ir/semantics.hpp"
#include "passes.hpp"

namespace ir::passes {

namespace {

std::optional<double> asDouble(const Value& v) {
  switch (valueType(v)) {
    case Type::BYTE: return double(std::get<uint8_t>(v));
    case Type::INTEGER: return double(std::get<int32_t>(v));
    case Type::UINT: return double(std::get<uint32_t>(v));
    case Type::FLOAT: return double(std::get<float>(v));
    case Type::DOUBLE: return std::get<double>(v);
    default: return std::nullopt;
  }
}

std::optional<int64_t> asInt(const Value& v) {
  switch (valueType(v)) {
    case Type::BYTE: return std::get<uint8_t>(v);
    case Type::INTEGER: return std::get<int32_t>(v);
    case Type::UINT: return std::get<uint32_t>(v);
    default: return std::nullopt;
  }
}

std::optional<Value> castTo(Type t, double d) {
  if (!std::isfinite(d)) return std::nullopt;
  switch (t) {
    case Type::BYTE:
      if (d < 0 || d > 255) return std::nullopt;
      return Value(uint8_t(d));
    case Type::INTEGER:
      if (d < INT32_MIN || d > INT32_MAX) return std::nullopt;
      return Value(int32_t(d));
    case Type::UINT:
      if (d < 0 || d > UINT32_MAX) return std::nullopt;
      return Value(uint32_t(d));
    case Type::FLOAT: return Value(float(d));
    case Type::DOUBLE: return Value(d);
    default: return std::nullopt;
  }
}

// l op r by the VM's per-value functions over C (wide enough to be exact for
// integers); nothing for a NULL result (a zero divisor).
template <class C>
std::optional<C> arith(Op op, C l, C r) {
  C v{};
  switch (op) {
    case Op::ADD: return ir::val::add(l, r);
    case Op::SUBTRACT: return ir::val::sub(l, r);
    case Op::MULTIPLY: return ir::val::mul(l, r);
    case Op::DIVIDE:
      if (!ir::val::div(l, r, v)) return std::nullopt;  // NULL at run time
      return v;
    case Op::POWER:
      if (!ir::val::pow(l, r, v)) return std::nullopt;
      return v;
    default: return std::nullopt;
  }
}

std::optional<Value> binary(Op op, const Value& l, const Value& r) {
  Type lt = valueType(l), rt = valueType(r);
  if (lt == Type::STRING || rt == Type::STRING) {
    if (op != Op::ADD) return std::nullopt;
    auto text = [](const Value& v) -> std::optional<std::string> {
      if (auto* s = std::get_if<std::string>(&v)) return *s;
      if (auto i = asInt(v)) return std::to_string(*i);
      return std::nullopt;
    };
    auto a = text(l), b = text(r);
    if (!a || !b) return std::nullopt;
    return Value(*a + *b);
  }
  Type t = std::max(lt, rt);
  if (t == Type::BYTE) t = Type::INTEGER;
  if (op == Op::POWER && (t == Type::INTEGER || t == Type::UINT)) {  // in the type itself: the run-time value
    auto in = [&](auto c) -> std::optional<Value> {
      using C = decltype(c);
      auto v = arith<C>(op, C(*asInt(l)), C(*asInt(r)));
      return v ? std::optional<Value>(Value(*v)) : std::nullopt;
    };
    return t == Type::INTEGER ? in(int32_t{}) : in(uint32_t{});
  }
  if (t == Type::INTEGER || t == Type::UINT) {
    auto w = arith<int64_t>(op, *asInt(l), *asInt(r));  // exact: no fold when it does not fit
    if (!w) return std::nullopt;
    int64_t v = *w;
    if (t == Type::INTEGER) {
      if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
      return Value(int32_t(v));
    }
    if (v < 0 || v > UINT32_MAX) return std::nullopt;
    return Value(uint32_t(v));
  }
  // As the VM: both operands converted to the result type first, then the
  // operation in that type (a FLOAT sum is a float sum, not a rounded double).
  if (t == Type::FLOAT) {
    auto v = arith<float>(op, float(*asDouble(l)), float(*asDouble(r)));
    if (!v) return std::nullopt;
    return Value(*v);
  }
  if (t == Type::DOUBLE) {
    auto v = arith<double>(op, *asDouble(l), *asDouble(r));
    if (!v) return std::nullopt;
    return Value(*v);
  }
  return std::nullopt;
}

// -a as the VM negates (not 0 - a): FLOAT and DOUBLE keep the sign of zero,
// BYTE and UINT complement their bits, INTEGER wraps.
std::optional<Value> negate(const Value& a) {
  switch (valueType(a)) {
    case Type::BYTE: return Value(ir::val::neg(std::get<uint8_t>(a)));
    case Type::INTEGER: return Value(ir::val::neg(std::get<int32_t>(a)));
    case Type::UINT: return Value(ir::val::neg(std::get<uint32_t>(a)));
    case Type::FLOAT: return Value(ir::val::neg(std::get<float>(a)));
    case Type::DOUBLE: return Value(ir::val::neg(std::get<double>(a)));
    default: return std::nullopt;
  }
}

// A call folded by its row's folding rule.
std::optional<Value> call(const std::string& name, const Value& a) {
  auto fn = findFunction(name);
  if (!fn) return std::nullopt;
  Type at = valueType(a);
  auto d = asDouble(a);
  if (!d) return std::nullopt;
  switch (fn->fold) {
    case FoldRule::NONE: return std::nullopt;
    case FoldRule::ZERO: return Value(int32_t(0));
    case FoldRule::IDENTITY: return a;
    case FoldRule::CONVERT:
      if (fn->result == ResultRule::INTEGER) return castTo(Type::INTEGER, std::trunc(*d));
      if (fn->result == ResultRule::FLOAT) return Value(float(*d));
      if (fn->result == ResultRule::DOUBLE) return Value(*d);
      return std::nullopt;
    case FoldRule::MATH: {
      double v = fn->math(*d);  // a result outside the domain (NaN, infinities) is not folded
      if (isIntegral(at)) v = std::trunc(v);
      return castTo(at, v);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Value> evalConstant(const Program& prog) {
  std::vector<Value> st;
  for (auto& t : prog) {
    switch (t.op) {
      case Op::PUSH_VAL: st.push_back(t.v); break;
      case Op::ADD:
      case Op::SUBTRACT:
      case Op::MULTIPLY:
      case Op::DIVIDE:
      case Op::POWER: {
        if (st.size() < 2) return std::nullopt;
        Value r = st.back();
        st.pop_back();
        Value l = st.back();
        st.pop_back();
        auto v = binary(t.op, l, r);
        if (!v) return std::nullopt;
        st.push_back(*v);
        break;
      }
      case Op::NEGATE: {
        if (st.empty()) return std::nullopt;
        Value a = st.back();
        st.pop_back();
        auto v = negate(a);
        if (!v) return std::nullopt;
        st.push_back(*v);
        break;
      }
      case Op::CALL: {
        if (st.empty()) return std::nullopt;
        Value a = st.back();
        st.pop_back();
        auto v = call(std::get<std::string>(t.v), a);
        if (!v) return std::nullopt;
        st.push_back(*v);
        break;
      }
      default: return std::nullopt;
    }
  }
  if (st.size() != 1) return std::nullopt;
  return st.back();
}

}  // namespace ir::passes
