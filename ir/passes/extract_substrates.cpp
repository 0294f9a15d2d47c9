// Substrate extraction: every FROM program is cut down to one stream
// operator; each inner operation becomes its own compiler-made stream.
#include <cstdio>
#include <map>

#include "passes.hpp"

namespace ir::passes {

namespace {

bool isOperator(Op op) { return op != Op::PUSH_STREAM && op != Op::PUSH_VAL; }

int operandCount(Op op) {
  switch (op) {
    case Op::STREAM_HASH:
    case Op::STREAM_ADD:
    case Op::STREAM_DEHASH_DIV:
    case Op::STREAM_DEHASH_MOD: return 2;
    default: return 1;
  }
}

// Operators whose parameter lives in the operator token itself.
bool carriesParameter(Op op) { return op == Op::STREAM_TIMEMOVE || op == Op::STREAM_SUBTRACT || op == Op::STREAM_AGSE; }

std::string number(int64_t v) { return v < 0 ? "N" + std::to_string(-v) : std::to_string(v); }

// Name fragment of a token value: identifiers verbatim, n/d -> n_d, (k,w) -> k_w, negatives N<abs>.
std::string fragment(const Value& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* r = std::get_if<Rational>(&v)) return number(r->num) + "_" + number(r->den);
  if (auto* pr = std::get_if<std::pair<int32_t, int32_t>>(&v)) return number(pr->first) + "_" + number(pr->second);
  if (auto* i = std::get_if<int32_t>(&v)) return number(*i);
  return textForm(v);
}

void collectRefs(const Program& prog, std::set<std::string>& out) {
  for (auto& t : prog) {
    auto* s = std::get_if<std::string>(&t.v);
    if (!s) continue;
    switch (t.op) {
      case Op::PUSH_ID1: {
        auto dot = s->find('.');
        if (dot != std::string::npos) out.insert(s->substr(0, dot));
        break;
      }
      case Op::PUSH_ID2:
      case Op::PUSH_IDX: {
        auto br = s->find('[');
        if (br != std::string::npos) out.insert(s->substr(0, br));
        break;
      }
      case Op::PUSH_TSCAN:
        if (s->size() > 2 && s->compare(s->size() - 2, 2, ".*") == 0) out.insert(s->substr(0, s->size() - 2));
        break;
      default: break;
    }
  }
}

}  // namespace

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string substrateName(const Program& seg) {
  const Token& op = seg.back();
  std::string name = opName(op.op);
  if (carriesParameter(op.op)) name += "_" + fragment(op.v);
  if (seg.size() == 3) name += "_" + fragment(seg[0].v);
  name += "_" + fragment(seg[seg.size() - 2].v);
  if (name.size() <= 200) return name;
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a64(name));
  return std::string(opName(op.op)) + "_x" + hex;
}

void snapshotNamedSourceRefs(Plan& p) {
  for (auto& q : p.queries) {
    for (auto& f : q.schema) collectRefs(f.program, q.userRefs);
    for (auto& f : q.schema) collectRefs(f.program, q.fieldRefs);
    for (auto& r : q.rules) collectRefs(r.condition, q.userRefs);
  }
}

void extractIntermediateStreams(Plan& p) {
  intervalSort(p);
  const std::string profile = substrateProfile(p);
  // Innermost-leftmost first: the first operator token of the program is cut
  // out with its operands and replaced by the new stream's name, until one
  // stream operator is left. Done in one pass over the program: the tokens
  // before the next operator are always the ones already processed.
  const size_t userCount = p.queries.size();
  for (size_t i = 0; i < userCount; ++i) {
    if (!p.queries[i].isReductionRequired()) continue;
    Program prog = std::move(p.queries[i].program);
    int operators = 0;  // stream operators still in the program
    for (auto& t : prog)
      if (isStreamOperator(t.op) || isReducer(t.op)) ++operators;
    Program done;  // the processed prefix
    done.reserve(prog.size());
    size_t at = 0;
    for (; at < prog.size() && operators > 1; ++at) {
      Token& t = prog[at];
      if (!isOperator(t.op)) {
        done.push_back(std::move(t));
        continue;
      }
      const Query& q = p.queries[i];
      int argc = operandCount(t.op);
      if (int(done.size()) < argc)
        throw FatalError(std::string("compiler::extractIntermediateStreams: operator '") + opName(t.op) +
                         "' in query '" + q.id + "' has " + std::to_string(done.size()) + " preceding tokens, needs " +
                         std::to_string(argc));
      if (isStreamOperator(t.op) || isReducer(t.op)) --operators;
      Program seg(std::make_move_iterator(done.end() - argc), std::make_move_iterator(done.end()));
      done.resize(done.size() - size_t(argc));
      seg.push_back(std::move(t));
      Query sub;
      sub.id = substrateName(seg);
      sub.program = std::move(seg);
      Field star;
      star.name = "*";
      star.rlen = 1;
      star.type = Type::BYTE;
      star.program = {Token(Op::PUSH_TSCAN, std::string("*"))};
      sub.schema = {star};
      sub.policyProfile = profile;
      sub.policyCapacity = 1;
      sub.isSubstrat = true;
      sub.loc = q.loc;
      done.push_back(Token(Op::PUSH_STREAM, sub.id));
      p.queries.push_back(std::move(sub));
    }
    if (operators > 1)
      throw FatalError("compiler::extractIntermediateStreams: query '" + p.queries[i].id +
                       "' requires reduction but no operator was extracted");
    for (; at < prog.size(); ++at) done.push_back(std::move(prog[at]));
    p.queries[i].program = std::move(done);
  }
}

void validateSubstrateNameUniqueness(const Plan& p) {
  std::map<std::string, const Query*> seen;
  for (auto& q : p.queries) {
    auto [it, fresh] = seen.emplace(q.id, &q);
    if (fresh) continue;
    const Query& other = *it->second;
    if (!q.isSubstrat && !other.isSubstrat) continue;  // duplicate user names are reported elsewhere
    if (q.program != other.program)
      throw CompileError("Substrate name '" + q.id + "' denotes two different programs", q.loc);
  }
}

}  // namespace ir::passes
