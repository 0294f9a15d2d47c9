#include "tools/adhoc.hpp"

#include "grammar/front.hpp"
#include "ir/compile.hpp"

namespace tools {

namespace {

const char* const kNotSelect = "Unrecognized command. AdHoc query must start with SELECT, DECLARE or RULE";

std::string compileFailed(const std::exception& e) { return std::string("Fail local chain compiler:") + e.what(); }

std::string admitted(const engine::Admission& a) {
  switch (a.result) {
    case engine::Admission::Result::ADMITTED: return "OK";
    case engine::Admission::Result::CHANGES_RUNNING:
      return "Compile chain failed:the ad hoc query would change the running stream '" + a.detail + "'";
    case engine::Admission::Result::SET_UP_FAILED: return "Compile chain failed:" + a.detail;
  }
  return "Compile chain failed:";
}

// A RULE: the stream it is ON comes back from the parser with the rule
// appended; the live plan with that copy is compiled like a plan rule.
std::string importRule(engine::Engine& eng, ir::Query target, const AdHocPolicy& policy) {
  const ir::Rule rule = target.rules.back();
  if (rule.action == ir::RuleAction::SYSTEM && !policy.allowSystem)
    return "Rejected: rule '" + rule.name + "' uses DO SYSTEM, which runs a shell command as the engine's user; " +
           "an ad hoc RULE may only DO DUMP unless the engine was started with --allow-adhoc-system";
  ir::Plan cand = eng.livePlan();
  for (auto& q : cand.queries)
    if (q.id == target.id) q.rules.push_back(rule);
  try {
    ir::compilePlan(cand);
  } catch (const std::exception& e) {
    return compileFailed(e);
  }
  return eng.addRule(cand, target.id, rule.name);
}

}  // namespace

std::string importAdHoc(engine::Engine& eng, const std::string& text, const AdHocPolicy& policy) {
  const rql::StatementKind kind = rql::statementKind(text);
  if (kind == rql::StatementKind::DIRECTIVE) return "Fail parse: AdHoc STORAGE, SUBSTRAT or PERCOUTNER not supported";
  if (kind == rql::StatementKind::OTHER) return kNotSelect;
  std::vector<ir::Query> parsed;
  try {
    if (kind == rql::StatementKind::RULE) {
      std::vector<ir::Query> live;
      for (auto& q : eng.livePlan().queries)
        if (!q.isDirective()) live.push_back(q);
      parsed = rql::parseStatement(text, &live);
    } else {
      parsed = rql::parseStatement(text);
    }
  } catch (const rql::SyntaxError& e) {
    return std::string("Fail parse:") + e.what();
  } catch (const ir::CompileError& e) {
    return std::string("Fail parse:") + e.what();
  }
  if (parsed.size() != 1) return kNotSelect;
  if (kind == rql::StatementKind::RULE) return importRule(eng, parsed[0], policy);
  // The name is taken: said plainly, as a retry of an import that went through gets it.
  if (eng.status(parsed[0].id)) return "stream " + parsed[0].id + " exists";
  // The live plan plus the statement; running streams must come out unchanged.
  ir::Plan cand = eng.livePlan();
  cand.newIds.insert(parsed[0].id);
  cand.queries.push_back(parsed[0]);
  try {
    ir::compilePlan(cand);
  } catch (const std::exception& e) {
    return compileFailed(e);
  }
  return admitted(eng.admit(cand));
}

}  // namespace tools
