// Expression simplification: constant folding, reassociation of integer
// constant tails (x+1+2 -> x+3, 2*x*3 -> 6*x) and neutral elements (x+0,
// x*1). Floating-point expressions are never reassociated.
#include <algorithm>
#include <map>
#include <strings.h>

#include "passes.hpp"

namespace ir::passes {

namespace {

struct Tail {
  Op op;
  Value c;
  bool constOnLeft;
  Program base;
  std::optional<Type> baseType;
};

struct Node {
  Program program;
  std::optional<Value> constant;
  std::optional<Type> type;
  std::optional<Tail> tail;
};

bool isExactInt(Type t) { return t == Type::BYTE || t == Type::INTEGER || t == Type::UINT || t == Type::RATIONAL; }

Node constNode(const Value& v) {
  Node n;
  n.program = {Token(Op::PUSH_VAL, v)};
  n.constant = v;
  n.type = valueType(v);
  return n;
}

std::optional<Value> eval3(const Value& a, const Value& b, Op op) {
  return evalConstant({Token(Op::PUSH_VAL, a), Token(Op::PUSH_VAL, b), Token(op)});
}

bool isZeroOrOne(const Value& v, int which) {
  if (auto* i = std::get_if<int32_t>(&v)) return *i == which;
  if (auto* u = std::get_if<uint32_t>(&v)) return *u == uint32_t(which);
  if (auto* b = std::get_if<uint8_t>(&v)) return *b == which;
  if (auto* r = std::get_if<Rational>(&v)) return r->num == which && r->den == 1;
  return false;
}

Op swapAddSub(Op op) { return op == Op::ADD ? Op::SUBTRACT : Op::ADD; }

// Rule B: fold a new constant into an existing constant tail.
std::optional<Node> reassociate(const Node& n, Op op2, const Value& c2) {
  if (!n.tail || !n.tail->baseType) return std::nullopt;
  const Tail& t = *n.tail;
  Type T = *t.baseType, t1 = valueType(t.c), t2 = valueType(c2);
  bool ints = isExactInt(T) && isExactInt(t1) && isExactInt(t2);
  bool strings = T == Type::STRING && t1 == Type::STRING && t2 == Type::STRING && !t.constOnLeft &&
                 t.op == Op::ADD && op2 == Op::ADD;
  if (!ints && !strings) return std::nullopt;
  Op fold;
  if (t.op == Op::MULTIPLY) {
    if (op2 != Op::MULTIPLY) return std::nullopt;
    fold = Op::MULTIPLY;
  } else if ((t.op == Op::ADD || t.op == Op::SUBTRACT) && (op2 == Op::ADD || op2 == Op::SUBTRACT)) {
    fold = (t.op == Op::SUBTRACT && !t.constOnLeft) ? swapAddSub(op2) : op2;
  } else {
    return std::nullopt;
  }
  auto v = eval3(t.c, c2, fold);
  if (!v) return std::nullopt;
  Node out;
  if (t.constOnLeft) {
    out.program = {Token(Op::PUSH_VAL, *v)};
    out.program.insert(out.program.end(), t.base.begin(), t.base.end());
  } else {
    out.program = t.base;
    out.program.push_back(Token(Op::PUSH_VAL, *v));
  }
  out.program.push_back(Token(t.op));
  out.type = std::max(T, valueType(*v));
  out.tail = Tail{t.op, *v, t.constOnLeft, t.base, t.baseType};
  return out;
}

// Rule C: x+0, x-0, x*1, x/1 over an exact type equal to the constant's.
std::optional<Node> neutral(const Node& n, Op op, const Value& c) {
  if (!n.type || !isExactInt(*n.type) || valueType(c) != *n.type) return std::nullopt;
  if ((op == Op::ADD || op == Op::SUBTRACT) && isZeroOrOne(c, 0)) return n;
  if ((op == Op::MULTIPLY || op == Op::DIVIDE) && isZeroOrOne(c, 1)) return n;
  return std::nullopt;
}

std::optional<Type> callType(const std::string& name, std::optional<Type> arg) {
  auto is = [&](const char* n) { return strcasecmp(name.c_str(), n) == 0; };
  if (is("to_integer")) return Type::INTEGER;
  if (is("to_float")) return Type::FLOAT;
  if (is("to_double")) return Type::DOUBLE;
  if (is("to_string")) return Type::STRING;
  if (is("isnull")) return Type::INTEGER;
  for (const char* n : {"floor", "ceil", "sqrt", "round", "sin", "cos", "tan", "log", "log2", "trunc"})
    if (is(n)) return arg;
  return std::nullopt;
}

struct Simplifier {
  const Plan& p;
  const Query& q;
  std::vector<Field> input;

  mutable std::map<std::string, std::vector<Field>> flat;  // flattened schemas, built once per stream

  std::optional<Type> idType(const IdxPair& ref) const {
    // The stream's own name takes the type of its output field i (compatible rule).
    const std::vector<Field>* rec = &q.schema;
    if (ref.first != q.id) {
      auto it = flat.find(ref.first);
      if (it == flat.end()) {
        const Query* s = p.find(ref.first);
        if (!s) return std::nullopt;
        it = flat.emplace(ref.first, flattenSchema(*s)).first;
      }
      rec = &it->second;
    }
    if (ref.second < 0 || ref.second >= int(rec->size())) return std::nullopt;
    Type t = (*rec)[size_t(ref.second)].type;
    if (t > Type::NULLT) return std::nullopt;
    return t;
  }

  // Returns the simplified program, or nothing when it should stay as written.
  std::optional<Program> run(const Program& prog) const {
    std::vector<Node> st;
    bool fired = false;
    for (auto& tok : prog) {
      switch (tok.op) {
        case Op::PUSH_VAL: st.push_back(constNode(tok.v)); break;
        case Op::PUSH_ID: {
          Node n;
          n.program = {tok};
          n.type = idType(std::get<IdxPair>(tok.v));
          st.push_back(std::move(n));
          break;
        }
        case Op::PUSH_ID2: {
          Node n;
          n.program = {tok};
          st.push_back(std::move(n));
          break;
        }
        case Op::NEGATE:
        case Op::NOT:
        case Op::CALL:
        case Op::CALL2: {
          if (st.empty()) return std::nullopt;
          Node a = st.back();
          st.pop_back();
          if (a.constant) {
            if (auto v = evalConstant({Token(Op::PUSH_VAL, *a.constant), tok})) {
              st.push_back(constNode(*v));
              fired = true;
              break;
            }
          }
          Node n;
          n.program = a.program;
          n.program.push_back(tok);
          if (tok.op == Op::NEGATE) n.type = a.type;
          else if (tok.op == Op::CALL) n.type = callType(std::get<std::string>(tok.v), a.type);
          else if (tok.op == Op::CALL2) n.type = Type::STRING;
          st.push_back(std::move(n));
          break;
        }
        case Op::ADD:
        case Op::SUBTRACT:
        case Op::MULTIPLY:
        case Op::DIVIDE:
        case Op::CMP_EQUAL:
        case Op::CMP_LT:
        case Op::CMP_GT:
        case Op::CMP_LE:
        case Op::CMP_GE:
        case Op::CMP_NOT_EQUAL:
        case Op::AND:
        case Op::OR: {
          if (st.size() < 2) return std::nullopt;
          Node R = st.back();
          st.pop_back();
          Node L = st.back();
          st.pop_back();
          const Op op = tok.op;
          if (L.constant && R.constant) {
            if (auto v = eval3(*L.constant, *R.constant, op)) {
              st.push_back(constNode(*v));
              fired = true;
              break;
            }
          }
          if (R.constant && !L.constant) {
            if (auto n = reassociate(L, op, *R.constant)) {
              st.push_back(*n);
              fired = true;
              break;
            }
            if (auto n = neutral(L, op, *R.constant)) {
              st.push_back(*n);
              fired = true;
              break;
            }
          }
          if (L.constant && !R.constant && (op == Op::ADD || op == Op::MULTIPLY) && R.type && isNumeric(*R.type) &&
              isNumeric(valueType(*L.constant))) {
            if (auto n = reassociate(R, op, *L.constant)) {
              st.push_back(*n);
              fired = true;
              break;
            }
            if (auto n = neutral(R, op, *L.constant)) {
              st.push_back(*n);
              fired = true;
              break;
            }
          }
          Node n;
          n.program = L.program;
          n.program.insert(n.program.end(), R.program.begin(), R.program.end());
          n.program.push_back(tok);
          bool arith = op == Op::ADD || op == Op::SUBTRACT || op == Op::MULTIPLY || op == Op::DIVIDE;
          if (arith && L.type && R.type) n.type = std::max(*L.type, *R.type);
          if (op == Op::ADD || op == Op::SUBTRACT || op == Op::MULTIPLY) {
            if (R.constant && !L.constant) n.tail = Tail{op, *R.constant, false, L.program, L.type};
            else if (L.constant && !R.constant) n.tail = Tail{op, *L.constant, true, R.program, R.type};
          }
          st.push_back(std::move(n));
          break;
        }
        default: return std::nullopt;
      }
    }
    if (!fired || st.size() != 1) return std::nullopt;
    return st.back().program;
  }
};

}  // namespace

void simplifyFieldExpressions(Plan& p) {
  for (auto& q : p.queries) {
    if (q.isDirective()) continue;
    Simplifier s{p, q, inputRecord(p, q), {}};
    for (auto& f : q.schema)
      if (auto prog = s.run(f.program)) f.program = *prog;
    for (auto& r : q.rules)
      if (auto prog = s.run(r.condition)) r.condition = *prog;
  }
}

}  // namespace ir::passes
