// The book's newer language: `^`, function-form reducers, stream generators,
// DEFAULT VOLATILE / PERSISTENT and the grouping warnings (docs/rql.md).
#include "../unit_helpers.hpp"

using ut::errorOf;
using ut::expr;
using ut::field;
using ut::kDecl;
using ut::parse;
using ut::stmt;

namespace {

const char* kCells = "DECLARE cell INTEGER[4] STREAM cells, 1 FILE 'cells.dat'\n";

std::vector<ir::Warning> warningsOf(const std::string& text) {
  std::vector<ir::Warning> w;
  rql::parseText(text, &w);
  return w;
}

ir::Plan compiled(const std::string& text) { return ir::compile(rql::parseText(text), ir::defaultOptions()); }

}  // namespace

TEST_CASE("'^' binds tighter than * and /, groups from the right, and a negative literal is one atom",
          "[grammar][power]") {
  CHECK(expr("s[0]*s[1]^2") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) PUSH_VAL(2) POWER MULTIPLY");
  CHECK(expr("s[0]/s[1]^2") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) PUSH_VAL(2) POWER DIVIDE");
  CHECK(expr("s[0]^s[1]^2") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) PUSH_VAL(2) POWER POWER");
  CHECK(expr("(s[0]*s[1])^2") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) MULTIPLY PUSH_VAL(2) POWER");
  CHECK(expr("-2^2") == "PUSH_VAL(-2) PUSH_VAL(2) POWER");
  CHECK(expr("-s[0]^2") == "PUSH_ID2(s[0]) PUSH_VAL(2) POWER NEGATE");
  CHECK(expr("s[0]-2^2") == "PUSH_ID2(s[0]) PUSH_VAL(2) PUSH_VAL(2) POWER SUBTRACT");
}

TEST_CASE("'^' folds to the run-time value and is typed by promotion", "[compile][power]") {
  auto p = compiled(std::string(kDecl) + "SELECT 2^3^2, -2^2, 2^-1, 0^0, 3^40, a^2, a^0.5, 2^(1/2) STREAM t FROM s\n");
  CHECK(ut::field(p, "t", 0) == "PUSH_VAL(512)");
  CHECK(ut::field(p, "t", 1) == "PUSH_VAL(4)");
  CHECK(ut::field(p, "t", 2) == "PUSH_VAL(0)");  // INTEGER: 0.5 converted back
  CHECK(ut::field(p, "t", 3) == "PUSH_VAL(1)");
  CHECK(ut::field(p, "t", 4) == "PUSH_VAL(" + std::to_string(int32_t(uint32_t(689956897))) + ")");  // wraps as * does
  CHECK(ut::shape(p, "t", 5) == "INTEGER 4x1");
  CHECK(ut::shape(p, "t", 6) == "FLOAT 4x1");
  CHECK(ut::shape(p, "t", 7) == "INTEGER 4x1");
  CHECK(errorOf<ir::CompileError>("DECLARE a STRING[4] STREAM s, 1 FILE 'x'\nSELECT s[0]^2 STREAM t FROM s\n")
            .empty());  // parsing alone accepts it ...
  CHECK_THROWS_AS(compiled("DECLARE a STRING[4] STREAM s, 1 FILE 'x'\nSELECT s[0]^2 STREAM t FROM s\n"),
                  ir::CompileError);  // ... the compiler refuses text
}

TEST_CASE("function-form reducers take any stream expression", "[compile][reducers]") {
  auto p = compiled(std::string(kDecl) +
                    "SELECT * STREAM f FROM SUMC(s@(1,5))\n"
                    "SELECT * STREAM g FROM MIN(s)\n"
                    "SELECT * STREAM h FROM s.min\n");
  CHECK(ut::from(p, "f") == "PUSH_STREAM(STREAM_AGSE_1_5_s) STREAM_SUM");
  CHECK(ut::from(p, "g") == ut::from(p, "h"));
  CHECK(ut::shape(p, "f", 0) == "RATIONAL 8x1");
}

TEST_CASE("stream generators expand into ordinary streams name$0 .. name$N-1", "[grammar][generators]") {
  auto qs = parse(std::string(kCells) +
                  "SELECT cells[3-$]*10 + $ STREAM cell[4] FROM cells\n"
                  "SELECT * STREAM w[2] FROM SUMC(cell[$+1]@(1,2))\n"
                  "SELECT * STREAM grouped FROM cell[0]#cell[3]\n");
  CHECK(field(qs, "cell$0") == "PUSH_ID2(cells[3]) PUSH_VAL(10) MULTIPLY PUSH_VAL(0) ADD");
  CHECK(field(qs, "cell$3") == "PUSH_ID2(cells[0]) PUSH_VAL(10) MULTIPLY PUSH_VAL(3) ADD");
  CHECK(stmt(qs, "cell$2").schema[0].name == "cell$2_0");
  CHECK(ut::str(stmt(qs, "w$1").program) == "PUSH_STREAM(cell$2) STREAM_AGSE(1,2) STREAM_SUM");
  CHECK(ut::str(stmt(qs, "grouped").program) == "PUSH_STREAM(cell$0) PUSH_STREAM(cell$3) STREAM_HASH");
  CHECK(stmt(qs, "cell$1").family == "cell");
}

TEST_CASE("a generated plan equals the hand-written one", "[compile][generators]") {
  auto gen = compiled(std::string(kCells) +
                      "SELECT cells[$]+$ STREAM c[3] FROM cells\n"
                      "SELECT * STREAM g FROM c[0]#c[1]#c[2]\n");
  auto hand = compiled(std::string(kCells) +
                       "SELECT cells[0]+0 STREAM c$0 FROM cells\nSELECT cells[1]+1 STREAM c$1 FROM cells\n"
                       "SELECT cells[2]+2 STREAM c$2 FROM cells\nSELECT * STREAM g FROM c$0#c$1#c$2\n");
  CHECK(ir::dumpPlan(gen) == ir::dumpPlan(hand));
}

TEST_CASE("stream generator errors", "[grammar][generators][errors]") {
  using CE = ir::CompileError;
  CHECK_THAT(errorOf<CE>(std::string(kCells) + "SELECT cells[$] STREAM cell[0] FROM cells\n"),
             Catch::Contains("positive size"));
  CHECK_THAT(errorOf<CE>(std::string(kCells) + "SELECT cells[0] STREAM cell[4] FROM cells\n"),
             Catch::Contains("uses no '$'"));
  CHECK_THAT(errorOf<CE>(std::string(kCells) + "SELECT cells[$] STREAM cell[4] FROM cells FILE 'one.dat'\n"),
             Catch::Contains("FILE directive"));
  CHECK_THAT(
      errorOf<CE>(std::string(kCells) + "SELECT cells[$] STREAM cell[4] FROM cells\nSELECT * STREAM w FROM cell[9]\n"),
      Catch::Contains("outside the range 0..3"));
  CHECK_THAT(errorOf<CE>(std::string(kCells) + "SELECT cells[1-$] STREAM cell[4] FROM cells\n"),
             Catch::Contains("must not be negative"));
  CHECK_THAT(errorOf<CE>(std::string(kCells) +
                         "SELECT cells[0] STREAM cell$2 FROM cells\nSELECT cells[$] STREAM cell[4] FROM cells\n"),
             Catch::Contains("collides"));
  CHECK_THAT(errorOf<CE>(std::string(kCells) + "SELECT cells[$] STREAM plain FROM cells\n"),
             Catch::Contains("outside a stream generator"));
  CHECK_THAT(errorOf<CE>(std::string(kCells) + "SELECT MAX(cells[_] : 2) STREAM m FROM cells\n"),
             Catch::Contains("s[_] is not supported"));
  CHECK_THAT(errorOf<CE>(std::string(kCells) + "SELECT cells[$] STREAM cell[149] FROM cells\n"),
             Catch::Contains("limit of 148"));
  CHECK_THROWS_AS(rql::parseStatement("SELECT cells[$] STREAM cell[2] FROM cells"), rql::SyntaxError);
}

TEST_CASE("DEFAULT VOLATILE must come first and once; PERSISTENT cannot be MEMORY", "[grammar][volatile]") {
  using CE = ir::CompileError;
  CHECK(stmt(parse("DEFAULT VOLATILE\n" + std::string(kDecl)), ":DEFAULT_VOLATILE").loc.line == 1);
  CHECK_THAT(errorOf<CE>(std::string(kDecl) + "DEFAULT VOLATILE\n"), Catch::Contains("before the first DECLARE"));
  CHECK_THAT(errorOf<CE>("DEFAULT VOLATILE\nDEFAULT VOLATILE\n"), Catch::Contains("twice"));
  CHECK_THAT(errorOf<CE>(std::string(kDecl) + "SELECT a STREAM t FROM s PERSISTENT STORAGE MEMORY\n"),
             Catch::Contains("PERSISTENT"));
  CHECK(stmt(parse(std::string(kDecl) + "SELECT a STREAM t FROM s PERSISTENT\n"), "t").isPersistent);
}

TEST_CASE("where the book groups differently, a located warning says so", "[grammar][warnings]") {
  auto w = warningsOf(std::string(kDecl) + "SELECT a - b + c, a / b * c, a - (b + c), (a - b) + c STREAM t FROM s\n");
  REQUIRE(w.size() == 2);
  CHECK(w[0].loc.line == 2);
  CHECK(w[0].loc.col == 10);
  CHECK_THAT(w[0].message, Catch::Contains("a - (b + c)"));
  CHECK_THAT(w[1].message, Catch::Contains("a / (b * c)"));
  auto f = warningsOf(std::string(kDecl) + "SELECT * STREAM t FROM s#s>1\nSELECT * STREAM u FROM (s#s)>1\n");
  REQUIRE(f.size() == 1);
  CHECK_THAT(f[0].message, Catch::Contains("(A # B) > N"));
  auto d = warningsOf(std::string(kDecl) + "SELECT * STREAM t FROM s.max\nSELECT * STREAM u FROM MAX(s)\n");
  REQUIRE(d.size() == 1);
  CHECK_THAT(d[0].message, Catch::Contains("deprecated"));
}
