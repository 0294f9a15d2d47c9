// `*` and `[_]` expansion, and the output schema of each stream operator.
#include "flat.hpp"
#include "passes.hpp"

#include "ir/operators/operator.hpp"

namespace ir::passes {

namespace {

// The operator's operands, looked up by name (RefError when one is missing).
template <class F>
auto withSite(const Plan& p, const Query& q, F f) {
  const Token& op = q.program.back();
  const auto [so, s1, s2] = ops::operandsOf(p, q);
  if (!so)
    throw FatalError(std::string("compiler: undefined stream token command in combine function: str=") +
                     textForm(q.program[0].v) + " cmd=" + opName(op.op));
  auto width1 = [&] { return flatWidth(s1); };
  return f(*so, ops::Site{q, op, s1, s2, width1});
}

std::vector<Field> buildOutputSchema(const Plan& p, const Query& q, FlatIndex& flat) {
  return withSite(p, q, [&](const ops::StreamOperator& so, const ops::Site& s) { return so.schema(s, flat); });
}

}  // namespace

// Shape of one flat slot: array elements count one each, a STRING keeps its width.
Field slotField(const Field& f, const std::string& name) {
  Field out;
  out.name = name;
  out.type = f.type;
  out.rlen = f.rlen;
  out.rarray = f.type == Type::STRING ? f.rarray : 1;
  return out;
}

Token indexRef(const std::string& stream, int i) {
  return Token(Op::PUSH_ID2, IdxPair(stream + "[" + std::to_string(i) + "]", 0));
}

std::vector<Field> interleaveSlots(const Query& a, const Query& b) {
  std::vector<Field> out = flattenSchema(a);
  const std::vector<Field> right = flattenSchema(b);
  for (size_t i = 0; i < out.size() && i < right.size(); ++i) {
    // Each position takes the larger type and the larger element size of both operands.
    const int width = std::max(out[i].byteSize(), right[i].byteSize());
    out[i].type = std::max(out[i].type, right[i].type);
    out[i].rlen = out[i].type == Type::STRING ? 1 : std::max(out[i].rlen, right[i].rlen);
    out[i].rarray = out[i].type == Type::STRING ? width : 1;
  }
  return out;
}

Field windowSlot(const Query& src) { return windowSlotOf(widest(src)); }

Field reductionSlot(const Query& src) { return reductionSlotOf(widest(src).first); }

Field windowSlotOf(std::pair<Type, int> w) {
  auto [t, size] = w;
  Field f;
  f.type = t;
  f.rlen = t == Type::STRING ? 1 : size;
  f.rarray = t == Type::STRING ? size : 1;
  return f;
}

Field reductionSlotOf(Type t) {
  Field f;
  f.type = (t == Type::FLOAT || t == Type::DOUBLE) ? t : Type::RATIONAL;  // exact types fold as rationals
  f.rlen = typeSize(f.type);
  return f;
}

std::vector<Field> flattenSchema(const Query& src) {
  std::vector<Field> out;
  for (auto& f : src.schema) {
    if (f.flatCount() == 1) {
      out.push_back(slotField(f, f.name));
      continue;
    }
    for (int e = 0; e < f.flatCount(); ++e) out.push_back(slotField(f, f.name + "_" + std::to_string(e)));
  }
  return out;
}

namespace {

// Flat width of the schema buildOutputSchema() makes (0 for what it refuses),
// from the widths of the operands.
template <class Width>
int64_t outputWidth(const Plan& p, const Query& q, Width widthOf) {
  const Query* s1 = p.find(textForm(q.program[0].v));
  if (!s1) return 0;
  if (q.program.size() == 1) return widthOf(*s1);
  const Token& op = q.program.back();
  const ops::StreamOperator* so = ops::streamOperator(op.op);
  if (!so) return 0;
  const Query* s2 = so->binary && q.program.size() == 3 ? p.find(textForm(q.program[1].v)) : nullptr;
  if (so->binary && !s2) return 0;
  auto width1 = [&] { return int(widthOf(*s1)); };
  return so->outputWidth(ops::Site{q, op, *s1, s2, width1}, widthOf);
}

bool expandsStar(const Query& q) {
  return !q.program.empty() && q.program.size() < 4 && !q.schema.empty() && !q.schema[0].program.empty() &&
         q.schema[0].program[0].op == Op::PUSH_TSCAN;
}

// The widths every `*` will expand to, in the (topological) plan order, are
// known before any field is built: refuse an oversized plan before building it.
void checkExpandedSize(const Plan& p) {
  const size_t n = p.queries.size();
  std::vector<int64_t> width(n, -1);
  auto widthOf = [&](const Query& s) {
    int64_t w = width[size_t(&s - p.queries.data())];
    return w >= 0 ? w : int64_t(flatWidth(s));
  };
  PlanBudget total;
  for (size_t i = 0; i < n; ++i) {
    const Query& q = p.queries[i];
    width[i] = expandsStar(q) ? outputWidth(p, q, widthOf) : flatWidth(q);
    total.add(q, width[i], 0);
  }
}

}  // namespace

void expandSchemaWildcards(Plan& p) {
  int counter = 0;  // one counter for the whole pass
  topoSort(p);
  checkExpandedSize(p);
  PlanBudget budget = PlanBudget::of(p);  // and the running totals, as fields are built
  FlatIndex flat(p);                      // widths of the operands (each stream is invalidated once expanded)
  for (auto& q : p.queries) {
    if (q.program.empty()) continue;
    if (q.program.size() >= 4)
      throw FatalError("compiler::expandSchemaWildcards: program not optimized — " + std::to_string(q.program.size()) +
                       " tokens for query '" + q.id + "', expected < 4");
    if (q.schema.empty() || q.schema[0].program.empty() || q.schema[0].program[0].op != Op::PUSH_TSCAN) continue;
    if (p.options.strictReferences) {
      // `s.*` must name the stream itself or one of its FROM operands.
      const std::string& text = std::get<std::string>(q.schema[0].program[0].v);
      if (text.size() > 2 && text.compare(text.size() - 2, 2, ".*") == 0) {
        std::string s = text.substr(0, text.size() - 2);
        FlatIndex flat(p);
        auto offs = sourceOffsetsFor(flat, q, {s});
        if (s != q.id && !offs.offset.count(s))
          throw CompileError("Stream '" + q.id + "' refers to '" + s + "', which is not in its FROM clause", q.loc);
      }
    }
    // The plan-wide budget, before the fields are built: one element and one token each.
    {
      int64_t oldTokens = 0;
      for (auto& f : q.schema) oldTokens += int64_t(f.program.size());
      const int64_t w = outputWidth(p, q, [&](const Query& s) { return int64_t(flat.width(s)); });
      budget.add(q, w - flatWidth(q), w - oldTokens);
    }
    if (q.program.size() == 1) {
      const Query& s = p.get(std::get<std::string>(q.program[0].v));
      std::vector<Field> fields;
      fields.reserve(size_t(flat.width(s)));
      int element = 0;
      for (auto& f : s.schema)
        for (int e = 0; e < f.flatCount(); ++e) {
          Field nf = slotField(f, s.id + "_" + std::to_string(counter++));
          nf.program = {Token(Op::PUSH_ID, IdxPair(s.id, element++))};
          fields.push_back(std::move(nf));
        }
      q.schema = std::move(fields);
      flat.invalidate(q);
    } else {
      try {
        q.schema = buildOutputSchema(p, q, flat);
        flat.invalidate(q);
      } catch (const RefError& e) {
        throw RefError(std::string(e.what()) + " (stream '" + q.id + "')", q.loc);
      } catch (const CompileError& e) {
        throw CompileError(e.what(), q.loc);
      }
    }
  }
  intervalSort(p);
}

void expandIndexWildcards(Plan& p) {
  PlanBudget budget = PlanBudget::of(p);
  FlatIndex flat(p);  // a stream expanded here is invalidated: later readers see its new width
  for (auto& q : p.queries) {
    bool has = false;
    for (auto& f : q.schema)
      for (auto& t : f.program)
        if (t.op == Op::PUSH_IDX) has = true;
    if (!has) continue;
    if (q.schema.size() != 1)
      throw CompileError("stream '" + q.id + "': a field with [_] must be the only field of its SELECT list (got " +
                             std::to_string(q.schema.size()) + " fields)",
                         q.loc);
    int width = -1;
    for (auto& t : q.schema[0].program) {
      if (t.op != Op::PUSH_IDX) continue;
      const std::string& s = std::get<std::string>(t.v);
      std::string stream = s.substr(0, s.find('['));
      const Query* src = p.find(stream);
      if (!src) throw CompileError("stream '" + q.id + "' refers to unknown stream '" + stream + "' in " + s, q.loc);
      int w = flat.width(*src);
      width = width < 0 ? w : std::min(width, w);
    }
    if (width <= 0) throw CompileError("stream '" + q.id + "': [_] expands to no field", q.loc);
    const int64_t progSize = int64_t(q.schema[0].program.size());
    budget.add(q, int64_t(width) - flatWidth(q), (int64_t(width) - 1) * progSize);
    Field orig = q.schema[0];
    q.schema.clear();
    q.schema.reserve(size_t(width));
    for (int i = 0; i < width; ++i) {
      Field f = orig;
      f.name = q.id + "_" + std::to_string(i);
      f.rarray = 1;
      for (auto& t : f.program)
        if (t.op == Op::PUSH_IDX) {
          const std::string& s = std::get<std::string>(t.v);
          t = Token(Op::PUSH_ID, IdxPair(s.substr(0, s.find('[')), i));
        }
      q.schema.push_back(std::move(f));
    }
    flat.invalidate(q);
  }
}

}  // namespace ir::passes
