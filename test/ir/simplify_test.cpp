// simplifyFieldExpressions: constant folding, reassociation of exact constant
// tails and neutral elements (compiler.md §5.9, examples at its end).
#include <cmath>

#include "../unit_helpers.hpp"

namespace {

// s[0] = x INTEGER, s[1] = y BYTE, s[2] = f FLOAT.
const char* kSrc = "DECLARE x INTEGER, y BYTE, f FLOAT STREAM s, 1 FILE 's.dat'\n";

std::string simplified(const std::string& e, ir::Options opt = ir::defaultOptions()) {
  ir::Plan p = testing::compileText(std::string(kSrc) + "SELECT " + e + " STREAM o FROM s\n", opt);
  return ut::field(p, "o", 0);
}

std::string unsimplified(const std::string& e) {
  ir::Options o = ir::defaultOptions();
  o.simplifyExpressions = false;
  return simplified(e, o);
}

}  // namespace

TEST_CASE("neutral elements over an INTEGER field: x+0 -> x", "[simplify]") {
  CHECK(simplified("s[0]+0") == "PUSH_ID(o[0])");
  CHECK(simplified("s[0]-0") == "PUSH_ID(o[0])");
  CHECK(simplified("s[0]*1") == "PUSH_ID(o[0])");
  CHECK(simplified("s[0]/1") == "PUSH_ID(o[0])");
  CHECK(simplified("0+s[0]") == "PUSH_ID(o[0])");
  CHECK(simplified("1*s[0]") == "PUSH_ID(o[0])");
}

TEST_CASE("x+0 over a BYTE field stays (0 is INTEGER)", "[simplify]") {
  CHECK(simplified("s[1]+0") == "PUSH_ID(o[1]) PUSH_VAL(0) ADD");
}

TEST_CASE("constant tails reassociate: x+1+2, 2*x*3, x-1-2", "[simplify]") {
  CHECK(simplified("s[0]+1+2") == "PUSH_ID(o[0]) PUSH_VAL(3) ADD");
  CHECK(simplified("2*s[0]*3") == "PUSH_VAL(6) PUSH_ID(o[0]) MULTIPLY");
  CHECK(simplified("s[0]-1-2") == "PUSH_ID(o[0]) PUSH_VAL(3) SUBTRACT");
  CHECK(simplified("s[0]+1+1+1") == "PUSH_ID(o[0]) PUSH_VAL(3) ADD");
  CHECK(simplified("1+s[0]+2") == "PUSH_VAL(3) PUSH_ID(o[0]) ADD");
  CHECK(simplified("s[0]*2*5") == "PUSH_ID(o[0]) PUSH_VAL(10) MULTIPLY");
  // x-1+2 parses as x-(1+2).
  CHECK(simplified("s[0]-1+2") == "PUSH_ID(o[0]) PUSH_VAL(3) SUBTRACT");
}

TEST_CASE("constant expressions fold: Sqrt(4), 10-2+3", "[simplify]") {
  CHECK(simplified("Sqrt(4)") == "PUSH_VAL(2)");
  CHECK(simplified("10-2+3") == "PUSH_VAL(5)");  // 10-(2+3)
  CHECK(simplified("2*3") == "PUSH_VAL(6)");
  CHECK(simplified("7/2") == "PUSH_VAL(3)");
  CHECK(simplified("-7/2") == "PUSH_VAL(-3)");
  CHECK(simplified("to_integer(2.7)") == "PUSH_VAL(2)");
  CHECK(simplified("'a'+1") == "PUSH_VAL(a1)");
  CHECK(simplified("1+2.5") == "PUSH_VAL(3.5)");
}

TEST_CASE("cases that stay unchanged", "[simplify]") {
  CHECK(simplified("(s[0]+1)*2+1") == "PUSH_ID(o[0]) PUSH_VAL(1) ADD PUSH_VAL(2) MULTIPLY PUSH_VAL(1) ADD");
  CHECK(simplified("s[0]/2/5") == "PUSH_ID(o[0]) PUSH_VAL(2) DIVIDE PUSH_VAL(5) DIVIDE");
  CHECK(simplified("s[0]*0") == "PUSH_ID(o[0]) PUSH_VAL(0) MULTIPLY");
  CHECK(simplified("s[2]+1+2") == "PUSH_ID(o[2]) PUSH_VAL(1) ADD PUSH_VAL(2) ADD");
  CHECK(simplified("s[2]*1") == "PUSH_ID(o[2]) PUSH_VAL(1) MULTIPLY");
  CHECK(simplified("7/0") == "PUSH_VAL(7) PUSH_VAL(0) DIVIDE");  // NULL is never folded in
  CHECK(simplified("s[0]*s[0]") == "PUSH_ID(o[0]) PUSH_ID(o[0]) MULTIPLY");
  CHECK(simplified("s[0]") == "PUSH_ID(o[0])");
}

TEST_CASE("each changed example differs from the unsimplified program", "[simplify]") {
  CHECK(unsimplified("s[0]+0") == "PUSH_ID(o[0]) PUSH_VAL(0) ADD");
  CHECK(unsimplified("s[0]+1+2") == "PUSH_ID(o[0]) PUSH_VAL(1) ADD PUSH_VAL(2) ADD");
  CHECK(unsimplified("2*s[0]*3") == "PUSH_VAL(2) PUSH_ID(o[0]) MULTIPLY PUSH_VAL(3) MULTIPLY");
  CHECK(unsimplified("s[0]-1-2") == "PUSH_ID(o[0]) PUSH_VAL(1) SUBTRACT PUSH_VAL(2) SUBTRACT");
  CHECK(unsimplified("Sqrt(4)") == "PUSH_VAL(4) CALL(Sqrt)");
  CHECK(unsimplified("10-2+3") == "PUSH_VAL(10) PUSH_VAL(2) PUSH_VAL(3) ADD SUBTRACT");
  for (const char* e : {"(s[0]+1)*2+1", "s[0]/2/5", "s[0]*0", "s[2]+1+2"}) {
    INFO(e);
    CHECK(simplified(e) == unsimplified(e));
  }
}

TEST_CASE("simplification never changes the field's type", "[simplify]") {
  ir::Plan p =
      testing::compileText(std::string(kSrc) + "SELECT s[0]+0, 2*s[0]*3, Sqrt(4), 'a'+1, 1+2.5 STREAM o FROM s\n");
  CHECK(ut::shape(p, "o", 0) == "INTEGER 4x1");
  CHECK(ut::shape(p, "o", 1) == "INTEGER 4x1");
  CHECK(ut::shape(p, "o", 2) == "INTEGER 4x1");
  CHECK(ut::shape(p, "o", 3) == "STRING 1x1");
  CHECK(ut::shape(p, "o", 4) == "FLOAT 4x1");
}

TEST_CASE("rule conditions are simplified but keep source-relative references", "[simplify][rules]") {
  ir::Plan p = testing::compileText(std::string(kSrc) +
                                    "SELECT s[0] STREAM o FROM s\n"
                                    "RULE r ON o WHEN o[0] > 1+1 DO DUMP -1 TO 1\n"
                                    "RULE q ON o WHEN o[0]+0 = 3 DO DUMP -1 TO 1\n");
  REQUIRE(p.get("o").rules.size() == 2);
  CHECK(ut::str(p.get("o").rules[0].condition) == "PUSH_ID(o[0]) PUSH_VAL(2) CMP_GT");
  CHECK(ut::str(p.get("o").rules[1].condition) == "PUSH_ID(o[0]) PUSH_VAL(3) CMP_EQUAL");
}

TEST_CASE("the evaluator used for folding", "[simplify][eval]") {
  using ir::Op;
  using ir::Token;
  auto v =
      ir::passes::evalConstant({Token(Op::PUSH_VAL, int32_t(6)), Token(Op::PUSH_VAL, int32_t(4)), Token(Op::SUBTRACT)});
  REQUIRE(v.has_value());
  CHECK(std::get<int32_t>(*v) == 2);
  CHECK_FALSE(
      ir::passes::evalConstant({Token(Op::PUSH_VAL, int32_t(1)), Token(Op::PUSH_VAL, int32_t(0)), Token(Op::DIVIDE)})
          .has_value());
  auto b =
      ir::passes::evalConstant({Token(Op::PUSH_VAL, uint8_t(200)), Token(Op::PUSH_VAL, uint8_t(100)), Token(Op::ADD)});
  REQUIRE(b.has_value());
  CHECK(ir::valueType(*b) == ir::Type::INTEGER);  // BYTE op BYTE computes in INTEGER
  CHECK(std::get<int32_t>(*b) == 300);
}

TEST_CASE("an own-name reference is typed by the input element it reads, as the VM reads it", "[simplify]") {
  // o[0] reads element 0 of o's FROM result (BYTE here), not o's output field 0
  // (INTEGER): the INTEGER 0 is no neutral element of a BYTE and the sum stays.
  ir::Plan p = testing::compileText(
      "DECLARE y BYTE STREAM s, 1 FILE 's.dat'\n"
      "SELECT o[0]+0, s[0]+0 STREAM o FROM s\n");
  CHECK(ut::shape(p, "o", 0) == "INTEGER 4x1");
  CHECK(ut::field(p, "o", 0) == "PUSH_ID(o[0]) PUSH_VAL(0) ADD");
  CHECK(ut::field(p, "o", 1) == "PUSH_ID(o[0]) PUSH_VAL(0) ADD");
  // A DOUBLE element behind an INTEGER output field: (d + 1) - 1 is not d in double.
  ir::Plan q = testing::compileText(
      "DECLARE x INTEGER, d DOUBLE STREAM s, 1 FILE 's.dat'\n"
      "SELECT o[1] + 1 - 1, 0 STREAM o FROM s\n");
  CHECK(ut::field(q, "o", 0) == "PUSH_ID(o[1]) PUSH_VAL(1) ADD PUSH_VAL(1) SUBTRACT");
}

TEST_CASE("RATIONAL constant tails are not merged (RATIONAL saturates and rounds)", "[simplify]") {
  // 5/1 + 2147483647 saturates to 2147483647/1; - 2147483647 then gives 0, not 5.
  ir::Plan p = testing::compileText(
      "DECLARE x INTEGER STREAM s, 1 FILE 's.dat'\n"
      "SELECT * STREAM a FROM s.avg\n"
      "SELECT a[0] + 2147483647 - 2147483647 STREAM o FROM a\n");
  CHECK(ut::field(p, "o", 0) == "PUSH_ID(o[0]) PUSH_VAL(2147483647) ADD PUSH_VAL(2147483647) SUBTRACT");
}

TEST_CASE("a folded negation is the VM's: -(0.0) keeps the sign of zero", "[simplify]") {
  ir::Plan p = testing::compileText(std::string(kSrc) + "SELECT -(0.0), -to_double(0) STREAM o FROM s\n");
  const ir::Query* o = p.find("o");
  REQUIRE(o);
  REQUIRE(o->schema[0].program.size() == 1);
  REQUIRE(o->schema[1].program.size() == 1);
  CHECK(std::signbit(std::get<float>(o->schema[0].program[0].v)));
  CHECK(std::signbit(std::get<double>(o->schema[1].program[0].v)));
}

TEST_CASE("sin and cos are DOUBLE to the simplifier too: sin(x)+1+2 is not reassociated", "[simplify]") {
  // (sin(44) + 1) + 2 and sin(44) + 3 differ in the last bit in double.
  CHECK(simplified("sin(s[0])+1+2") == unsimplified("sin(s[0])+1+2"));
  CHECK(simplified("cos(s[0])+1+2") == unsimplified("cos(s[0])+1+2"));
  CHECK(simplified("Sqrt(s[0])+1+2") == "PUSH_ID(o[0]) CALL(Sqrt) PUSH_VAL(3) ADD");  // INTEGER: exact
}

TEST_CASE("a folded FLOAT operation is done in float, as the VM does it", "[simplify]") {
  // 16777217 converts to 16777216.0f; + 0.5f rounds back to 16777216 (in double it would be 16777218).
  const std::string folded = simplified("16777217 + to_float(0.5)");
  CHECK(folded == "PUSH_VAL(1.67772e+07)");
  ir::Plan p = testing::compileText(std::string(kSrc) + "SELECT 16777217 + to_float(0.5) STREAM o FROM s\n",
                                    ir::defaultOptions());
  const ir::Query* o = p.find("o");
  REQUIRE(o);
  REQUIRE(o->schema[0].program.size() == 1);
  CHECK(std::get<float>(o->schema[0].program[0].v) == 16777216.0f);
}

TEST_CASE("a rule condition is typed by the record the rule sees: the stream's output", "[simplify][rule]") {
  // o = (d DOUBLE, x INTEGER): in the rule o[0] is the DOUBLE, so (o[0] + 1000000) - 1000000
  // is not o[0] (0.1 comes back as 0.09999999997671694) and nothing may be folded; the same
  // for s[0], which a rule also reads from o's record.
  ir::Plan p = testing::compileText(
      "DECLARE x INTEGER, d DOUBLE STREAM s, 1 FILE 's.dat'\n"
      "SELECT s[1], s[0] STREAM o FROM s\n"
      "RULE r ON o WHEN o[0] + 1000000 - 1000000 != o[0] DO DUMP 0 TO 1\n"
      "RULE r2 ON o WHEN s[0] + 1000000 - 1000000 != s[0] DO DUMP 0 TO 1\n");
  const ir::Query* o = p.find("o");
  REQUIRE(o);
  REQUIRE(o->rules.size() == 2);
  CHECK(ut::str(o->rules[0].condition) ==
        "PUSH_ID(o[0]) PUSH_VAL(1000000) ADD PUSH_VAL(1000000) SUBTRACT PUSH_ID(o[0]) CMP_NOT_EQUAL");
  CHECK(ut::str(o->rules[1].condition) ==
        "PUSH_ID(s[0]) PUSH_VAL(1000000) ADD PUSH_VAL(1000000) SUBTRACT PUSH_ID(s[0]) CMP_NOT_EQUAL");
}
