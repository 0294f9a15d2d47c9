// MIN/MAX/AVG/SUMC(x : W) in a field: the parser made each one an operand of
// the FROM sum `s + R(X @ (1, W)) + ...` (grammar/rql.y, historyWindows);
// here its placeholder becomes a reference to that operand's element, which
// follows the flat elements of s. The windows over X stay in memory, so a
// window read by one reducer is folded as it slides (engine fusion).
#include "flat.hpp"
#include "passes.hpp"

namespace ir::passes {

void placeHistoryAggregates(Plan& p) {
  FlatIndex flat(p);
  for (auto& q : p.queries) {
    if (q.historySource.empty()) continue;
    const Query* s = p.find(q.historySource);
    if (!s) continue;  // reported as an unknown FROM stream
    const int width = flat.width(*s);
    for (auto& f : q.schema)
      for (auto& t : f.program)
        if (t.op == Op::PUSH_WINDOW_AGG)
          t = Token(Op::PUSH_ID2, q.id + "[" + std::to_string(width + std::get<int32_t>(t.v)) + "]");
  }
  for (auto& q : p.queries) {
    const bool historyWindow = q.isSubstrat && q.program.size() == 2 && q.program[1].op == Op::STREAM_AGSE &&
                               std::get<std::string>(q.program[0].v).rfind("STREAM_HISTORY_", 0) == 0;
    if (historyWindow) q.makeVolatile();
  }
}

}  // namespace ir::passes
