// Plan-size limits. Each is checked before the work it bounds (the parser
// checks literals, nesting and expression size as it builds; the compiler the
// rest before its passes), so an oversized plan is refused at once with the
// place of its statement (ir::CompileError, exit 71).
#pragma once

#include <cstdint>

namespace ir {

constexpr int64_t kMaxStreams = 8192;            // streams, the substrates of FROM expressions included
constexpr int64_t kMaxExpressionTokens = 16384;  // tokens of one field, rule condition or FROM expression
constexpr int64_t kMaxPlanElements = 1 << 19;    // flat elements of all stream records together
constexpr int64_t kMaxPlanTokens = 1 << 21;      // tokens of all field programs and rule conditions together
constexpr int64_t kMaxDepth = 1024;              // streams in a row from a declared stream (FROM chain)
constexpr int kMaxNesting = 1000;                // parentheses open at once in a statement

// The book's limits (query-compilation/plan-size-limits.md).
constexpr int64_t kMaxFieldLength = 65536;       // one field: elements of T[N], bytes of STRING[N] and to_string(x : N)
constexpr int64_t kMaxRecordBytes = 1 << 20;     // one stream's record
constexpr int64_t kMaxRecordElements = 1 << 18;  // flat elements of one stream's record
constexpr int64_t kMaxHistoryReach = 65536;      // `>N`, AGSE step and |width|, both DUMP bounds, W of MIN(x : W)
constexpr int kMaxGeneratorSize = 148;           // streams one STREAM name[N] generator makes
constexpr int64_t kMaxDumpRetention = 256;       // DUMP ... RETENTION n

}  // namespace ir
