// The operator table: every stream operator token has its row, nothing else has one.
#include <catch2/catch.hpp>

#include "ir/operators/operator.hpp"

TEST_CASE("each stream operator and reducer has one row in the operator table", "[ir][operators]") {
  int rows = 0;
  for (int i = 0; i <= int(ir::Op::PUSH_GENIDX); ++i) {
    const ir::Op op = ir::Op(i);
    const ir::ops::StreamOperator* so = ir::ops::streamOperator(op);
    INFO(ir::opName(op));
    CHECK((so != nullptr) == (ir::isStreamOperator(op) || ir::isReducer(op)));
    if (!so) continue;
    ++rows;
    CHECK(so->op == op);
    CHECK(so->binary == (op == ir::Op::STREAM_ADD || op == ir::Op::STREAM_HASH));
    CHECK(so->interval);
    CHECK(so->origin);
    CHECK(so->tail);
    CHECK(so->demand);
    CHECK(so->check);
    CHECK(so->outputWidth);
    CHECK(so->schema);
    CHECK(so->inputWidth);
    CHECK(so->inputSlot);
  }
  CHECK(rows == 11);
}
