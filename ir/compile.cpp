#include "compile.hpp"

#include <map>

#include "build_config.h"
#include "passes/passes.hpp"

namespace ir {

Options defaultOptions() {
  Options o;
  o.dedupSubstrates = RDB_OPT_DEDUP_SUBSTRATES;
  o.shareEquivalentSelects = RDB_OPT_SHARE_EQUIVALENT_SELECTS;
  o.commutativeAdd = RDB_OPT_COMMUTATIVE_ADD && RDB_OPT_SHARE_EQUIVALENT_SELECTS;
  o.factorHashTimemoves = RDB_OPT_FACTOR_MATCHED_HASH_TIMEMOVES;
  o.simplifyExpressions = RDB_OPT_SIMPLIFY_EXPRESSIONS;
  return o;
}

namespace {

// Field names of public streams go into their on-disk descriptors, so no
// optimization may change them.
template <class Pass>
void preservingUserFieldNames(Plan& p, Pass pass) {
  std::map<std::string, std::vector<std::string>> before;
  for (auto& q : p.queries) {
    if (q.isSubstrat || q.isDeclaration() || q.isDirective()) continue;
    auto& names = before[q.id];
    for (auto& f : q.schema) names.push_back(f.name);
  }
  pass();
  for (auto& [id, names] : before) {
    const Query* q = p.find(id);
    if (!q) throw CompileError("Optimization removed user-named stream '" + id + "'");
    std::vector<std::string> now;
    for (auto& f : q->schema) now.push_back(f.name);
    if (now != names) throw CompileError("Optimization changed observable field names of stream '" + id + "'", q->loc);
  }
}

// Every FROM operand must name a stream of the plan.
void checkOperands(const Plan& p) {
  for (auto& q : p.queries)
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM && !p.find(std::get<std::string>(t.v)))
        throw RefError("stream '" + q.id + "' reads unknown stream '" + std::get<std::string>(t.v) + "'", q.loc);
}

}  // namespace

void compilePlan(Plan& p) {
  using namespace passes;
  checkPlanSize(p);  // before any pass: the passes' work grows with what it bounds
  checkDuplicateNames(p);
  checkPlanLimits(p);
  validateDirectives(p);
  applyDefaultVolatility(p);
  validateRetention(p);
  checkOperands(p);
  bool anyQuery = false;
  for (auto& q : p.queries)
    if (!q.isDirective()) anyQuery = true;
  if (!anyQuery) throw RefError("No queries to process found");

  snapshotNamedSourceRefs(p);
  extractIntermediateStreams(p);
  validateSubstrateNameUniqueness(p);
  checkPlanDepth(p);
  expandSchemaWildcards(p);
  checkPlanLimits(p);
  resolveStreamIntervals(p);
  if (p.options.factorHashTimemoves) preservingUserFieldNames(p, [&] { factorMatchedHashTimeMoves(p); });
  if (p.options.dedupSubstrates) preservingUserFieldNames(p, [&] { deduplicateSubstrates(p); });
  validateSubstrateNameUniqueness(p);
  placeHistoryAggregates(p);
  resolveFieldReferences(p);
  expandIndexWildcards(p);
  checkPlanLimits(p);
  inferFieldShapes(p);
  checkPlanLimits(p);  // inferred string widths count too
  if (p.options.simplifyExpressions) preservingUserFieldNames(p, [&] { simplifyFieldExpressions(p); });
  if (p.options.shareEquivalentSelects) preservingUserFieldNames(p, [&] { shareEquivalentSelectComputations(p); });
  localizeFieldOffsets(p);
  computeLogicalOrigins(p);
  computeStartupLatencies(p);
  computeRequiredCapacities(p);
  checkHistoryBudget(p);
  validateConstraints(p);
  applyCapacitiesToStreams(p);
  applyDefaultRetention(p);
  topoSort(p);
}

Plan compile(std::vector<Query> statements, const Options& opt) {
  Plan p;
  p.options = opt;
  p.queries = std::move(statements);
  compilePlan(p);
  return p;
}

}  // namespace ir
