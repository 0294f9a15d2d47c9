// resolveStreamIntervals: Δ of every operator and loop detection (compiler.md §5.4, §8).
#include "../unit_helpers.hpp"

using ir::Rational;

namespace {

const char* kSrc =
    "DECLARE a INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
    "DECLARE b INTEGER STREAM core1, 0.2 FILE 'b.dat'\n"
    "DECLARE c INTEGER STREAM core2, 0.3 FILE 'c.dat'\n"
    "DECLARE x INTEGER, y INTEGER, z INTEGER STREAM wide, 1 FILE 'w.dat'\n"
    "DECLARE v INTEGER[3] STREAM arr, 1 FILE 'v.dat'\n"
    "DECLARE h INTEGER STREAM half, 1/2 FILE 'h.dat'\n"
    "DECLARE u INTEGER STREAM one, 1 FILE 'o.dat'\n";

Rational deltaOf(const std::string& fromClause, const std::string& extra = "") {
  ir::Plan p = testing::compileText(std::string(kSrc) + extra + "SELECT * STREAM q FROM " + fromClause + "\n");
  return p.get("q").interval;
}

}  // namespace

TEST_CASE("Δ of a single source is the source's Δ", "[intervals]") {
  CHECK(deltaOf("core0") == Rational(1, 10));
  CHECK(deltaOf("core2") == Rational(3, 10));
}

TEST_CASE("Δ of A+B is the minimum", "[intervals]") {
  CHECK(deltaOf("core0+core1") == Rational(1, 10));
  CHECK(deltaOf("core1+core0") == Rational(1, 10));
  CHECK(deltaOf("core1+core2") == Rational(1, 5));
}

TEST_CASE("Δ of A#B is ΔA·ΔB/(ΔA+ΔB)", "[intervals]") {
  CHECK(deltaOf("core0#core1") == Rational(1, 15));
  CHECK(deltaOf("core1#core0") == Rational(1, 15));
  CHECK(deltaOf("core0#core2") == Rational(3, 40));
  CHECK(deltaOf("one#half") == Rational(1, 3));
  CHECK(deltaOf("core0#core0") == Rational(1, 20));
}

TEST_CASE("Δ of a nested expression combines the rules", "[intervals]") {
  CHECK(deltaOf("(core0#core1)+core2") == Rational(1, 15));
  CHECK(deltaOf("(core0>1)#core2") == Rational(3, 40));
  ir::Plan p = testing::compileText(std::string(kSrc) + "SELECT * STREAM q FROM (core0#core1)+core2\n");
  CHECK(p.get("STREAM_HASH_core0_core1").interval == Rational(1, 15));
}

TEST_CASE("Δ of A&r and A%r is ΔA·r/|ΔA−r|", "[intervals]") {
  CHECK(deltaOf("half&3/2") == Rational(3, 4));
  CHECK(deltaOf("half%3/2") == Rational(3, 4));
  CHECK(deltaOf("half&1") == Rational(1, 1));
  CHECK(deltaOf("one&2") == Rational(2, 1));
  CHECK(deltaOf("core0%0.3") == Rational(3, 20));
}

TEST_CASE("A&r must not be faster than its source", "[intervals][errors]") {
  std::string err = ut::compileError(std::string(kSrc) + "SELECT * STREAM q FROM one&1/4\n");
  CHECK(err.find("You cannot make faster div from slower source") != std::string::npos);
  err = ut::compileError(std::string(kSrc) + "SELECT * STREAM q FROM one%1/4\n");
  CHECK(err.find("You cannot make faster mod from slower source") != std::string::npos);
  CHECK_FALSE(ut::compileError(std::string(kSrc) + "SELECT * STREAM q FROM one&1\n").empty());
}

TEST_CASE("Δ of A-r is r", "[intervals]") {
  CHECK(deltaOf("core1-1/2") == Rational(1, 2));
  CHECK(deltaOf("core0-0.3") == Rational(3, 10));
  CHECK(deltaOf("core0-1/10") == Rational(1, 10));
  std::string err = ut::compileError(std::string(kSrc) + "SELECT * STREAM q FROM core1-1/10\n");
  CHECK(err.find("SUBTRACT interval constraint failed on q") != std::string::npos);
}

TEST_CASE("Δ of a shift or a reducer is the source's Δ", "[intervals]") {
  CHECK(deltaOf("core2>5") == Rational(3, 10));
  CHECK(deltaOf("core2>0") == Rational(3, 10));
  CHECK(deltaOf("wide.max") == Rational(1, 1));
  CHECK(deltaOf("core1.sumc") == Rational(1, 5));
  CHECK(deltaOf("core1.avg") == Rational(1, 5));
  CHECK(deltaOf("core1.min") == Rational(1, 5));
}

TEST_CASE("Δ of A@(k,w) is ΔA·k/F with F the width of the source", "[intervals][agse]") {
  // Without array fields the number of schema entries and the flattened width agree.
  CHECK(deltaOf("core0@(1,10)") == Rational(1, 10));
  CHECK(deltaOf("core0@(3,10)") == Rational(3, 10));
  CHECK(deltaOf("wide@(1,4)") == Rational(1, 3));
  CHECK(deltaOf("wide@(2,-4)") == Rational(2, 3));
}

TEST_CASE("Δ of A@(k,w) over an array field counts flattened elements (seed chapter on AGSE)", "[intervals][agse]") {
  // compiler.md §5.4 (REF) divides by the number of schema entries; the seed chapter
  // "AGSE Sliding Data Window" defines Δout = (Δ/W)·k with W the flattened element count,
  // and the seed wins (spec/README.md). INTEGER[3] is one entry but three elements.
  CHECK(deltaOf("arr@(1,3)") == Rational(1, 3));
  CHECK(deltaOf("arr@(3,3)") == Rational(1, 1));
  CHECK(deltaOf("arr@(2,3)") == Rational(2, 3));
}

TEST_CASE("intervals resolve through chains regardless of statement order", "[intervals]") {
  ir::Plan p = testing::compileText(
      "SELECT * STREAM c FROM b>1\n"
      "SELECT * STREAM b FROM a+core1\n"
      "SELECT * STREAM a FROM core0#core1\n"
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "DECLARE y INTEGER STREAM core1, 0.2 FILE 'b.dat'\n");
  CHECK(p.get("a").interval == Rational(1, 15));
  CHECK(p.get("b").interval == Rational(1, 15));
  CHECK(p.get("c").interval == Rational(1, 15));
}

TEST_CASE("declarations and directives keep their intervals", "[intervals]") {
  ir::Plan p = testing::compileText(std::string("STORAGE 'temp'\n") + kSrc + "SELECT * STREAM q FROM core0\n");
  CHECK(p.get(":STORAGE").interval.isZero());
  CHECK(p.get("core1").interval == Rational(1, 5));
}

TEST_CASE("a dependency cycle is reported as a circular dependency", "[intervals][loop]") {
  std::string err = ut::compileError<ir::CompileError>(
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "SELECT * STREAM a FROM b\n"
      "SELECT * STREAM b FROM a\n");
  CHECK(err.rfind("Circular dependency in stream definitions", 0) == 0);

  err = ut::compileError<ir::CompileError>(
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "SELECT a[0] STREAM a FROM b+core0\n"
      "SELECT b[0] STREAM b FROM c>1\n"
      "SELECT c[0] STREAM c FROM a\n");
  CHECK(err.rfind("Circular dependency in stream definitions", 0) == 0);

  err = ut::compileError<ir::CompileError>(
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "SELECT a[0] STREAM a FROM a+core0\n");
  CHECK(err.rfind("Circular dependency in stream definitions", 0) == 0);
}

TEST_CASE("the interval pass directly: a cycle throws, a chain resolves", "[intervals][loop]") {
  ir::Plan p = ut::rawPlan(
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "SELECT * STREAM a FROM b\n"
      "SELECT * STREAM b FROM a\n"
      "SELECT * STREAM c FROM core0\n");
  CHECK_THROWS_AS(ir::passes::resolveStreamIntervals(p), ir::CompileError);

  ir::Plan ok = ut::rawPlan(
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "SELECT * STREAM a FROM b\n"
      "SELECT * STREAM b FROM core0\n");
  ir::passes::resolveStreamIntervals(ok);
  CHECK(ok.get("a").interval == Rational(1, 10));
  CHECK(ok.get("b").interval == Rational(1, 10));
}

TEST_CASE("a cycle through a substrate is a circular dependency too", "[intervals][loop]") {
  std::string err = ut::compileError<ir::CompileError>(
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "SELECT * STREAM a FROM (b>1)+core0\n"
      "SELECT * STREAM b FROM a\n");
  CHECK(err.rfind("Circular dependency in stream definitions", 0) == 0);
  err = ut::compileError<ir::CompileError>(
      "DECLARE x INTEGER STREAM core0, 0.1 FILE 'a.dat'\n"
      "SELECT a[0] STREAM a FROM (b#core0)>1\n"
      "SELECT b[0] STREAM b FROM a\n");
  CHECK(err.rfind("Circular dependency in stream definitions", 0) == 0);
}
