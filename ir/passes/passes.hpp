// Compiler passes over the plan. One job per file; compile() in
// ir/compile.cpp runs them in the documented order (docs/architecture.md).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "ir/ir.hpp"
#include "ir/limits.hpp"

namespace ir::passes {

// order.cpp — the two plan orderings.
void intervalSort(Plan& p);  // libstdc++ std::sort by interval (not stable; reproduces the reference order)
void topoSort(Plan& p);
void dropDead(Plan& p, const std::vector<char>& dead);  // keeps the entries not marked, in order      // depth-first
                                                        // post-order over FROM operands; collapses duplicate ids

// volatility.cpp
std::string substrateProfile(const Plan& p);  // SUBSTRAT's profile; MEMORY under DEFAULT VOLATILE
void applyDefaultVolatility(Plan& p);

// history_aggregates.cpp
void placeHistoryAggregates(Plan& p);  // MIN(x : W) placeholders -> the FROM operand's element

// extract_substrates.cpp
void snapshotNamedSourceRefs(Plan& p);
void extractIntermediateStreams(Plan& p);
void validateSubstrateNameUniqueness(const Plan& p);
std::string substrateName(const Program& segment);  // parameter-encoded name, digest above 200 bytes
uint64_t fnv1a64(const std::string& s);

// expand_wildcards.cpp
void expandSchemaWildcards(Plan& p);
void expandIndexWildcards(Plan& p);
std::vector<Field> flattenSchema(const Query& src);        // one field per flat element
Field slotField(const Field& f, const std::string& name);  // one flat element of f, named
Token indexRef(const std::string& stream, int i);          // `stream[i]`, resolved later
// Element shapes of operator results, shared by the output schemas and input records:
std::vector<Field> interleaveSlots(const Query& a, const Query& b);  // a # b, promoted per position
Field windowSlot(const Query& src);                                  // one element of src @ (k, w)
Field reductionSlot(const Query& src);                               // src.min/.max/.avg/.sumc
Field windowSlotOf(std::pair<Type, int> widest);                     // the same from widest(src)
Field reductionSlotOf(Type widestType);

// intervals.cpp
void resolveStreamIntervals(Plan& p);

// Same schema shape: field count and (type, rlen, rarray) of each field; names are not compared.
bool sameFieldShapes(const Query& a, const Query& b);

// factor_hash_timemoves.cpp
bool factorMatchedHashTimeMoves(Plan& p);
void retarget(Query& q, const std::string& from, const std::string& to);

// dedup_substrates.cpp
bool deduplicateSubstrates(Plan& p);

// resolve_references.cpp
void resolveFieldReferences(Plan& p);

// infer_shapes.cpp
void inferFieldShapes(Plan& p);

// simplify.cpp
void simplifyFieldExpressions(Plan& p);

// share_selects.cpp
bool shareEquivalentSelectComputations(Plan& p);

// localize_offsets.cpp
void localizeFieldOffsets(Plan& p);
struct SourceOffsets {
  std::map<std::string, int> offset;    // stream -> first flat position in q's input record
  std::set<std::string> viaInterleave;  // streams whose positions are shared through #
  std::set<std::string> ambiguous;      // reached at two places by equally short paths
};
SourceOffsets sourceOffsets(const Plan& p, const Query& q);
// q's input record: one slot per flat element of what its FROM operator produces.
std::vector<Field> inputRecord(const Plan& p, const Query& q);

// origins_tails.cpp
void computeLogicalOrigins(Plan& p);
void computeStartupLatencies(Plan& p);
// Tail of C = A # B (A, B with intervals dA, dB and tails wA, wB; dC the interval of C).
int64_t hashTail(const Rational& dA, int64_t wA, const Rational& dB, int64_t wB, const Rational& dC);
int64_t hashTailScan(const Rational& dA, int64_t wA, const Rational& dB, int64_t wB, const Rational& dC);  // by a scan

// capacities.cpp
void computeRequiredCapacities(Plan& p);
// Records a window k, w over a source of F elements needs (before the margin).
int64_t windowDemand(int64_t F, int64_t k, int64_t w, int64_t origin, int64_t Wq, int64_t Ws);
void applyCapacitiesToStreams(Plan& p);
void checkHistoryBudget(const Plan& p);
void applyDefaultRetention(Plan& p);  // storage.default_retention on DEFAULT/DIRECT streams without RETENTION

// validate.cpp
void validateDirectives(const Plan& p);
void validateRetention(Plan& p);  // the RETENTION form fits the store: segments on files, a ring in memory
void validateConstraints(const Plan& p);
void checkDuplicateNames(const Plan& p);
// Per stream: field <= 65536 elements (STRING: bytes), record <= 1 MiB, <= 2^18 elements; the whole
// plan: at most kMaxPlanElements elements and kMaxPlanTokens field tokens.
void checkPlanLimits(const Plan& p);

// Plan-size limits: ir/limits.hpp.
using ir::kMaxDepth;
using ir::kMaxExpressionTokens;
using ir::kMaxPlanElements;
using ir::kMaxPlanTokens;
using ir::kMaxStreams;
// Checked on the parsed statements, before any pass: stream count (with the
// substrates extraction will add), expression sizes, total tokens.
void checkPlanSize(const Plan& p);
// After substrate extraction, before the interval sweeps (whose work grows
// with the chain depth times the plan size): FROM chains at most kMaxDepth.
void checkPlanDepth(const Plan& p);
// Running totals while schemas are built (expand_wildcards.cpp).
struct PlanBudget {
  int64_t elements = 0;
  int64_t tokens = 0;
  static PlanBudget of(const Plan& p);  // what the plan holds now
  // Adds a stream's new elements / tokens; throws a located CompileError past a limit.
  void add(const Query& q, int64_t elements, int64_t tokens);
};

// eval.cpp — constant evaluation used by the simplifier (no input record).
std::optional<Value> evalConstant(const Program& prog);

}  // namespace ir::passes
