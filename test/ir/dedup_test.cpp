// deduplicateSubstrats: equal substrates merge, a substrate is absorbed by an
// equal pass-through user stream, cascades resolve in rounds, user streams stay
// (compiler.md §5.6, §13.7, §13.11; seeds/substrates.txt).
#include "../unit_helpers.hpp"

namespace {

const char* kUint =
    "DECLARE a UINT STREAM core0, 0.1 TEXTFILE 'datafile1.txt'\n"
    "DECLARE a UINT STREAM core1, 0.1 TEXTFILE 'datafile2.txt'\n";

const char* kS123 =
    "SUBSTRAT 'memory'\n"
    "DECLARE a INTEGER STREAM s1, 1 FILE 'data1.dat'\n"
    "DECLARE b INTEGER STREAM s2, 1 FILE 'data2.dat'\n"
    "DECLARE c INTEGER STREAM s3, 1 FILE 'data3.dat'\n";

ir::Options dedupOff() {
  ir::Options o = ir::defaultOptions();
  o.dedupSubstrates = false;
  return o;
}

}  // namespace

TEST_CASE("issue96_substrat_reference: the shift substrate is absorbed by str2", "[dedup]") {
  const std::string text =
      "DECLARE a INTEGER STREAM core0, 0.1 FILE 'datafile1.dat'\n"
      "DECLARE a INTEGER STREAM core1, 0.2 FILE 'datafile2.dat'\n"
      "SELECT str1[0] STREAM str1 FROM (core0>2)+core1\n"
      "SELECT str2[0] STREAM str2 FROM core0>2\n";
  const std::string expected =
      "core0(1/10)\tdatafile1.dat\n"
      "\ta: INTEGER\n"
      "str2(1/10)\torigin=2\n"
      "\t:- PUSH_STREAM(core0)\n"
      "\t:- STREAM_TIMEMOVE(2)\n"
      "\tstr2_0: INTEGER\n"
      "\t\tPUSH_ID(str2[0])\n"
      "core1(1/5)\tdatafile2.dat\n"
      "\ta: INTEGER\n"
      "str1(1/10)\ttail=1\torigin=2\n"
      "\t:- PUSH_STREAM(str2)\n"
      "\t:- PUSH_STREAM(core1)\n"
      "\t:- STREAM_ADD\n"
      "\tstr1_0: INTEGER\n"
      "\t\tPUSH_ID(str1[0])\n";
  CHECK(testing::planOf(text) == expected);
  ir::Plan off = testing::compileText(text, dedupOff());
  CHECK(testing::has(off, "STREAM_TIMEMOVE_2_core0"));
  CHECK(ut::from(off, "str1") == "PUSH_STREAM(STREAM_TIMEMOVE_2_core0) PUSH_STREAM(core1) STREAM_ADD");
}

TEST_CASE("seed: str4 and str5 share exactly one STREAM_ADD_core0_core1", "[dedup][seed]") {
  ir::Plan p = testing::compileText(std::string(kUint) +
                                    "SELECT str4[0] STREAM str4 FROM (core0+core1)>2\n"
                                    "SELECT str5[0] STREAM str5 FROM (core0+core1)>3\n");
  CHECK(ut::countPrefix(p, "STREAM_ADD_core0_core1") == 1);
  CHECK(ut::countPrefix(p, "STREAM_") == 1);
  CHECK(ut::from(p, "str4") == "PUSH_STREAM(STREAM_ADD_core0_core1) STREAM_TIMEMOVE(2)");
  CHECK(ut::from(p, "str5") == "PUSH_STREAM(STREAM_ADD_core0_core1) STREAM_TIMEMOVE(3)");
}

TEST_CASE("the pass merges two equal substrates with different names", "[dedup]") {
  // Two equal substrates under different names can only be built by hand (equal programs give equal names).
  ir::Plan p = ut::rawPlan(std::string(kUint) +
                           "SELECT str4[0] STREAM str4 FROM (core0+core1)>2\n"
                           "SELECT str5[0] STREAM str5 FROM (core0+core1)>3\n");
  ir::passes::snapshotNamedSourceRefs(p);
  ir::passes::extractIntermediateStreams(p);
  REQUIRE(ut::countPrefix(p, "STREAM_ADD_core0_core1") == 2);
  // The second copy was extracted from str5: rename it and str5's operand.
  int seen = 0;
  for (auto& q : p.queries)
    if (q.id == "STREAM_ADD_core0_core1" && seen++ == 1) q.id = "SUM_COPY";
  for (auto& t : p.get("str5").program)
    if (t.op == ir::Op::PUSH_STREAM) t.v = std::string("SUM_COPY");
  ir::passes::expandSchemaWildcards(p);
  ir::passes::resolveStreamIntervals(p);
  CHECK(ir::passes::deduplicateSubstrates(p));
  int sums = ut::countPrefix(p, "STREAM_ADD_core0_core1") + ut::countPrefix(p, "SUM_COPY");
  CHECK(sums == 1);
  std::string survivor = testing::has(p, "SUM_COPY") ? "SUM_COPY" : "STREAM_ADD_core0_core1";
  CHECK(ut::from(p, "str4") == "PUSH_STREAM(" + survivor + ") STREAM_TIMEMOVE(2)");
  CHECK(ut::from(p, "str5") == "PUSH_STREAM(" + survivor + ") STREAM_TIMEMOVE(3)");
  CHECK_FALSE(ir::passes::deduplicateSubstrates(p));
}

TEST_CASE("mysum absorbs STREAM_ADD_core0_core1", "[dedup]") {
  const std::string text = std::string(kUint) +
                           "SELECT str4[0] STREAM str4 FROM (core0+core1)>2\n"
                           "SELECT * STREAM mysum FROM core0+core1\n";
  ir::Plan p = testing::compileText(text);
  CHECK_FALSE(testing::has(p, "STREAM_ADD_core0_core1"));
  CHECK(ut::from(p, "str4") == "PUSH_STREAM(mysum) STREAM_TIMEMOVE(2)");
  CHECK(ut::from(p, "mysum") == "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_ADD");
  ir::Plan off = testing::compileText(text, dedupOff());
  CHECK(testing::has(off, "STREAM_ADD_core0_core1"));
}

TEST_CASE("absorption with a non-zero offset (issue167_dedup_nonzero_offset)", "[dedup]") {
  const std::string expected =
      ":SUBSTRAT\tmemory\n"
      "s1(1/1)\tdata1.dat\n"
      "\ta: INTEGER\n"
      "s2(1/1)\tdata2.dat\n"
      "\tb: INTEGER\n"
      "mysum(1/1)\n"
      "\t:- PUSH_STREAM(s1)\n"
      "\t:- PUSH_STREAM(s2)\n"
      "\t:- STREAM_ADD\n"
      "\ts1_0: INTEGER\n"
      "\t\tPUSH_ID(mysum[0])\n"
      "\ts2_1: INTEGER\n"
      "\t\tPUSH_ID(mysum[1])\n"
      "s3(1/1)\tdata3.dat\n"
      "\tc: INTEGER\n"
      "merged(1/1)\n"
      "\t:- PUSH_STREAM(s3)\n"
      "\t:- PUSH_STREAM(mysum)\n"
      "\t:- STREAM_ADD\n"
      "\ts3_0: INTEGER\n"
      "\t\tPUSH_ID(merged[0])\n"
      "\tSTREAM_ADD_s1_s2_1: INTEGER\n"
      "\t\tPUSH_ID(merged[1])\n"
      "\tSTREAM_ADD_s1_s2_2: INTEGER\n"
      "\t\tPUSH_ID(merged[2])\n";
  CHECK(testing::planOf(std::string(kS123) + "SELECT * STREAM mysum FROM s1+s2\n"
                                             "SELECT * STREAM merged FROM s3+(s1+s2)\n") == expected);
}

TEST_CASE("cascaded absorption over two rounds (issue167_dedup_cascaded, §13.11)", "[dedup]") {
  const std::string expected =
      ":SUBSTRAT\tmemory\n"
      "s1(1/1)\tdata1.dat\n"
      "\ta: INTEGER\n"
      "s2(1/1)\tdata2.dat\n"
      "\tb: INTEGER\n"
      "mysum(1/1)\n"
      "\t:- PUSH_STREAM(s1)\n"
      "\t:- PUSH_STREAM(s2)\n"
      "\t:- STREAM_ADD\n"
      "\ts1_0: INTEGER\n"
      "\t\tPUSH_ID(mysum[0])\n"
      "\ts2_1: INTEGER\n"
      "\t\tPUSH_ID(mysum[1])\n"
      "shifted(1/1)\torigin=1\n"
      "\t:- PUSH_STREAM(mysum)\n"
      "\t:- STREAM_TIMEMOVE(1)\n"
      "\ts1_0: INTEGER\n"
      "\t\tPUSH_ID(shifted[0])\n"
      "\ts2_1: INTEGER\n"
      "\t\tPUSH_ID(shifted[1])\n"
      "s3(1/1)\tdata3.dat\n"
      "\tc: INTEGER\n"
      "merged(1/1)\torigin=1\n"
      "\t:- PUSH_STREAM(s3)\n"
      "\t:- PUSH_STREAM(shifted)\n"
      "\t:- STREAM_ADD\n"
      "\ts3_0: INTEGER\n"
      "\t\tPUSH_ID(merged[0])\n"
      "\tSTREAM_TIMEMOVE_1_STREAM_ADD_s1_s2_1: INTEGER\n"
      "\t\tPUSH_ID(merged[1])\n"
      "\tSTREAM_TIMEMOVE_1_STREAM_ADD_s1_s2_2: INTEGER\n"
      "\t\tPUSH_ID(merged[2])\n";
  const std::string text = std::string(kS123) +
                           "SELECT * STREAM mysum FROM s1+s2\n"
                           "SELECT * STREAM shifted FROM (s1+s2)>1\n"
                           "SELECT * STREAM merged FROM s3+((s1+s2)>1)\n";
  CHECK(testing::planOf(text) == expected);
  ir::Plan p = testing::compileText(text);
  CHECK(ut::countPrefix(p, "STREAM_") == 0);
}

TEST_CASE("user streams are never removed, even when identical", "[dedup]") {
  ir::Plan p = testing::compileText(
      "DECLARE a BYTE, b INTEGER STREAM core0, 0.1 TEXTFILE 'sensor_a.txt'\n"
      "SELECT shifted1[0] STREAM shifted1 FROM core0 > 2\n"
      "SELECT shifted2[0] STREAM shifted2 FROM core0 > 2\n");
  CHECK(testing::has(p, "shifted1"));
  CHECK(testing::has(p, "shifted2"));
  CHECK(ut::from(p, "shifted1") == "PUSH_STREAM(core0) STREAM_TIMEMOVE(2)");
  CHECK(ut::from(p, "shifted2") == "PUSH_STREAM(core0) STREAM_TIMEMOVE(2)");
  CHECK(p.queries.size() == 3);
}

TEST_CASE("a user stream that transforms values does not absorb a substrate", "[dedup]") {
  const std::string src =
      "DECLARE a INTEGER STREAM s1, 1 FILE 'data1.dat'\n"
      "DECLARE b INTEGER STREAM s2, 1 FILE 'data2.dat'\n"
      "SELECT * STREAM x FROM (s1+s2)>1\n";
  SECTION("scaled field") {
    ir::Plan p = testing::compileText(src + "SELECT s1[0]*2, s2[0] STREAM m FROM s1+s2\n");
    CHECK(testing::has(p, "STREAM_ADD_s1_s2"));
    CHECK(ut::from(p, "x") == "PUSH_STREAM(STREAM_ADD_s1_s2) STREAM_TIMEMOVE(1)");
  }
  SECTION("swapped fields") {
    ir::Plan p = testing::compileText(src + "SELECT s2[0], s1[0] STREAM m FROM s1+s2\n");
    CHECK(testing::has(p, "STREAM_ADD_s1_s2"));
    CHECK(ut::from(p, "x") == "PUSH_STREAM(STREAM_ADD_s1_s2) STREAM_TIMEMOVE(1)");
  }
  SECTION("a constant field") {
    ir::Plan p = testing::compileText(src + "SELECT s1[0], 7 STREAM m FROM s1+s2\n");
    CHECK(testing::has(p, "STREAM_ADD_s1_s2"));
  }
  SECTION("an explicit pass-through list absorbs") {
    ir::Plan p = testing::compileText(src + "SELECT s1[0], s2[0] STREAM m FROM s1+s2\n");
    CHECK_FALSE(testing::has(p, "STREAM_ADD_s1_s2"));
    CHECK(ut::from(p, "x") == "PUSH_STREAM(m) STREAM_TIMEMOVE(1)");
  }
  SECTION("own-name pass-through absorbs") {
    ir::Plan p = testing::compileText(src + "SELECT m[0], m[1] STREAM m FROM s1+s2\n");
    CHECK_FALSE(testing::has(p, "STREAM_ADD_s1_s2"));
  }
}

TEST_CASE("different shapes prevent absorption (seed reduction example)", "[dedup][seed]") {
  ir::Plan p = testing::compileText(
      "DECLARE a BYTE, b INTEGER   STREAM core0, 0.1 TEXTFILE 'sensor_a.txt'\n"
      "DECLARE c INTEGER, d FLOAT  STREAM core1, 0.2 TEXTFILE 'sensor_b.txt'\n"
      "SELECT merged[0]  STREAM merged  FROM (core0 > 2) + core1\n"
      "SELECT shifted[0] STREAM shifted FROM core0 > 2\n");
  CHECK(testing::has(p, "STREAM_TIMEMOVE_2_core0"));
  CHECK(ut::from(p, "merged") == "PUSH_STREAM(STREAM_TIMEMOVE_2_core0) PUSH_STREAM(core1) STREAM_ADD");
  CHECK(ut::from(p, "shifted") == "PUSH_STREAM(core0) STREAM_TIMEMOVE(2)");
}

TEST_CASE("different intervals prevent merging", "[dedup]") {
  // Same program text cannot differ in interval within one plan, so check the pass by hand.
  ir::Plan p = ut::rawPlan(
      "DECLARE a INTEGER STREAM s1, 1 FILE 'data1.dat'\n"
      "DECLARE b INTEGER STREAM s2, 1 FILE 'data2.dat'\n"
      "SELECT * STREAM x FROM (s1+s2)>1\n"
      "SELECT * STREAM y FROM s1+s2\n");
  ir::passes::snapshotNamedSourceRefs(p);
  ir::passes::extractIntermediateStreams(p);
  ir::passes::expandSchemaWildcards(p);
  ir::passes::resolveStreamIntervals(p);
  p.get("y").interval = ir::Rational(7);
  CHECK_FALSE(ir::passes::deduplicateSubstrates(p));
  CHECK(testing::has(p, "STREAM_ADD_s1_s2"));
}
