// Every ir::Options optimizer switch really turns its pass off: for each one a
// query whose plan differs with the switch on and off (compiler.md §1).
#include "../unit_helpers.hpp"

namespace {

ir::Options with(bool ir::Options::*sw, bool on) {
  ir::Options o = ir::defaultOptions();
  o.*sw = on;
  return o;
}

}  // namespace

TEST_CASE("all optimizer switches are on by default", "[switches]") {
  ir::Options o = ir::defaultOptions();
  CHECK(o.dedupSubstrates);
  CHECK(o.shareEquivalentSelects);
  CHECK(o.commutativeAdd);
  CHECK(o.factorHashTimemoves);
  CHECK(o.simplifyExpressions);
}

TEST_CASE("dedupSubstrates", "[switches][dedup]") {
  const std::string text =
      "DECLARE a INTEGER STREAM core0, 0.1 FILE 'datafile1.dat'\n"
      "DECLARE a INTEGER STREAM core1, 0.2 FILE 'datafile2.dat'\n"
      "SELECT str1[0] STREAM str1 FROM (core0>2)+core1\n"
      "SELECT str2[0] STREAM str2 FROM core0>2\n";
  ir::Plan on = testing::compileText(text, with(&ir::Options::dedupSubstrates, true));
  ir::Plan off = testing::compileText(text, with(&ir::Options::dedupSubstrates, false));
  CHECK_FALSE(testing::has(on, "STREAM_TIMEMOVE_2_core0"));
  CHECK(ut::from(on, "str1") == "PUSH_STREAM(str2) PUSH_STREAM(core1) STREAM_ADD");
  CHECK(testing::has(off, "STREAM_TIMEMOVE_2_core0"));
  CHECK(ut::from(off, "str1") == "PUSH_STREAM(STREAM_TIMEMOVE_2_core0) PUSH_STREAM(core1) STREAM_ADD");
  CHECK(ir::dumpPlan(on) != ir::dumpPlan(off));
}

TEST_CASE("shareEquivalentSelects", "[switches][share]") {
  const std::string text =
      "DECLARE x INTEGER, y INTEGER STREAM a, 1 FILE 'a.dat'\n"
      "DECLARE x INTEGER, y INTEGER STREAM b, 1/2 FILE 'b.dat'\n"
      "SELECT a[_] * b[_] STREAM c1 FROM a+b\n"
      "SELECT a[_] * b[_] STREAM c2 FROM a+b\n";
  ir::Plan on = testing::compileText(text, with(&ir::Options::shareEquivalentSelects, true));
  ir::Plan off = testing::compileText(text, with(&ir::Options::shareEquivalentSelects, false));
  CHECK(testing::has(on, "STREAM_SELECT_c1"));
  CHECK(ut::from(on, "c2") == "PUSH_STREAM(STREAM_SELECT_c1)");
  CHECK(ut::countPrefix(off, "STREAM_SELECT_") == 0);
  CHECK(ut::from(off, "c2") == "PUSH_STREAM(a) PUSH_STREAM(b) STREAM_ADD");
  CHECK(ir::dumpPlan(on) != ir::dumpPlan(off));
}

TEST_CASE("commutativeAdd", "[switches][share]") {
  const std::string text =
      "DECLARE x INTEGER, y INTEGER STREAM a, 1 FILE 'a.dat'\n"
      "DECLARE x INTEGER, y INTEGER STREAM b, 1/2 FILE 'b.dat'\n"
      "SELECT a[_] * b[_] STREAM c1 FROM a+b\n"
      "SELECT a[_] * b[_] STREAM c2 FROM b+a\n";
  ir::Plan on = testing::compileText(text, with(&ir::Options::commutativeAdd, true));
  ir::Plan off = testing::compileText(text, with(&ir::Options::commutativeAdd, false));
  CHECK(ut::from(on, "c1") == "PUSH_STREAM(STREAM_SELECT_c1)");
  CHECK(ut::from(on, "c2") == "PUSH_STREAM(STREAM_SELECT_c1)");
  CHECK(ut::countPrefix(off, "STREAM_SELECT_") == 0);
  CHECK(ut::from(off, "c1") == "PUSH_STREAM(a) PUSH_STREAM(b) STREAM_ADD");
  CHECK(ut::from(off, "c2") == "PUSH_STREAM(b) PUSH_STREAM(a) STREAM_ADD");
  CHECK(ir::dumpPlan(on) != ir::dumpPlan(off));

  // Without commutativity the sharing pass itself still runs: a+b and a+b share.
  ir::Plan same = testing::compileText(
      "DECLARE x INTEGER, y INTEGER STREAM a, 1 FILE 'a.dat'\n"
      "DECLARE x INTEGER, y INTEGER STREAM b, 1/2 FILE 'b.dat'\n"
      "SELECT a[_] * b[_] STREAM c1 FROM a+b\n"
      "SELECT a[_] * b[_] STREAM c2 FROM a+b\n",
      with(&ir::Options::commutativeAdd, false));
  CHECK(ut::countPrefix(same, "STREAM_SELECT_") == 1);
}

TEST_CASE("factorHashTimemoves", "[switches][factor]") {
  const std::string text =
      "SUBSTRAT 'memory'\n"
      "DECLARE a INTEGER STREAM A, 0.1 FILE '/dev/urandom'\n"
      "DECLARE b INTEGER STREAM B, 0.2 FILE '/dev/urandom'\n"
      "SELECT * STREAM matched FROM (A>2)#(B>1)\n";
  ir::Plan on = testing::compileText(text, with(&ir::Options::factorHashTimemoves, true));
  ir::Plan off = testing::compileText(text, with(&ir::Options::factorHashTimemoves, false));
  CHECK(ut::from(on, "matched") == "PUSH_STREAM(STREAM_HASH_A_B) STREAM_TIMEMOVE(3)");
  CHECK_FALSE(testing::has(on, "STREAM_TIMEMOVE_2_A"));
  CHECK(ut::from(off, "matched") == "PUSH_STREAM(STREAM_TIMEMOVE_2_A) PUSH_STREAM(STREAM_TIMEMOVE_1_B) STREAM_HASH");
  CHECK_FALSE(testing::has(off, "STREAM_HASH_A_B"));
  CHECK(on.get("matched").tail == 0);
  CHECK(off.get("matched").tail == 2);
  CHECK(ir::dumpPlan(on) != ir::dumpPlan(off));
}

TEST_CASE("simplifyExpressions", "[switches][simplify]") {
  const std::string text =
      "DECLARE x INTEGER STREAM s, 1 FILE 's.dat'\n"
      "SELECT s[0]+1+2, Sqrt(4) STREAM o FROM s\n"
      "RULE r ON o WHEN o[0] > 1+1 DO DUMP -1 TO 1\n";
  ir::Plan on = testing::compileText(text, with(&ir::Options::simplifyExpressions, true));
  ir::Plan off = testing::compileText(text, with(&ir::Options::simplifyExpressions, false));
  CHECK(ut::field(on, "o", 0) == "PUSH_ID(o[0]) PUSH_VAL(3) ADD");
  CHECK(ut::field(off, "o", 0) == "PUSH_ID(o[0]) PUSH_VAL(1) ADD PUSH_VAL(2) ADD");
  CHECK(ut::field(on, "o", 1) == "PUSH_VAL(2)");
  CHECK(ut::field(off, "o", 1) == "PUSH_VAL(4) CALL(Sqrt)");
  CHECK(ut::str(on.get("o").rules[0].condition) == "PUSH_ID(o[0]) PUSH_VAL(2) CMP_GT");
  CHECK(ut::str(off.get("o").rules[0].condition) == "PUSH_ID(o[0]) PUSH_VAL(1) PUSH_VAL(1) ADD CMP_GT");
  // Types never depend on the switch.
  CHECK(ut::shape(on, "o", 1) == ut::shape(off, "o", 1));
  CHECK(ir::dumpPlan(on) != ir::dumpPlan(off));
}

TEST_CASE("each switch changes only its own pass", "[switches]") {
  // The dedup example does not depend on the other switches.
  const std::string text =
      "DECLARE a INTEGER STREAM core0, 0.1 FILE 'datafile1.dat'\n"
      "DECLARE a INTEGER STREAM core1, 0.2 FILE 'datafile2.dat'\n"
      "SELECT str1[0] STREAM str1 FROM (core0>2)+core1\n"
      "SELECT str2[0] STREAM str2 FROM core0>2\n";
  const std::string base = testing::planOf(text);
  for (bool ir::Options::*sw : {&ir::Options::shareEquivalentSelects, &ir::Options::commutativeAdd,
                                &ir::Options::factorHashTimemoves, &ir::Options::simplifyExpressions})
    CHECK(testing::planOf(text, with(sw, false)) == base);
  ir::Options dOnly = ut::allOff();
  dOnly.dedupSubstrates = true;
  CHECK(testing::planOf(text, dOnly) == base);
}
