// Shape inference: every SELECT and substrate field gets the type and size
// its program computes, by running the program on a stack of shapes.
// Declared schemas are never changed. Runs to a fixed point because the plan
// is still in interval order here (a consumer may precede its producer).
#include <algorithm>
#include <map>
#include <set>

#include "flat.hpp"
#include "ir/functions.hpp"
#include "passes.hpp"

namespace ir::passes {

namespace {

struct Shape {
  Type type = Type::INTEGER;
  int rlen = 4;
  int rarray = 1;
};

Shape numeric(Type t) { return {t, typeSize(t), 1}; }
Shape stringOf(int width) { return {Type::STRING, 1, width}; }

// Binary arithmetic: the higher type; BYTE op BYTE computes in INTEGER.
Type arith(Type a, Type b) {
  Type t = std::max(a, b);
  return t == Type::BYTE ? Type::INTEGER : t;
}

enum class Outcome { RESOLVED, UNKNOWN };

struct Inference {
  const Plan& p;
  const Query& q;
  FlatIndex& flat;
  InputView input;
  const SourceOffsets& offsets;

  static std::optional<Shape> shapeOf(const std::optional<Field>& f) {
    if (!f || f->type > Type::STRING) return std::nullopt;
    return Shape{f->type, f->rlen, f->type == Type::STRING ? f->rarray : 1};
  }

  std::optional<Shape> read(const IdxPair& ref) {
    if (ref.first == q.id) return shapeOf(input.slot(ref.second));
    auto it = offsets.offset.find(ref.first);
    if (it != offsets.offset.end()) return shapeOf(input.slot(it->second + ref.second));
    const Query* s = p.find(ref.first);
    if (!s) return std::nullopt;
    return shapeOf(flat.slot(*s, ref.second));
  }

  // Arithmetic and comparisons.
  static std::optional<Shape> binary(Op op, const Shape& l, const Shape& r) {
    if (op == Op::ADD || op == Op::SUBTRACT || op == Op::MULTIPLY || op == Op::DIVIDE || op == Op::POWER) {
      if (op == Op::ADD && (l.type == Type::STRING || r.type == Type::STRING)) {
        int64_t w = int64_t(l.type == Type::STRING ? l.rarray : 0) + (r.type == Type::STRING ? r.rarray : 0);
        return stringOf(int(std::min<int64_t>(w, INT32_MAX)));
      }
      if (l.type > Type::DOUBLE || r.type > Type::DOUBLE) return std::nullopt;
      return numeric(arith(l.type, r.type));
    }
    Type n = std::max(l.type, r.type);
    if (n == Type::STRING) return numeric(Type::INTEGER);
    if (n > Type::DOUBLE) return std::nullopt;
    return numeric(n);
  }

  // A call's shape by its function row.
  std::optional<Shape> call(const std::string& fname, const Shape& a) const {
    auto fn = findFunction(fname);
    if (!fn) return std::nullopt;
    const std::string name = fn->name;
    if (fn->result == ResultRule::STRING) return stringOf(32);
    if (fn->result == ResultRule::KEEP) return a;
    if (fn->rejectsRational && a.type == Type::RATIONAL)
      throw CompileError("Stream '" + q.id + "': '" + name +
                             "' over a RATIONAL value is not implemented: functions with an irrational range "
                             "require an explicit conversion. Write " +
                             name + "(to_double(x)). Note that stream reducers MIN/MAX/AVG/SUMC produce RATIONAL.",
                         q.loc);
    // A DOUBLE function of a number has no value over a string.
    if (fn->result == ResultRule::DOUBLE && fn->arg == ArgRule::NUMBER && a.type > Type::DOUBLE) return std::nullopt;
    Type rt = resultType(*fn, a.type);
    if (rt > Type::DOUBLE) return std::nullopt;
    return numeric(rt);
  }

  // NOT (and AND, OR) give the truth of a number or a string, NEGATE keeps a
  // number's shape, calls follow their function row.
  std::optional<Shape> unary(const Token& t, Shape a) {
    switch (t.op) {
      case Op::NOT:
        if (a.type == Type::STRING) return numeric(Type::INTEGER);
        if (a.type > Type::STRING) return std::nullopt;
        return a;
      case Op::NEGATE:
        if (a.type >= Type::STRING) return std::nullopt;
        return a;
      case Op::CALL2: return stringOf(std::get<IdxPair>(t.v).second);
      case Op::CALL: return call(std::get<std::string>(t.v), a);
      default: return std::nullopt;
    }
  }

  // nullopt = the program cannot be typed; the field keeps its current shape.
  std::optional<Shape> run(const Program& prog) {
    std::vector<Shape> st;
    auto pop = [&]() {
      Shape s = st.back();
      st.pop_back();
      return s;
    };
    for (auto& t : prog) {
      switch (t.op) {
        case Op::PUSH_VAL: {
          Type vt = valueType(t.v);
          if (vt == Type::STRING) st.push_back(stringOf(int(std::get<std::string>(t.v).size())));
          else if (vt <= Type::DOUBLE) st.push_back(numeric(vt));
          else return std::nullopt;
          break;
        }
        case Op::PUSH_ID: {
          auto s = read(std::get<IdxPair>(t.v));
          if (!s) return std::nullopt;
          st.push_back(*s);
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
        case Op::CMP_NOT_EQUAL: {
          if (st.size() < 2) return std::nullopt;
          Shape r = pop(), l = pop();
          if (t.op == Op::POWER && (l.type == Type::STRING || r.type == Type::STRING))
            throw CompileError("Stream '" + q.id + "': '^' takes numbers, not text", q.loc);
          auto s = binary(t.op, l, r);
          if (!s) return std::nullopt;
          st.push_back(*s);
          break;
        }
        case Op::AND:
        case Op::OR: {
          if (st.size() < 2) return std::nullopt;
          pop();
          auto s = unary(Token(Op::NOT), pop());  // typed as its left operand's truth
          if (!s) return std::nullopt;
          st.push_back(*s);
          break;
        }
        case Op::NOT:
        case Op::NEGATE:
        case Op::CALL2:
        case Op::CALL: {
          if (st.empty()) return std::nullopt;
          auto s = unary(t, pop());
          if (!s) return std::nullopt;
          st.push_back(*s);
          break;
        }
        default: return std::nullopt;
      }
    }
    if (st.size() != 1) return std::nullopt;
    Shape s = st.back();
    if (s.type == Type::STRING && s.rarray <= 0) s.rarray = 32;
    return s;
  }
};

}  // namespace

// The reference runs sweeps over the plan in order (it is still in interval
// order, so a consumer may come before its producer) until a sweep changes
// nothing, at most |plan| + 1 sweeps. A stream's shapes depend only on its
// operands and the streams its fields name, so only a stream one of those
// changed for since it was last computed can change: the same sweeps, with
// every other evaluation skipped (it would give the same shapes).
void inferFieldShapes(Plan& p) {
  const size_t n = p.queries.size();
  FlatIndex flat(p);
  std::vector<SourceOffsets> offsets(n);
  std::vector<std::vector<uint32_t>> consumers(n);
  std::vector<char> active(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Query& q = p.queries[i];
    if (q.isDirective() || q.program.empty()) continue;
    active[i] = 1;
    std::set<std::string> named;
    for (auto& f : q.schema) referencedStreams(f.program, named);
    offsets[i] = sourceOffsetsFor(flat, q, named);
    std::set<const Query*> deps;
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM)
        if (const Query* s = p.find(std::get<std::string>(t.v))) deps.insert(s);
    for (auto& name : named)
      if (name != q.id && !offsets[i].offset.count(name))
        if (const Query* s = p.find(name)) deps.insert(s);
    for (const Query* d : deps)
      if (d != &q) consumers[size_t(d - p.queries.data())].push_back(uint32_t(i));
  }
  // Pending evaluations as (sweep, position), in the order the sweeps meet them.
  std::set<std::pair<size_t, uint32_t>> pending;
  std::vector<int64_t> due(n, -1);  // the sweep of a stream's pending evaluation
  for (size_t i = 0; i < n; ++i)
    if (active[i]) {
      pending.insert({0, uint32_t(i)});
      due[i] = 0;
    }
  std::vector<Shape> shapes;
  while (!pending.empty()) {
    auto [round, i] = *pending.begin();
    pending.erase(pending.begin());
    due[i] = -1;
    if (round > n) break;  // the reference stops after |plan| + 1 sweeps
    Query& q = p.queries[i];
    Inference inf{p, q, flat, InputView(flat, q), offsets[i]};
    shapes.clear();
    for (auto& f : q.schema) {
      auto s = inf.run(f.program);
      shapes.push_back(s ? *s : Shape{f.type, f.rlen, f.rarray});
    }
    bool changed = false;
    for (size_t k = 0; k < q.schema.size(); ++k) {
      Field& f = q.schema[k];
      if (f.type != shapes[k].type || f.rlen != shapes[k].rlen || f.rarray != shapes[k].rarray) {
        f.type = shapes[k].type;
        f.rlen = shapes[k].rlen;
        f.rarray = shapes[k].rarray;
        changed = true;
      }
    }
    if (!changed) continue;
    flat.invalidate(q);
    for (uint32_t c : consumers[i]) {
      size_t when = c > i ? round : round + 1;  // later in this sweep, or in the next one
      if (due[c] >= 0) {
        if (size_t(due[c]) <= when) continue;
        pending.erase({size_t(due[c]), c});
      }
      pending.insert({when, c});
      due[c] = int64_t(when);
    }
  }
}

}  // namespace ir::passes
