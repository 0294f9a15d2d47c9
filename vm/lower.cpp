// Lowering of IR field programs to VM bytecode: every opcode comes from the
// instruction table (opcodes.hpp), every function's lowering from its row.
#include <algorithm>

#include "ir/functions.hpp"
#include "ir/values.hpp"
#include "vm.hpp"

namespace vm {

namespace {

using ir::Type;

const char* suffix(Type t) { return tagOf(t) == Tag::ANY ? "" : tagName(tagOf(t)); }

// The opcode of a family over type t (a compile error when the table has none).
Op opFor(Family f, Type t) {
  Op op = findOp(f, t);
  if (op == Op::COUNT_)
    throw ir::CompileError(std::string("no VM instruction ") + kFamilies[int(f)].name + "_" + suffix(t));
  return op;
}
Op cvtOp(Type from, Type to) {
  Op op = findCvt(from, to);
  if (op == Op::COUNT_) throw ir::CompileError(std::string("no VM instruction CVT_") + suffix(from) + "_" + suffix(to));
  return op;
}

// The family of a binary operator of the IR.
Family binaryFamily(ir::Op op) {
  switch (op) {
    case ir::Op::ADD: return Family::ADD;
    case ir::Op::SUBTRACT: return Family::SUB;
    case ir::Op::MULTIPLY: return Family::MUL;
    case ir::Op::DIVIDE: return Family::DIV;
    case ir::Op::POWER: return Family::POW;
    case ir::Op::CMP_EQUAL: return Family::EQ;
    case ir::Op::CMP_NOT_EQUAL: return Family::NE;
    case ir::Op::CMP_LT: return Family::LT;
    case ir::Op::CMP_GT: return Family::GT;
    case ir::Op::CMP_LE: return Family::LE;
    case ir::Op::CMP_GE: return Family::GE;
    case ir::Op::AND: return Family::AND;
    default: return Family::OR;
  }
}

struct Lowerer {
  const ir::Query& q;
  Program prog;
  std::vector<Type> types;  // static type stack

  void emit(Op op, int32_t a = 0, int32_t b = 0) { prog.code.push_back({op, a, b}); }
  void push(Type t) {
    types.push_back(t);
    prog.maxStack = std::max(prog.maxStack, int(types.size()));
  }
  Type pop() {
    Type t = types.back();
    types.pop_back();
    return t;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw ir::CompileError("stream '" + q.id + "': " + why, q.loc);
  }
  void need(size_t n) const {
    if (types.size() < n) fail("malformed field program (stack underflow)");
  }
  // Converts the value at `depth` (0 = top) to `to`.
  void convert(int depth, Type to, bool explicitConv = false) {
    Type& t = types[types.size() - 1 - size_t(depth)];
    if (t == to) return;
    emit(cvtOp(t, to), depth, explicitConv ? 1 : 0);
    t = to;
  }
  void constant(const ir::Value& v) {
    Slot s{};
    Type t = ir::valueType(v);
    switch (t) {
      case Type::BYTE: s.u8 = std::get<uint8_t>(v); break;
      case Type::INTEGER: s.i32 = std::get<int32_t>(v); break;
      case Type::UINT: s.u32 = std::get<uint32_t>(v); break;
      case Type::RATIONAL: {
        auto r = std::get<ir::Rational>(v);
        ir::val::Rat c = ir::val::ratFromWide(r.num, r.den);  // a literal beyond 32 bits rounds like any result
        s.rat[0] = c.num, s.rat[1] = c.den;
        break;
      }
      case Type::FLOAT: s.f32 = std::get<float>(v); break;
      case Type::DOUBLE: s.f64 = std::get<double>(v); break;
      case Type::STRING:
        s.str = uint32_t(prog.strings.size());
        prog.strings.push_back(std::get<std::string>(v));
        break;
      default: fail("unsupported constant " + ir::printForm(v));
    }
    prog.constants.push_back(s);
    emit(opFor(Family::CONST, t), int32_t(prog.constants.size() - 1));
    push(t);
  }
  void truth(int depth) {
    Type t = types[types.size() - 1 - size_t(depth)];
    emit(opFor(Family::TRUTH, t), depth);
    types[types.size() - 1 - size_t(depth)] = Type::INTEGER;
  }

  void binary(ir::Op op) {
    need(2);
    Type r = types.back(), l = types[types.size() - 2];
    switch (op) {
      case ir::Op::ADD:
      case ir::Op::SUBTRACT:
      case ir::Op::MULTIPLY:
      case ir::Op::DIVIDE:
      case ir::Op::POWER: {
        if (l == Type::STRING || r == Type::STRING) {
          if (op != ir::Op::ADD) fail("strings support only + (concatenation)");
          convert(1, Type::STRING);
          convert(0, Type::STRING);
          emit(Op::ADD_STR);
          pop();
          return;
        }
        Type t = std::max(l, r);
        if (t == Type::BYTE) t = Type::INTEGER;
        convert(1, t);
        convert(0, t);
        emit(opFor(binaryFamily(op), t));
        pop();
        return;
      }
      case ir::Op::CMP_EQUAL:
      case ir::Op::CMP_NOT_EQUAL:
      case ir::Op::CMP_LT:
      case ir::Op::CMP_GT:
      case ir::Op::CMP_LE:
      case ir::Op::CMP_GE: {
        Type t = std::max(l, r);
        convert(1, t);
        convert(0, t);
        emit(opFor(binaryFamily(op), t));
        pop();
        if (t == Type::STRING) types.back() = Type::INTEGER;  // string comparisons give INTEGER 1/0
        return;
      }
      case ir::Op::AND:
      case ir::Op::OR: {
        Type resultType = l == Type::STRING ? Type::INTEGER : l;
        truth(1);
        truth(0);
        emit(opFor(binaryFamily(op), Type::INTEGER));
        pop();
        convert(0, resultType);
        return;
      }
      default: fail(std::string("unsupported operator ") + ir::opName(op));
    }
  }

  // A call lowered as its function row says.
  void call(const std::string& name) {
    need(1);
    auto fn = ir::findFunction(name);
    if (!fn) fail("unknown function '" + name + "'");
    const std::string n = fn->name;
    Type t = types.back();
    if (fn->arg == ir::ArgRule::NUMBER && t == Type::STRING) fail("function '" + n + "' needs a number");
    if (fn->arg == ir::ArgRule::STRING && t != Type::STRING) fail("function '" + n + "' needs a string");
    switch (fn->vm) {
      case ir::VmImpl::MATH: emit(opFor(Family::MATH, t), fn->id); break;
      case ir::VmImpl::MATHD:
        convert(0, Type::DOUBLE);
        emit(Op::MATHD_F64, fn->id);
        break;
      case ir::VmImpl::ABS: emit(opFor(Family::ABS, t)); break;
      case ir::VmImpl::ISNULL:
        emit(Op::ISNULL);
        types.back() = Type::INTEGER;
        break;
      case ir::VmImpl::NULL2ZERO: emit(opFor(Family::NULL2ZERO, t)); break;
      case ir::VmImpl::ISZERO:
        truth(0);
        emit(Op::NOT_I32);
        break;
      case ir::VmImpl::ISNONZERO: truth(0); break;
      case ir::VmImpl::LENGTH:
        emit(Op::LENGTH_STR);
        types.back() = Type::INTEGER;
        break;
      case ir::VmImpl::CONVERT: convert(0, ir::resultType(*fn, t), true); break;
    }
  }

  // Lowers one program; leaves one value typed on the stack.
  void expr(const ir::Program& p, const ir::Layout& in, bool anyStreamIsOwn) {
    for (auto& t : p) {
      switch (t.op) {
        case ir::Op::PUSH_ID: {
          auto& [s, i] = std::get<ir::IdxPair>(t.v);
          if (!anyStreamIsOwn && s != q.id) fail("unresolved reference " + t.print());
          if (i < 0 || i >= int(in.elems.size())) fail("reference " + t.print() + " outside the record");
          Type et = in.elems[size_t(i)].type;
          emit(opFor(Family::LOAD, et), i);
          push(et);
          break;
        }
        case ir::Op::PUSH_VAL: constant(t.v); break;
        case ir::Op::ADD:
        case ir::Op::SUBTRACT:
        case ir::Op::MULTIPLY:
        case ir::Op::DIVIDE:
        case ir::Op::POWER:
        case ir::Op::CMP_EQUAL:
        case ir::Op::CMP_NOT_EQUAL:
        case ir::Op::CMP_LT:
        case ir::Op::CMP_GT:
        case ir::Op::CMP_LE:
        case ir::Op::CMP_GE:
        case ir::Op::AND:
        case ir::Op::OR: binary(t.op); break;
        case ir::Op::NOT: {
          need(1);
          Type orig = types.back();
          truth(0);
          emit(Op::NOT_I32);
          convert(0, orig == Type::STRING ? Type::INTEGER : orig);
          break;
        }
        case ir::Op::NEGATE: {
          need(1);
          if (types.back() == Type::STRING) fail("cannot negate a string");
          emit(opFor(Family::NEG, types.back()));
          break;
        }
        case ir::Op::CALL: call(std::get<std::string>(t.v)); break;
        case ir::Op::CALL2:
          need(1);
          convert(0, Type::STRING, true);
          break;
        default: fail(std::string("unsupported token ") + ir::opName(t.op) + " in a field program");
      }
    }
    if (types.size() != 1) fail("field program leaves " + std::to_string(types.size()) + " values");
  }
};

}  // namespace

Program lowerFields(const ir::Query& q, const ir::Layout& in, const ir::Layout& out) {
  Lowerer L{q, {}, {}};
  for (size_t f = 0; f < q.schema.size(); ++f) {
    const ir::Field& field = q.schema[f];
    L.types.clear();
    L.expr(field.program, in, false);
    // The first element of the field receives the value.
    int elem = -1;
    for (size_t e = 0; e < out.elems.size(); ++e)
      if (out.elems[e].field == int(f)) {
        elem = int(e);
        break;
      }
    if (elem < 0) L.fail("field " + field.name + " has no storage");
    Type ft = out.elems[size_t(elem)].type;
    L.convert(0, ft);
    L.emit(opFor(Family::STORE, ft), elem);
    L.types.clear();
  }
  return std::move(L.prog);
}

Program lowerCondition(const ir::Query& q, const ir::Program& cond, const ir::Layout& outRecord) {
  Lowerer L{q, {}, {}};
  L.expr(cond, outRecord, true);
  L.truth(0);
  L.emit(Op::STORE_I32, 0);
  return std::move(L.prog);
}

}  // namespace vm
