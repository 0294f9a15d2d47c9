// Lowering of IR field programs to VM bytecode, the interpreter and the
// disassembler. The opcode list, names and dispatch all come from opcodes.def.
#include "vm.hpp"

#include <strings.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ir/functions.hpp"
#include "type_tags.hpp"
#include "values.hpp"

namespace vm {

namespace {

struct OpInfo {
  const char* name;
  const char* operands;
  const char* meaning;
};
const OpInfo kOps[] = {
#define VMOP(name, family, types, operands, meaning) {#name, operands, meaning},
#include "opcodes.def"
#undef VMOP
};

using ir::Type;
using namespace vm::tags;

Op opFor(const char* family, Type t) {
  static const char* suffix[] = {"U8", "I32", "U32", "RAT", "F32", "F64", "", "", "STR"};
  std::string name = std::string(family) + "_" + suffix[int(t)];
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (name == kOps[i].name) return Op(i);
  throw ir::CompileError(std::string("no VM instruction ") + name);
}
Op cvtOp(Type from, Type to) {
  static const char* suffix[] = {"U8", "I32", "U32", "RAT", "F32", "F64", "", "", "STR"};
  return opFor((std::string("CVT_") + suffix[int(from)]).c_str(), to);
}

}  // namespace

double applyMath(MathFn f, double x) {
  switch (f) {
    case MathFn::SQRT: return std::sqrt(x);
    case MathFn::CEIL: return std::ceil(x);
    case MathFn::FLOOR: return std::floor(x);
    case MathFn::ROUND: return std::round(x);
    case MathFn::TRUNC: return std::trunc(x);
    case MathFn::TAN: return std::tan(x);
    case MathFn::LOG: return std::log(x);
    case MathFn::LOG2: return std::log2(x);
    case MathFn::SIN: return std::sin(x);
    case MathFn::COS: return std::cos(x);
    case MathFn::EXP: return std::exp(x);
  }
  return x;
}

const char* opName(Op op) { return kOps[int(op)].name; }
const char* opOperands(Op op) { return kOps[int(op)].operands; }
const char* opMeaning(Op op) { return kOps[int(op)].meaning; }

// ================================================================ lowering
namespace {

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
        val::Rat c = val::ratFromWide(r.num, r.den);  // a literal beyond 32 bits rounds like any result
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
    emit(opFor("CONST", t), int32_t(prog.constants.size() - 1));
    push(t);
  }
  void truth(int depth) {
    Type t = types[types.size() - 1 - size_t(depth)];
    emit(opFor("TRUTH", t), depth);
    types[types.size() - 1 - size_t(depth)] = Type::INTEGER;
  }

  void binary(ir::Op op) {
    need(2);
    Type r = types.back(), l = types[types.size() - 2];
    switch (op) {
      case ir::Op::ADD:
      case ir::Op::SUBTRACT:
      case ir::Op::MULTIPLY:
      case ir::Op::DIVIDE: {
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
        const char* fam = op == ir::Op::ADD ? "ADD" : op == ir::Op::SUBTRACT ? "SUB" : op == ir::Op::MULTIPLY ? "MUL" : "DIV";
        emit(opFor(fam, t));
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
        const char* fam = op == ir::Op::CMP_EQUAL ? "EQ" : op == ir::Op::CMP_NOT_EQUAL ? "NE" : op == ir::Op::CMP_LT ? "LT"
                          : op == ir::Op::CMP_GT  ? "GT" : op == ir::Op::CMP_LE      ? "LE" : "GE";
        emit(opFor(fam, t));
        pop();
        if (t == Type::STRING) types.back() = Type::INTEGER;  // string comparisons give INTEGER 1/0
        return;
      }
      case ir::Op::AND:
      case ir::Op::OR: {
        Type resultType = l == Type::STRING ? Type::INTEGER : l;
        truth(1);
        truth(0);
        emit(op == ir::Op::AND ? Op::AND_I32 : Op::OR_I32);
        pop();
        convert(0, resultType);
        return;
      }
      default: fail(std::string("unsupported operator ") + ir::opName(op));
    }
  }

  void call(const std::string& name) {
    need(1);
    auto fn = ir::findFunction(name);
    if (!fn) fail("unknown function '" + name + "'");
    const std::string n = fn->name;
    Type t = types.back();
    auto math = [&](MathFn f) {
      if (t == Type::STRING) fail("function '" + n + "' needs a number");
      emit(opFor("MATH", t), int32_t(f));
    };
    auto mathd = [&](MathFn f) {
      if (t == Type::STRING) fail("function '" + n + "' needs a number");
      convert(0, Type::DOUBLE);
      emit(Op::MATHD_F64, int32_t(f));
    };
    if (n == "Sqrt") math(MathFn::SQRT);
    else if (n == "Ceil") math(MathFn::CEIL);
    else if (n == "Floor") math(MathFn::FLOOR);
    else if (n == "round") math(MathFn::ROUND);
    else if (n == "trunc") math(MathFn::TRUNC);
    else if (n == "tan") math(MathFn::TAN);
    else if (n == "log") math(MathFn::LOG);
    else if (n == "log2") math(MathFn::LOG2);
    else if (n == "sin") mathd(MathFn::SIN);
    else if (n == "cos") mathd(MathFn::COS);
    else if (n == "exp") mathd(MathFn::EXP);
    else if (n == "Abs") {
      if (t == Type::STRING) fail("function 'Abs' needs a number");
      emit(opFor("ABS", t));
    } else if (n == "isnull") {
      emit(Op::ISNULL);
      types.back() = Type::INTEGER;
    } else if (n == "null2zero") {
      emit(opFor("NULL2ZERO", t));
    } else if (n == "IsZero") {
      if (t == Type::STRING) fail("function 'IsZero' needs a number");
      truth(0);
      emit(Op::NOT_I32);
    } else if (n == "IsNonZero") {
      if (t == Type::STRING) fail("function 'IsNonZero' needs a number");
      truth(0);
    } else if (n == "Length") {
      if (t != Type::STRING) fail("function 'Length' needs a string");
      emit(Op::LENGTH_STR);
      types.back() = Type::INTEGER;
    } else if (n == "to_integer") convert(0, Type::INTEGER, true);
    else if (n == "to_float") convert(0, Type::FLOAT, true);
    else if (n == "to_double") convert(0, Type::DOUBLE, true);
    else if (n == "to_string") convert(0, Type::STRING, true);
    else fail("function '" + n + "' has no VM lowering");
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
          emit(opFor("LOAD", et), i);
          push(et);
          break;
        }
        case ir::Op::PUSH_VAL: constant(t.v); break;
        case ir::Op::ADD:
        case ir::Op::SUBTRACT:
        case ir::Op::MULTIPLY:
        case ir::Op::DIVIDE:
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
          emit(opFor("NEG", types.back()));
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
    L.emit(opFor("STORE", ft), elem);
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

std::string disassemble(const Program& p) {
  std::string s;
  for (size_t i = 0; i < p.code.size(); ++i) {
    const Instr& in = p.code[i];
    char buf[128];
    snprintf(buf, sizeof buf, "%4zu  %-14s", i, opName(in.op));
    s += buf;
    std::string ops = opOperands(in.op);
    if (ops == "elem") s += " e" + std::to_string(in.a);
    else if (ops == "const") {
      s += " #" + std::to_string(in.a);
      if (in.op == Op::CONST_STR) s += " '" + p.strings[size_t(p.constants[size_t(in.a)].str)] + "'";
    } else if (ops == "fn") s += " fn" + std::to_string(in.a);
    else if (ops == "depth,explicit") s += " depth=" + std::to_string(in.a) + (in.b ? " explicit" : "");
    s += "\n";
  }
  return s;
}

// ================================================================ interpreter
struct Exec {
  Machine& m;
  const Program& p;
  const ir::Layout& in;
  RecordIn src;
  const ir::Layout& out;
  RecordOut dst;
  Slot* st;
  int sp = 0;  // number of values on the stack

  // ---------------------------------------------------------- strings
  uint32_t newStr() {
    if (m.poolUsed_ == m.pool_.size()) m.pool_.emplace_back();
    m.pool_[m.poolUsed_].clear();
    return m.poolUsed_++;
  }
  std::string& str(const Slot& s) { return m.pool_[s.str]; }
  uint32_t strOf(std::string_view v) {
    uint32_t i = newStr();
    m.pool_[i].assign(v.data(), v.size());
    return i;
  }

  Slot& top(int depth = 0) { return st[sp - 1 - depth]; }

  // ---------------------------------------------------------- families
  template <class T>
  void LOAD(const Instr& ins) {
    const ir::Element& e = in.elems[size_t(ins.a)];
    Slot& s = st[sp++];
    s.null = src.nulls[ins.a];
    const uint8_t* d = src.data + e.offset;
    if constexpr (std::is_same_v<T, STR>) {
      size_t n = strnlen(reinterpret_cast<const char*>(d), size_t(e.size));
      s.str = strOf(std::string_view(reinterpret_cast<const char*>(d), n));
    } else if constexpr (std::is_same_v<T, RAT>) {
      memcpy(s.rat, d, 8);
    } else {
      typename T::C v;
      memcpy(&v, d, sizeof v);
      T::set(s, v);
    }
  }
  template <class T>
  void CONST(const Instr& ins) {
    Slot& s = st[sp++];
    s = p.constants[size_t(ins.a)];
    s.null = 0;
    if constexpr (std::is_same_v<T, STR>) s.str = strOf(p.strings[size_t(p.constants[size_t(ins.a)].str)]);
  }
  template <class T>
  void STORE(const Instr& ins) {
    const ir::Element& e = out.elems[size_t(ins.a)];
    Slot& s = st[--sp];
    dst.nulls[ins.a] = s.null;
    uint8_t* d = dst.data + e.offset;
    if (s.null) {
      memset(d, 0, size_t(e.size));
      if constexpr (std::is_same_v<T, RAT>) {
        int32_t one = 1;
        memcpy(d + 4, &one, 4);
      }
      return;
    }
    if constexpr (std::is_same_v<T, STR>) {
      const std::string& v = str(s);
      size_t n = std::min(v.size(), size_t(e.size));
      memcpy(d, v.data(), n);
      memset(d + n, 0, size_t(e.size) - n);
    } else if constexpr (std::is_same_v<T, RAT>) {
      memcpy(d, s.rat, 8);
    } else {
      typename T::C v = T::get(s);
      // NaN sign and payload are not portable across optimisers: store one canonical NaN.
      if constexpr (std::is_floating_point_v<typename T::C>)
        if (std::isnan(v)) v = std::numeric_limits<typename T::C>::quiet_NaN();
      memcpy(d, &v, sizeof v);
    }
  }

  // ---------------------------------------------------------- conversions
  template <class To>
  bool fromDouble(Slot& s, double d) {
    if constexpr (std::is_same_v<To, U8>) s.u8 = val::f2u8(d);
    else if constexpr (std::is_same_v<To, I32>) s.i32 = val::f2i32(d);
    else if constexpr (std::is_same_v<To, U32>) s.u32 = val::f2u32(d);
    else if constexpr (std::is_same_v<To, F32>) s.f32 = float(d);
    else if constexpr (std::is_same_v<To, F64>) s.f64 = d;
    else if constexpr (std::is_same_v<To, RAT>) RAT::set(s, val::rationalize(d));
    return true;
  }
  template <class PairT>
  void CVT(const Instr& ins) {
    using From = typename PairT::From;
    using To = typename PairT::To;
    Slot& s = top(ins.a);
    if (s.null) return;  // NULL stays NULL
    bool ok = true;
    if constexpr (std::is_same_v<From, STR>) {
      std::string v = str(s);
      if constexpr (std::is_same_v<To, F32> || std::is_same_v<To, F64>) {
        double d;
        ok = val::parseDoublePrefix(v, d);
        if (ok) fromDouble<To>(s, d);
      } else if constexpr (std::is_same_v<To, RAT>) {
        val::Rat r;
        ok = val::parseRational(v, r);
        if (ok) RAT::set(s, r);
      } else {
        int32_t i;
        ok = val::parseIntPrefix(v, i);
        if (ok) {
          if constexpr (std::is_same_v<To, U8>) s.u8 = uint8_t(i);
          else if constexpr (std::is_same_v<To, I32>) s.i32 = i;
          else s.u32 = uint32_t(i);
        }
      }
      if (!ok) {
        // Explicit conversions give NULL; an implicit store gives 0 (not NULL).
        if (ins.b) s.null = 1;
        else fromDouble<To>(s, 0.0);
      }
    } else if constexpr (std::is_same_v<To, STR>) {
      if constexpr (std::is_same_v<From, F32> || std::is_same_v<From, F64>) s.str = strOf(val::fmtFixed(double(From::get(s))));
      else if constexpr (std::is_same_v<From, RAT>) s.str = strOf(val::fmtRat(RAT::get(s)));
      else s.str = strOf(std::to_string(From::get(s)));
    } else if constexpr (std::is_same_v<From, RAT>) {
      val::Rat r = RAT::get(s);
      if constexpr (std::is_same_v<To, F32>) s.f32 = float(r.num) / float(r.den);
      else if constexpr (std::is_same_v<To, F64>) s.f64 = double(r.num) / double(r.den);
      else {
        int32_t t = val::ratToInt(r);
        if constexpr (std::is_same_v<To, U8>) s.u8 = uint8_t(t);
        else if constexpr (std::is_same_v<To, I32>) s.i32 = t;
        else s.u32 = uint32_t(t);
      }
    } else if constexpr (std::is_same_v<To, RAT>) {
      if constexpr (std::is_same_v<From, F32> || std::is_same_v<From, F64>) RAT::set(s, val::rationalize(double(From::get(s))));
      else RAT::set(s, val::ratFromInt(int64_t(From::get(s))));
    } else if constexpr (std::is_same_v<From, F32> || std::is_same_v<From, F64>) {
      fromDouble<To>(s, double(From::get(s)));
    } else {
      To::set(s, typename To::C(From::get(s)));  // integer to integer or float: static_cast
    }
  }

  // ---------------------------------------------------------- arithmetic
  template <class T, class F>
  void arith(F f) {
    Slot& a = top(0);
    Slot& b = top(1);
    if (a.null || b.null) {
      b.null = 1;
      --sp;
      return;
    }
    f(b, a);
    --sp;
  }
  template <class T>
  static bool isZero(const Slot& s) {
    if constexpr (std::is_same_v<T, RAT>) return s.rat[0] == 0;
    else return T::get(s) == 0;
  }
  template <class T>
  void ADD(const Instr&) {
    if constexpr (std::is_same_v<T, STR>) {
      arith<T>([&](Slot& b, Slot& a) { b.str = strOf(str(b) + str(a)); });
    } else if constexpr (std::is_same_v<T, RAT>) {
      arith<T>([](Slot& b, Slot& a) { RAT::set(b, val::ratAdd(RAT::get(b), RAT::get(a))); });
    } else if constexpr (std::is_same_v<T, I32>) {
      arith<T>([](Slot& b, Slot& a) { b.i32 = int32_t(uint32_t(b.i32) + uint32_t(a.i32)); });
    } else {
      arith<T>([](Slot& b, Slot& a) { T::set(b, T::get(b) + T::get(a)); });
    }
  }
  template <class T>
  void SUB(const Instr&) {
    if constexpr (std::is_same_v<T, RAT>) {
      arith<T>([](Slot& b, Slot& a) { RAT::set(b, val::ratSub(RAT::get(b), RAT::get(a))); });
    } else if constexpr (std::is_same_v<T, I32>) {
      arith<T>([](Slot& b, Slot& a) { b.i32 = int32_t(uint32_t(b.i32) - uint32_t(a.i32)); });
    } else {
      arith<T>([](Slot& b, Slot& a) { T::set(b, T::get(b) - T::get(a)); });
    }
  }
  template <class T>
  void MUL(const Instr&) {
    if constexpr (std::is_same_v<T, RAT>) {
      arith<T>([](Slot& b, Slot& a) { RAT::set(b, val::ratMul(RAT::get(b), RAT::get(a))); });
    } else if constexpr (std::is_same_v<T, I32>) {
      arith<T>([](Slot& b, Slot& a) { b.i32 = int32_t(uint32_t(b.i32) * uint32_t(a.i32)); });
    } else {
      arith<T>([](Slot& b, Slot& a) { T::set(b, T::get(b) * T::get(a)); });
    }
  }
  template <class T>
  void DIV(const Instr&) {
    arith<T>([](Slot& b, Slot& a) {
      if (isZero<T>(a)) {
        b.null = 1;  // division by zero gives NULL
        return;
      }
      if constexpr (std::is_same_v<T, RAT>) RAT::set(b, val::ratDiv(RAT::get(b), RAT::get(a)));
      else if constexpr (std::is_same_v<T, I32>) {
        if (b.i32 == INT32_MIN && a.i32 == -1) b.i32 = INT32_MIN;  // wraps instead of trapping
        else b.i32 = b.i32 / a.i32;
      } else T::set(b, T::get(b) / T::get(a));
    });
  }
  template <class T>
  void NEG(const Instr&) {
    Slot& s = top();
    if (s.null) return;
    if constexpr (std::is_same_v<T, U8>) s.u8 = uint8_t(~s.u8);
    else if constexpr (std::is_same_v<T, U32>) s.u32 = ~s.u32;
    else if constexpr (std::is_same_v<T, I32>) s.i32 = int32_t(0u - uint32_t(s.i32));
    else if constexpr (std::is_same_v<T, RAT>) s.rat[0] = -s.rat[0];  // |num| <= 2^31-1: no overflow
    else T::set(s, -T::get(s));
  }

  // ---------------------------------------------------------- comparisons
  template <class T>
  int compare(const Slot& b, const Slot& a) {
    if constexpr (std::is_same_v<T, STR>) {
      int c = str(b).compare(str(a));
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    } else if constexpr (std::is_same_v<T, RAT>) {
      return val::ratCmp(RAT::get(b), RAT::get(a));
    } else {
      auto x = T::get(b), y = T::get(a);
      if constexpr (std::is_floating_point_v<typename T::C>)
        if (std::isnan(x) || std::isnan(y)) return 2;  // unordered: only != holds
      return x < y ? -1 : (y < x ? 1 : 0);
    }
  }
  template <class T>
  void setBool(Slot& s, bool v) {
    if constexpr (std::is_same_v<T, STR>) s.i32 = v ? 1 : 0;  // INTEGER, as inference types it
    else if constexpr (std::is_same_v<T, RAT>) RAT::set(s, val::Rat{v ? 1 : 0, 1});
    else T::set(s, typename T::C(v ? 1 : 0));
  }
  template <class T, class Pred>
  void cmp(Pred pred) {
    Slot& a = top(0);
    Slot& b = top(1);
    --sp;
    if (a.null || b.null) {
      b.null = 1;
      return;
    }
    setBool<T>(b, pred(compare<T>(b, a)));
  }
  template <class T> void EQ(const Instr&) { cmp<T>([](int c) { return c == 0; }); }
  template <class T> void NE(const Instr&) { cmp<T>([](int c) { return c != 0; }); }
  template <class T> void LT(const Instr&) { cmp<T>([](int c) { return c == -1; }); }
  template <class T> void GT(const Instr&) { cmp<T>([](int c) { return c == 1; }); }
  template <class T> void LE(const Instr&) { cmp<T>([](int c) { return c == -1 || c == 0; }); }
  template <class T> void GE(const Instr&) { cmp<T>([](int c) { return c == 1 || c == 0; }); }

  // ---------------------------------------------------------- logic
  template <class T>
  void TRUTH(const Instr& ins) {
    Slot& s = top(ins.a);
    if (s.null) return;
    bool v;
    if constexpr (std::is_same_v<T, STR>) v = !str(s).empty();
    else if constexpr (std::is_same_v<T, RAT>) v = s.rat[0] != 0;
    else v = T::get(s) != 0;
    s.i32 = v ? 1 : 0;
  }
  template <class T>
  void AND(const Instr&) {
    Slot& a = top(0);
    Slot& b = top(1);
    --sp;
    bool af = !a.null && a.i32 == 0, bf = !b.null && b.i32 == 0;
    if (af || bf) {
      b.null = 0;
      b.i32 = 0;
    } else if (a.null || b.null) {
      b.null = 1;
    } else {
      b.i32 = 1;
    }
  }
  template <class T>
  void OR(const Instr&) {
    Slot& a = top(0);
    Slot& b = top(1);
    --sp;
    bool at = !a.null && a.i32 != 0, bt = !b.null && b.i32 != 0;
    if (at || bt) {
      b.null = 0;
      b.i32 = 1;
    } else if (a.null || b.null) {
      b.null = 1;
    } else {
      b.i32 = 0;
    }
  }
  template <class T>
  void NOT(const Instr&) {
    Slot& s = top();
    if (!s.null) s.i32 = s.i32 ? 0 : 1;
  }

  // ---------------------------------------------------------- functions
  template <class T>
  void MATH(const Instr& ins) {
    Slot& s = top();
    if (s.null) return;
    double x;
    if constexpr (std::is_same_v<T, RAT>) x = double(s.rat[0]) / double(s.rat[1]);
    else x = double(T::get(s));
    fromDouble<T>(s, applyMath(MathFn(ins.a), x));
  }
  template <class T>
  void MATHD(const Instr& ins) {
    Slot& s = top();
    if (s.null) return;
    double r = applyMath(MathFn(ins.a), s.f64);
    if (!std::isfinite(r)) s.null = 1;
    else s.f64 = r;
  }
  template <class T>
  void ABS(const Instr&) {
    Slot& s = top();
    if (s.null) return;
    if constexpr (std::is_same_v<T, I32>) s.i32 = s.i32 < 0 ? int32_t(0u - uint32_t(s.i32)) : s.i32;
    else if constexpr (std::is_same_v<T, RAT>) s.rat[0] = s.rat[0] < 0 ? int32_t(0u - uint32_t(s.rat[0])) : s.rat[0];
    else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>) T::set(s, std::fabs(T::get(s)));
    // BYTE and UINT are never negative
  }
  template <class T>
  void ISNULL(const Instr&) {
    Slot& s = top();
    s.i32 = s.null ? 1 : 0;
    s.null = 0;
  }
  template <class T>
  void NULL2ZERO(const Instr&) {
    Slot& s = top();
    if (!s.null) return;
    s.null = 0;
    if constexpr (std::is_same_v<T, STR>) s.str = strOf("0");
    else if constexpr (std::is_same_v<T, RAT>) RAT::set(s, val::Rat{0, 1});
    else T::set(s, typename T::C(0));
  }
  template <class T>
  void LENGTH(const Instr&) {
    Slot& s = top();
    if (s.null) return;
    s.i32 = int32_t(str(s).size());
  }
};

bool Machine::run(const Program& p, const ir::Layout& in, RecordIn src, const ir::Layout& out, RecordOut dst) {
  if (stack_.size() < size_t(p.maxStack) + 1) stack_.resize(size_t(p.maxStack) + 1);
  poolUsed_ = 0;
  Exec x{*this, p, in, src, out, dst, stack_.data()};
  for (const Instr& ins : p.code) {
    switch (ins.op) {
#define VMOP(name, family, types, operands, meaning) \
  case Op::name:                                     \
    x.family<types>(ins);                            \
    break;
#include "opcodes.def"
#undef VMOP
      default: error_ = "bad instruction"; return false;
    }
  }
  return true;
}

}  // namespace vm
