// Expression simplification: constant folding, reassociation of integer
// constant tails (x+1+2 -> x+3, 2*x*3 -> 6*x) and neutral elements (x+0,
// x*1). Floating-point expressions are never reassociated.
#include <algorithm>
#include <map>

#include "flat.hpp"
#include "ir/functions.hpp"
#include "passes.hpp"

namespace ir::passes {

namespace {

// Programs under construction are segments in an arena: a token, or the
// concatenation of two segments. Joining is O(1); the result is flattened
// once. (Copying programs at every operator made long expressions quadratic.)
struct Arena {
  struct Seg {
    int32_t a = -1, b = -1;  // concatenation a ++ b when tok is unset
    std::optional<Token> tok;
  };
  std::vector<Seg> segs;
  int32_t leaf(const Token& t) {
    segs.push_back(Seg{-1, -1, t});
    return int32_t(segs.size() - 1);
  }
  int32_t cat(int32_t a, int32_t b) {
    segs.push_back(Seg{a, b, std::nullopt});
    return int32_t(segs.size() - 1);
  }
  Program flatten(int32_t root) const {
    Program out;
    std::vector<int32_t> todo{root};
    while (!todo.empty()) {
      int32_t i = todo.back();
      todo.pop_back();
      const Seg& g = segs[size_t(i)];
      if (g.tok) {
        out.push_back(*g.tok);
      } else {
        todo.push_back(g.b);
        todo.push_back(g.a);
      }
    }
    return out;
  }
};

struct Tail {
  Op op;
  Value c;
  bool constOnLeft;
  int32_t base;  // segment of the expression the constant applies to
  std::optional<Type> baseType;
};

struct Node {
  int32_t program = -1;  // segment
  std::optional<Value> constant;
  std::optional<Type> type;
  std::optional<Tail> tail;
};

// Types whose + - * are associative (integers wrap): constant tails may be merged.
// RATIONAL is not among them: its results saturate and round to the nearest
// representable fraction, so (x + c1) + c2 and x + (c1 + c2) can differ.
bool isAssociative(Type t) { return t == Type::BYTE || t == Type::INTEGER || t == Type::UINT; }
// Types in which x + 0, x - 0, x * 1 and x / 1 are exactly x.
bool hasExactNeutral(Type t) { return isAssociative(t) || t == Type::RATIONAL; }

Node constNode(Arena& ar, const Value& v) {
  Node n;
  n.program = ar.leaf(Token(Op::PUSH_VAL, v));
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
std::optional<Node> reassociate(Arena& ar, const Node& n, Op op2, const Value& c2) {
  if (!n.tail || !n.tail->baseType) return std::nullopt;
  const Tail& t = *n.tail;
  Type T = *t.baseType, t1 = valueType(t.c), t2 = valueType(c2);
  bool ints = isAssociative(T) && isAssociative(t1) && isAssociative(t2);
  bool strings = T == Type::STRING && t1 == Type::STRING && t2 == Type::STRING && !t.constOnLeft && t.op == Op::ADD &&
                 op2 == Op::ADD;
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
  const int32_t val = ar.leaf(Token(Op::PUSH_VAL, *v));
  out.program = ar.cat(t.constOnLeft ? ar.cat(val, t.base) : ar.cat(t.base, val), ar.leaf(Token(t.op)));
  out.type = std::max(T, valueType(*v));
  out.tail = Tail{t.op, *v, t.constOnLeft, t.base, t.baseType};
  return out;
}

// Rule C: x+0, x-0, x*1, x/1 over an exact type equal to the constant's.
std::optional<Node> neutral(const Node& n, Op op, const Value& c) {
  if (!n.type || !hasExactNeutral(*n.type) || valueType(c) != *n.type) return std::nullopt;
  if ((op == Op::ADD || op == Op::SUBTRACT) && isZeroOrOne(c, 0)) return n;
  if ((op == Op::MULTIPLY || op == Op::DIVIDE) && isZeroOrOne(c, 1)) return n;
  return std::nullopt;
}

// The call's type as the function row gives it to the simplifier.
std::optional<Type> callType(const std::string& name, std::optional<Type> arg) {
  auto fn = findFunction(name);
  if (!fn) return std::nullopt;
  switch (fn->rewrite) {
    case RewriteType::NONE: return std::nullopt;
    case RewriteType::RESULT:
      if (fn->result == ResultRule::SAME || fn->result == ResultRule::KEEP) return arg;
      return resultType(*fn, Type::NULLT);
  }
  return std::nullopt;
}

struct Simplifier {
  const Query& q;
  FlatIndex& flat;
  InputView& input;        // q's input record: what the VM reads for q's own name
  bool condition = false;  // a rule condition: every reference reads q's output record

  std::optional<Type> idType(const IdxPair& ref) const {
    // A rule sees the record q wrote: element k is output field k, whatever
    // stream the reference names (vm::lowerCondition reads them so).
    if (condition) {
      if (ref.second < 0 || ref.second >= int(q.schema.size())) return std::nullopt;
      const Type t = q.schema[size_t(ref.second)].type;
      if (t > Type::NULLT) return std::nullopt;
      return t;
    }
    // The stream's own name reads element i of its input record (its FROM
    // result), as the VM and shape inference do; not its output field i.
    if (ref.first == q.id) {
      auto f = input.slot(ref.second);
      if (!f || f->type > Type::NULLT) return std::nullopt;
      return f->type;
    }
    const Query* s = flat.plan().find(ref.first);
    if (!s) return std::nullopt;
    auto f = flat.slot(*s, ref.second);
    if (!f || f->type > Type::NULLT) return std::nullopt;
    return f->type;
  }

  // x op c (or c op x for + and *): reassociated, or a neutral element dropped.
  static std::optional<Node> withConstant(Arena& ar, const Node& x, Op op, const Value& c) {
    if (auto n = reassociate(ar, x, op, c)) return n;
    return neutral(x, op, c);
  }

  // NEGATE, NOT and calls: folded over a constant, else typed.
  Node unary(Arena& ar, const Token& tok, const Node& a, bool& fired) const {
    if (a.constant)
      if (auto v = evalConstant({Token(Op::PUSH_VAL, *a.constant), tok})) {
        fired = true;
        return constNode(ar, *v);
      }
    Node n;
    n.program = ar.cat(a.program, ar.leaf(tok));
    if (tok.op == Op::NEGATE) n.type = a.type;
    else if (tok.op == Op::CALL) n.type = callType(std::get<std::string>(tok.v), a.type);
    else if (tok.op == Op::CALL2) n.type = Type::STRING;
    return n;
  }

  // Arithmetic, comparisons, AND, OR: folded, reassociated or a neutral
  // element dropped; else typed, with its constant tail for later rewrites.
  Node binary(Arena& ar, const Token& tok, const Node& L, const Node& R, bool& fired) const {
    const Op op = tok.op;
    std::optional<Node> r;
    if (L.constant && R.constant) {
      if (auto v = eval3(*L.constant, *R.constant, op)) r = constNode(ar, *v);
    } else if (R.constant) {
      r = withConstant(ar, L, op, *R.constant);
    } else if (L.constant && (op == Op::ADD || op == Op::MULTIPLY) && R.type && isNumeric(*R.type) &&
               isNumeric(valueType(*L.constant))) {
      r = withConstant(ar, R, op, *L.constant);
    }
    if (r) {
      fired = true;
      return std::move(*r);
    }
    Node n;
    n.program = ar.cat(ar.cat(L.program, R.program), ar.leaf(tok));
    bool arith = op == Op::ADD || op == Op::SUBTRACT || op == Op::MULTIPLY || op == Op::DIVIDE;
    if (arith && L.type && R.type) n.type = std::max(*L.type, *R.type);
    if (op == Op::ADD || op == Op::SUBTRACT || op == Op::MULTIPLY) {
      if (R.constant && !L.constant) n.tail = Tail{op, *R.constant, false, L.program, L.type};
      else if (L.constant && !R.constant) n.tail = Tail{op, *L.constant, true, R.program, R.type};
    }
    return n;
  }

  // Returns the simplified program, or nothing when it should stay as written.
  std::optional<Program> run(const Program& prog) const {
    Arena ar;
    ar.segs.reserve(prog.size() * 2);
    std::vector<Node> st;
    bool fired = false;
    auto pop = [&] {
      Node n = std::move(st.back());
      st.pop_back();
      return n;
    };
    for (auto& tok : prog) {
      switch (tok.op) {
        case Op::PUSH_VAL: st.push_back(constNode(ar, tok.v)); break;
        case Op::PUSH_ID:
        case Op::PUSH_ID2: {
          Node n;
          n.program = ar.leaf(tok);
          if (tok.op == Op::PUSH_ID) n.type = idType(std::get<IdxPair>(tok.v));
          st.push_back(std::move(n));
          break;
        }
        case Op::NEGATE:
        case Op::NOT:
        case Op::CALL:
        case Op::CALL2: {
          if (st.empty()) return std::nullopt;
          Node a = pop();
          st.push_back(unary(ar, tok, a, fired));
          break;
        }
        case Op::ADD:
        case Op::SUBTRACT:
        case Op::MULTIPLY:
        case Op::DIVIDE:
        case Op::POWER:
        case Op::CMP_EQUAL:
        case Op::CMP_LT:
        case Op::CMP_GT:
        case Op::CMP_LE:
        case Op::CMP_GE:
        case Op::CMP_NOT_EQUAL:
        case Op::AND:
        case Op::OR: {
          if (st.size() < 2) return std::nullopt;
          Node R = pop();
          Node L = pop();
          st.push_back(binary(ar, tok, L, R, fired));
          break;
        }
        default: return std::nullopt;
      }
    }
    if (!fired || st.size() != 1) return std::nullopt;
    return ar.flatten(st.back().program);
  }
};

}  // namespace

void simplifyFieldExpressions(Plan& p) {
  FlatIndex flat(p);  // the simplifier changes programs only, never shapes
  for (auto& q : p.queries) {
    if (q.isDirective()) continue;
    InputView input(flat, q);
    Simplifier s{q, flat, input};
    for (auto& f : q.schema)
      if (auto prog = s.run(f.program)) f.program = std::move(*prog);
    Simplifier rule{q, flat, input, true};
    for (auto& r : q.rules)
      if (auto prog = rule.run(r.condition)) r.condition = std::move(*prog);
  }
}

}  // namespace ir::passes
