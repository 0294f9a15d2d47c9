// Plan checks that are not part of any rewrite.
#include <map>
#include <unordered_map>

#include "flat.hpp"
#include "passes.hpp"

#include "ir/operators/operator.hpp"

#include "ir/profiles.hpp"

namespace ir::passes {

void checkDuplicateNames(const Plan& p) {
  std::map<std::string, const Query*> seen;
  for (auto& q : p.queries) {
    auto [it, fresh] = seen.emplace(q.id, &q);
    if (fresh) continue;
    if (q.isDirective()) throw CompileError("Directive " + q.id.substr(1) + " appears more than once", q.loc);
    throw CompileError(
        "Stream '" + q.id + "' is defined more than once (first at line " + std::to_string(it->second->loc.line) + ")",
        q.loc);
  }
  // A rule's name names its dump files: two rules of one name would share them.
  std::map<std::string, const Rule*> rules;
  for (auto& q : p.queries)
    for (auto& r : q.rules) {
      auto [it, fresh] = rules.emplace(r.name, &r);
      if (!fresh)
        throw CompileError("Rule '" + r.name + "' is defined more than once (first at line " +
                               std::to_string(it->second->loc.line) + ")",
                           r.loc);
    }
}

namespace {

int64_t programTokens(const Query& q) {
  int64_t n = 0;
  for (auto& f : q.schema) n += int64_t(f.program.size());
  for (auto& r : q.rules) n += int64_t(r.condition.size());
  return n;
}

// The stream an error is about, as the user knows it: an intermediate stream
// of a FROM expression carries the place of its statement.
std::string who(const Query& q) {
  return q.isSubstrat ? "an intermediate stream of the FROM expression of this statement" : "stream '" + q.id + "'";
}

[[noreturn]] void tooManyElements(const Query& q, int64_t total) {
  throw CompileError("the records of all streams together would have " + std::to_string(total) + " elements (" +
                         who(q) + " brings the total over the limit); the limit is " + std::to_string(kMaxPlanElements),
                     q.loc);
}

[[noreturn]] void tooManyTokens(const Query& q, int64_t total) {
  throw CompileError("the field expressions of all streams together would have " + std::to_string(total) + " tokens (" +
                         who(q) + " brings the total over the limit); the limit is " + std::to_string(kMaxPlanTokens),
                     q.loc);
}

// Substrates extractIntermediateStreams() will cut out of q's FROM program:
// every operator before the last stream operator.
int64_t substratesOf(const Query& q) {
  int64_t streamOps = 0;
  for (auto& t : q.program)
    if (isStreamOperator(t.op) || isReducer(t.op)) ++streamOps;
  if (streamOps <= 1) return 0;
  int64_t n = 0, seen = 0;
  for (auto& t : q.program) {
    if (t.op == Op::PUSH_STREAM || t.op == Op::PUSH_VAL) continue;
    if ((isStreamOperator(t.op) || isReducer(t.op)) && ++seen == streamOps) break;
    ++n;
  }
  return n;
}

}  // namespace

void checkPlanSize(const Plan& p) {
  auto tooLong = [](const Query& q, const std::string& what, size_t n, SrcLoc at) {
    throw CompileError("the " + what + " of stream '" + q.id + "' has " + std::to_string(n) + " tokens; the limit is " +
                           std::to_string(kMaxExpressionTokens),
                       at);
  };
  int64_t streams = 0, tokens = 0;
  for (auto& q : p.queries) {
    if (int64_t(q.program.size()) > kMaxExpressionTokens) tooLong(q, "FROM expression", q.program.size(), q.loc);
    for (auto& f : q.schema)
      if (int64_t(f.program.size()) > kMaxExpressionTokens)
        tooLong(q, "expression of field '" + f.name + "'", f.program.size(), q.loc);
    for (auto& r : q.rules)
      if (int64_t(r.condition.size()) > kMaxExpressionTokens)
        tooLong(q, "condition of rule '" + r.name + "'", r.condition.size(), r.loc);
    if (q.isDirective()) continue;
    streams += 1 + substratesOf(q);
    if (streams > kMaxStreams)
      throw CompileError("the plan has more than " + std::to_string(kMaxStreams) + " streams (stream '" + q.id +
                             "' and the intermediate streams of its FROM expression bring it to " +
                             std::to_string(streams) + "); the limit is " + std::to_string(kMaxStreams),
                         q.loc);
    tokens += programTokens(q);
    if (tokens > kMaxPlanTokens) tooManyTokens(q, tokens);
  }
}

void checkPlanDepth(const Plan& p) {
  const size_t n = p.queries.size();
  std::unordered_map<std::string, size_t> first;
  first.reserve(n);
  for (size_t i = 0; i < n; ++i) first.emplace(p.queries[i].id, i);
  constexpr int64_t kNew = -1, kOpen = -2;
  std::vector<int64_t> depth(n, kNew);
  std::vector<std::pair<size_t, size_t>> stack;  // (stream, next operand token)
  for (size_t r = 0; r < n; ++r) {
    if (depth[r] != kNew) continue;
    depth[r] = kOpen;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      const Program& prog = p.queries[v].program;
      if (i < prog.size()) {
        const Token& t = prog[i++];
        if (t.op != Op::PUSH_STREAM) continue;
        auto it = first.find(std::get<std::string>(t.v));
        if (it != first.end() && depth[it->second] == kNew) {
          depth[it->second] = kOpen;
          stack.push_back({it->second, 0});
        }
        continue;
      }
      int64_t d = 0;  // a declaration, or a stream whose operands are all on a cycle or unknown
      for (auto& t : prog)
        if (t.op == Op::PUSH_STREAM) {
          auto it = first.find(std::get<std::string>(t.v));
          if (it != first.end() && depth[it->second] >= 0) d = std::max(d, depth[it->second] + 1);
          else d = std::max<int64_t>(d, 1);
        }
      depth[v] = d;
      stack.pop_back();
    }
  }
  const Query* worst = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (depth[i] <= kMaxDepth) continue;
    const Query& q = p.queries[i];
    if (!worst || q.loc.line < worst->loc.line || (q.loc.line == worst->loc.line && q.loc.col < worst->loc.col) ||
        (q.loc.line == worst->loc.line && q.loc.col == worst->loc.col &&
         depth[i] < depth[size_t(worst - p.queries.data())]))
      worst = &q;
  }
  if (worst)
    throw CompileError(who(*worst) + " is computed through a chain of " +
                           std::to_string(depth[size_t(worst - p.queries.data())]) +
                           " streams from a declared stream; the limit is " + std::to_string(kMaxDepth),
                       worst->loc);
}

PlanBudget PlanBudget::of(const Plan& p) {
  PlanBudget b;
  for (auto& q : p.queries) {
    b.elements += flatWidth(q);
    b.tokens += programTokens(q);
  }
  return b;
}

void PlanBudget::add(const Query& q, int64_t newElements, int64_t newTokens) {
  elements += newElements;
  tokens += newTokens;
  if (elements > kMaxPlanElements) tooManyElements(q, elements);
  if (tokens > kMaxPlanTokens) tooManyTokens(q, tokens);
}

void checkPlanLimits(const Plan& p) {
  int64_t totalElements = 0, totalTokens = 0;
  for (auto& q : p.queries) {
    int64_t bytes = 0, elems = 0;
    for (auto& f : q.schema) {
      const int64_t fb = int64_t(f.rlen) * f.rarray;
      // A field's length counts its elements; a STRING's, its bytes.
      const bool text = f.type == Type::STRING;
      const int64_t length = text ? fb : f.rarray;
      if (length > kMaxFieldLength)
        throw CompileError("field '" + f.name + "' of stream '" + q.id + "' has " + std::to_string(length) +
                               (text ? " bytes" : " elements") + "; the limit is " + std::to_string(kMaxFieldLength),
                           q.loc);
      bytes += fb;
      elems += text ? 1 : f.rarray;
    }
    if (bytes > kMaxRecordBytes)
      throw CompileError(
          "a record of stream '" + q.id + "' has " + std::to_string(bytes) + " bytes; the limit is 1 MiB", q.loc);
    if (elems > kMaxRecordElements)
      throw CompileError("a record of stream '" + q.id + "' has " + std::to_string(elems) + " elements; the limit is " +
                             std::to_string(kMaxRecordElements),
                         q.loc);
    totalElements += elems;
    if (totalElements > kMaxPlanElements) tooManyElements(q, totalElements);
    totalTokens += programTokens(q);
    if (totalTokens > kMaxPlanTokens) tooManyTokens(q, totalTokens);
  }
}

void validateDirectives(const Plan& p) {
  for (auto& q : p.queries) {
    if (q.id != ":SUBSTRAT") continue;
    std::string v = q.filename;
    for (auto& c : v) c = char(toupper((unsigned char)c));  // any case here
    if (!findProfile(v))
      throw CompileError("SUBSTRAT '" + q.filename + "' is not a storage profile; use " + profileNames(), q.loc);
  }
}

// The RETENTION forms a SELECT's store takes: `RETENTION c s` segments a file
// store (DEFAULT, DIRECT), a one-number `RETENTION n` sizes a memory ring
// (STORAGE MEMORY, VOLATILE). Runs before substrates exist: every policy ring
// of a SELECT that is not VOLATILE then comes from a one-number RETENTION.
// The one-number form on a file store is a warning (an error under --strict):
// plans written for the reference use it, and it bounds nothing there either.
void validateRetention(Plan& p) {
  for (auto& q : p.queries) {
    if (q.isDirective() || q.isDeclaration() || q.isSubstrat) continue;
    std::string profile = q.storageProfile;
    for (auto& c : profile) c = char(toupper((unsigned char)c));
    const bool memory = q.isVolatile || profile == "MEMORY";
    const std::string where = q.isVolatile ? "VOLATILE" : "STORAGE " + profile;
    if (q.retentionCapacity > 0 && memory)
      throw CompileError("RETENTION " + std::to_string(q.retentionCapacity) + " " +
                             std::to_string(q.retentionSegments) + " of stream '" + q.id +
                             "' is segmented retention on a RAM store (" + where + "); write RETENTION " +
                             std::to_string(q.retentionCapacity) + " to size its ring",
                         q.loc);
    if (q.policyCapacity > 0 && !q.isVolatile && !memory)
      p.warnings.push_back({q.loc, "RETENTION " + std::to_string(q.policyCapacity) + " of stream '" + q.id +
                                       "' has no segment count: on a file store (" + where +
                                       ") the file keeps every record and the in-memory history follows "
                                       "the plan's demand; write RETENTION " +
                                       std::to_string(q.policyCapacity) + " <segments> for a bounded file"});
  }
}

// A rule reads the record its stream wrote: element k of every reference in
// its condition is output field k, which must exist.
static void checkRuleReferences(const Query& q) {
  for (auto& r : q.rules)
    for (auto& t : r.condition) {
      if (t.op != Op::PUSH_ID) continue;
      const auto& [name, k] = std::get<IdxPair>(t.v);
      if (k >= 0 && k < int(q.schema.size())) continue;
      throw CompileError("rule '" + r.name + "': " + name + "[" + std::to_string(k) + "] is outside the record of '" +
                             q.id + "' (" + std::to_string(q.schema.size()) + " field" +
                             (q.schema.size() == 1 ? "" : "s") + "), which the rule reads",
                         r.loc);
    }
}

void validateConstraints(const Plan& p) {
  FlatIndex flat(p);
  for (auto& q : p.queries) {
    checkRuleReferences(q);
    if (q.program.empty()) continue;
    if (q.program.size() == 1) continue;  // a copy of its one operand
    const Token& op = q.program.back();
    const auto [so, s1, s2] = ops::operandsOf(p, q);
    if (!so)
      throw FatalError(std::string("compiler::validateConstraints: unsupported command '") + opName(op.op) +
                       "' for query '" + q.id + "'");
    auto width1 = [&] { return flat.width(s1); };
    so->check(ops::Site{q, op, s1, s2, width1}, flat);
  }
}

}  // namespace ir::passes
