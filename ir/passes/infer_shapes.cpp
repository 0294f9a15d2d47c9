// Shape inference: every SELECT and substrate field gets the type and size
// its program computes, by running the program on a stack of shapes.
// Declared schemas are never changed. Runs to a fixed point because the plan
// is still in interval order here (a consumer may precede its producer).
#include <algorithm>
#include <map>

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
  std::vector<Field> input;
  SourceOffsets offsets;
  mutable std::map<std::string, std::vector<Field>> flat;  // flattened schemas, built once per stream

  std::optional<Shape> slot(const std::vector<Field>& rec, int i) const {
    if (i < 0 || i >= int(rec.size())) return std::nullopt;
    const Field& f = rec[size_t(i)];
    if (f.type > Type::STRING) return std::nullopt;
    return Shape{f.type, f.rlen, f.type == Type::STRING ? f.rarray : 1};
  }

  std::optional<Shape> read(const IdxPair& ref) const {
    if (ref.first == q.id) return slot(input, ref.second);
    auto it = offsets.offset.find(ref.first);
    if (it != offsets.offset.end()) return slot(input, it->second + ref.second);
    auto cached = flat.find(ref.first);
    if (cached == flat.end()) {
      const Query* s = p.find(ref.first);
      if (!s) return std::nullopt;
      cached = flat.emplace(ref.first, flattenSchema(*s)).first;
    }
    return slot(cached->second, ref.second);
  }

  // nullopt = the program cannot be typed; the field keeps its current shape.
  std::optional<Shape> run(const Program& prog) const {
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
        case Op::DIVIDE: {
          if (st.size() < 2) return std::nullopt;
          Shape r = pop(), l = pop();
          if (t.op == Op::ADD && (l.type == Type::STRING || r.type == Type::STRING)) {
            int64_t w = int64_t(l.type == Type::STRING ? l.rarray : 0) + (r.type == Type::STRING ? r.rarray : 0);
            st.push_back(stringOf(int(std::min<int64_t>(w, INT32_MAX))));
            break;
          }
          if (l.type > Type::DOUBLE || r.type > Type::DOUBLE) return std::nullopt;
          st.push_back(numeric(arith(l.type, r.type)));
          break;
        }
        case Op::CMP_EQUAL:
        case Op::CMP_LT:
        case Op::CMP_GT:
        case Op::CMP_LE:
        case Op::CMP_GE:
        case Op::CMP_NOT_EQUAL: {
          if (st.size() < 2) return std::nullopt;
          Shape r = pop(), l = pop();
          Type n = std::max(l.type, r.type);
          if (n == Type::STRING) st.push_back(numeric(Type::INTEGER));
          else if (n > Type::DOUBLE) return std::nullopt;
          else st.push_back(numeric(n));
          break;
        }
        case Op::AND:
        case Op::OR: {
          if (st.size() < 2) return std::nullopt;
          pop();
          Shape l = pop();
          if (l.type == Type::STRING) l = numeric(Type::INTEGER);
          else if (l.type > Type::STRING) return std::nullopt;
          st.push_back(l);
          break;
        }
        case Op::NOT: {
          if (st.empty()) return std::nullopt;
          Shape a = pop();
          if (a.type == Type::STRING) a = numeric(Type::INTEGER);
          else if (a.type > Type::STRING) return std::nullopt;
          st.push_back(a);
          break;
        }
        case Op::NEGATE: {
          if (st.empty()) return std::nullopt;
          Shape a = pop();
          if (a.type >= Type::STRING) return std::nullopt;
          st.push_back(a);
          break;
        }
        case Op::CALL2: {
          if (st.empty()) return std::nullopt;
          pop();
          st.push_back(stringOf(std::get<IdxPair>(t.v).second));
          break;
        }
        case Op::CALL: {
          if (st.empty()) return std::nullopt;
          Shape a = pop();
          auto fn = findFunction(std::get<std::string>(t.v));
          if (!fn) return std::nullopt;
          std::string name = fn->name;
          if (name == "to_string") {
            st.push_back(stringOf(32));
            break;
          }
          if (name == "null2zero") {
            st.push_back(a);
            break;
          }
          if (fn->rejectsRational && a.type == Type::RATIONAL)
            throw CompileError("Stream '" + q.id + "': '" + name +
                                   "' over a RATIONAL value is not implemented: functions with an irrational range "
                                   "require an explicit conversion. Write " + name +
                                   "(to_double(x)). Note that stream reducers MIN/MAX/AVG/SUMC produce RATIONAL.",
                               q.loc);
          Type rt = a.type;
          switch (fn->result) {
            case ResultRule::SAME: rt = a.type; break;
            case ResultRule::INTEGER: rt = Type::INTEGER; break;
            case ResultRule::FLOAT: rt = Type::FLOAT; break;
            case ResultRule::DOUBLE: rt = Type::DOUBLE; break;
            case ResultRule::STRING: rt = Type::STRING; break;
          }
          if (fn->result == ResultRule::DOUBLE && a.type > Type::DOUBLE && name != "to_double") return std::nullopt;
          if (rt > Type::DOUBLE) return std::nullopt;
          st.push_back(numeric(rt));
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

void inferFieldShapes(Plan& p) {
  for (size_t round = 0; round <= p.queries.size(); ++round) {
    bool changed = false;
    for (auto& q : p.queries) {
      if (q.isDirective() || q.program.empty()) continue;
      Inference inf{p, q, inputRecord(p, q), sourceOffsets(p, q), {}};
      std::vector<Shape> shapes;
      for (auto& f : q.schema) {
        auto s = inf.run(f.program);
        shapes.push_back(s ? *s : Shape{f.type, f.rlen, f.rarray});
      }
      for (size_t i = 0; i < q.schema.size(); ++i) {
        Field& f = q.schema[i];
        if (f.type != shapes[i].type || f.rlen != shapes[i].rlen || f.rarray != shapes[i].rarray) {
          f.type = shapes[i].type;
          f.rlen = shapes[i].rlen;
          f.rarray = shapes[i].rarray;
          changed = true;
        }
      }
    }
    if (!changed) return;
  }
}

}  // namespace ir::passes
