// Plan checks that are not part of any rewrite.
#include <map>

#include "passes.hpp"

namespace ir::passes {

void checkDuplicateNames(const Plan& p) {
  std::map<std::string, const Query*> seen;
  for (auto& q : p.queries) {
    auto [it, fresh] = seen.emplace(q.id, &q);
    if (fresh) continue;
    if (q.isDirective())
      throw CompileError("Directive " + q.id.substr(1) + " appears more than once", q.loc);
    throw CompileError("Stream '" + q.id + "' is defined more than once (first at line " +
                           std::to_string(it->second->loc.line) + ")",
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

void checkPlanLimits(const Plan& p) {
  constexpr int64_t kField = 65536, kRecord = 1 << 20, kElements = 1 << 18;
  for (auto& q : p.queries) {
    int64_t bytes = 0, elems = 0;
    for (auto& f : q.schema) {
      int64_t fb = int64_t(f.rlen) * f.rarray;
      if (fb > kField)
        throw CompileError("field '" + f.name + "' of stream '" + q.id + "' has " + std::to_string(fb) +
                               " bytes; the limit is 65536",
                           q.loc);
      bytes += fb;
      elems += f.type == Type::STRING ? 1 : f.rarray;
    }
    if (bytes > kRecord)
      throw CompileError("a record of stream '" + q.id + "' has " + std::to_string(bytes) + " bytes; the limit is 1 MiB",
                         q.loc);
    if (elems > kElements)
      throw CompileError("a record of stream '" + q.id + "' has " + std::to_string(elems) +
                             " elements; the limit is 262144",
                         q.loc);
  }
}

void validateDirectives(const Plan& p) {
  for (auto& q : p.queries) {
    if (q.id != ":SUBSTRAT") continue;
    std::string v = q.filename;
    for (auto& c : v) c = char(tolower((unsigned char)c));
    static const char* ok[] = {"memory", "default", "direct", "posix", "posixshd", "generic"};
    bool good = false;
    for (auto* o : ok)
      if (v == o) good = true;
    if (!good)
      throw CompileError("SUBSTRAT '" + q.filename +
                             "' is not a storage profile; use DEFAULT, MEMORY, DIRECT, POSIX, POSIXSHD or GENERIC",
                         q.loc);
  }
}

void validateConstraints(const Plan& p) {
  for (auto& q : p.queries) {
    if (q.program.empty()) continue;
    Args a = getArgs(q.program);
    switch (a.op.op) {
      case Op::STREAM_HASH:
        if (flatWidth(p.get(a.a1)) != flatWidth(p.get(a.a2)))
          throw CompileError("HASH operation constraint failed on " + q.id + ": '" + a.a1 + "' has " +
                                 std::to_string(flatWidth(p.get(a.a1))) + " elements, '" + a.a2 + "' has " +
                                 std::to_string(flatWidth(p.get(a.a2))),
                             q.loc);
        break;
      case Op::STREAM_SUBTRACT:
        if (std::get<Rational>(a.op.v) < p.get(a.a1).interval)
          throw CompileError("SUBTRACT interval constraint failed on " + q.id + ": the target interval " +
                                 std::get<Rational>(a.op.v).str() + " is shorter than the source interval " +
                                 p.get(a.a1).interval.str(),
                             q.loc);
        break;
      case Op::PUSH_STREAM:
      case Op::STREAM_DEHASH_DIV:
      case Op::STREAM_DEHASH_MOD:
      case Op::STREAM_ADD:
      case Op::STREAM_TIMEMOVE:
      case Op::STREAM_AGSE: break;
      case Op::STREAM_AVG:
      case Op::STREAM_MIN:
      case Op::STREAM_MAX:
      case Op::STREAM_SUM:
        for (auto& f : p.get(a.a1).schema)
          if (f.type == Type::STRING)
            throw CompileError("Stream '" + q.id + "': a stream reducer cannot fold the STRING field '" + f.name +
                                   "' of " + a.a1,
                               q.loc);
        break;
      default:
        throw FatalError(std::string("compiler::validateConstraints: unsupported command '") + opName(a.op.op) +
                         "' for query '" + q.id + "'");
    }
  }
}

}  // namespace ir::passes
