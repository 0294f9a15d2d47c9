#include "tools/adhoc.hpp"

#include "grammar/front.hpp"
#include "ir/compile.hpp"

namespace tools {

namespace {

const char* const kNotSelect = "Unrecognized command. AdHoc query must start with SELECT";

// The reply for a statement that is not a SELECT; empty for a SELECT.
std::string refusal(rql::StatementKind kind) {
  switch (kind) {
    case rql::StatementKind::SELECT: return {};
    case rql::StatementKind::RULE: return "Fail parse: AdHoc RULE not yet supported";
    case rql::StatementKind::DIRECTIVE: return "Fail parse: AdHoc STORAGE, SUBSTRAT or PERCOUTNER not supported";
    case rql::StatementKind::DECLARE: return "Fail parse: AdHoc DECLARE not supported";
    case rql::StatementKind::OTHER: break;
  }
  return kNotSelect;
}

}  // namespace

std::string importAdHoc(engine::Engine& eng, const std::string& text) {
  if (std::string r = refusal(rql::statementKind(text)); !r.empty()) return r;
  std::vector<ir::Query> parsed;
  try {
    parsed = rql::parseStatement(text);
  } catch (const rql::SyntaxError& e) {
    return std::string("Fail parse:") + e.what();
  } catch (const ir::CompileError& e) {
    return std::string("Fail parse:") + e.what();
  }
  if (parsed.size() != 1 || parsed[0].isDeclaration()) return kNotSelect;
  if (eng.status(parsed[0].id)) return "dataModel::addQueryToModel FAILED:" + parsed[0].id;
  // The live plan plus the statement; running streams must come out unchanged.
  ir::Plan cand = eng.livePlan();
  cand.newIds.insert(parsed[0].id);
  cand.queries.push_back(parsed[0]);
  try {
    ir::compilePlan(cand);
  } catch (const std::exception& e) {
    return std::string("Fail local chain compiler:") + e.what();
  }
  const engine::Admission a = eng.admit(cand);
  switch (a.result) {
    case engine::Admission::Result::ADMITTED: return "OK";
    case engine::Admission::Result::CHANGES_RUNNING:
      return "Compile chain failed:the ad hoc query would change the running stream '" + a.detail + "'";
    case engine::Admission::Result::SET_UP_FAILED: return "Compile chain failed:" + a.detail;
  }
  return "Compile chain failed:";
}

}  // namespace tools
