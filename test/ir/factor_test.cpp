// factorMatchedHashTimeMoves: (A>i)#(B>k) -> (A#B)>(i+k) when i·ΔA = k·ΔB (compiler.md §5.5, §13.10).
#include "../unit_helpers.hpp"

namespace {

const char* kAB =
    "SUBSTRAT 'memory'\n"
    "DECLARE a INTEGER STREAM A, 0.1 FILE '/dev/urandom'\n"
    "DECLARE b INTEGER STREAM B, 0.2 FILE '/dev/urandom'\n";

}  // namespace

TEST_CASE("matched (A>2)#(B>1) becomes STREAM_HASH_A_B shifted by 3 (issue202 matched)", "[factor]") {
  const std::string expected =
      ":SUBSTRAT\tmemory\n"
      "A(1/10)\t/dev/urandom\n"
      "\ta: INTEGER\n"
      "B(1/5)\t/dev/urandom\n"
      "\tb: INTEGER\n"
      "STREAM_HASH_A_B(1/15)\ttail=2\n"
      "\t:- PUSH_STREAM(A)\n"
      "\t:- PUSH_STREAM(B)\n"
      "\t:- STREAM_HASH\n"
      "\ta: INTEGER\n"
      "\t\tPUSH_ID(STREAM_HASH_A_B[0])\n"
      "matched(1/15)\torigin=3\n"
      "\t:- PUSH_STREAM(STREAM_HASH_A_B)\n"
      "\t:- STREAM_TIMEMOVE(3)\n"
      "\ta: INTEGER\n"
      "\t\tPUSH_ID(matched[0])\n";
  CHECK(testing::planOf(std::string(kAB) + "SELECT * STREAM matched FROM (A>2)#(B>1)\n") == expected);
}

TEST_CASE("matched: the shift substrates disappear and the tail is absorbed", "[factor]") {
  ir::Plan p = testing::compileText(std::string(kAB) + "SELECT * STREAM matched FROM (A>2)#(B>1)\n");
  CHECK_FALSE(testing::has(p, "STREAM_TIMEMOVE_2_A"));
  CHECK_FALSE(testing::has(p, "STREAM_TIMEMOVE_1_B"));
  CHECK(ut::from(p, "STREAM_HASH_A_B") == "PUSH_STREAM(A) PUSH_STREAM(B) STREAM_HASH");
  CHECK(p.get("STREAM_HASH_A_B").isSubstrat);
  CHECK(p.get("STREAM_HASH_A_B").interval == ir::Rational(1, 15));
  CHECK(p.get("matched").interval == ir::Rational(1, 15));
  CHECK(p.get("matched").origin == 3);
  CHECK(p.get("matched").tail == 0);

  // Same origin and interval as the unfactored plan; only the tail drops (2 -> 0).
  ir::Options off = ir::defaultOptions();
  off.factorHashTimemoves = false;
  ir::Plan u = testing::compileText(std::string(kAB) + "SELECT * STREAM matched FROM (A>2)#(B>1)\n", off);
  CHECK(u.get("matched").origin == 3);
  CHECK(u.get("matched").interval == ir::Rational(1, 15));
  CHECK(u.get("matched").tail == 2);
}

TEST_CASE("unmatched (A>1)#(B>1) is left untouched (issue202 unmatched, N2 names)", "[factor]") {
  const std::string expected =
      ":SUBSTRAT\tmemory\n"
      "A(1/10)\t/dev/urandom\n"
      "\ta: INTEGER\n"
      "STREAM_TIMEMOVE_1_A(1/10)\torigin=1\n"
      "\t:- PUSH_STREAM(A)\n"
      "\t:- STREAM_TIMEMOVE(1)\n"
      "\ta: INTEGER\n"
      "\t\tPUSH_ID(STREAM_TIMEMOVE_1_A[0])\n"
      "B(1/5)\t/dev/urandom\n"
      "\tb: INTEGER\n"
      "STREAM_TIMEMOVE_1_B(1/5)\torigin=1\n"
      "\t:- PUSH_STREAM(B)\n"
      "\t:- STREAM_TIMEMOVE(1)\n"
      "\tb: INTEGER\n"
      "\t\tPUSH_ID(STREAM_TIMEMOVE_1_B[0])\n"
      "unmatched(1/15)\ttail=2\torigin=2\n"
      "\t:- PUSH_STREAM(STREAM_TIMEMOVE_1_A)\n"
      "\t:- PUSH_STREAM(STREAM_TIMEMOVE_1_B)\n"
      "\t:- STREAM_HASH\n"
      "\ta: INTEGER\n"
      "\t\tPUSH_ID(unmatched[0])\n";
  CHECK(testing::planOf(std::string(kAB) + "SELECT * STREAM unmatched FROM (A>1)#(B>1)\n") == expected);
  ir::Plan p = testing::compileText(std::string(kAB) + "SELECT * STREAM unmatched FROM (A>1)#(B>1)\n");
  CHECK_FALSE(testing::has(p, "STREAM_HASH_A_B"));
}

TEST_CASE("zero shifts match: (A>0)#(B>0) reads A#B directly", "[factor]") {
  ir::Plan p = testing::compileText(std::string(kAB) + "SELECT * STREAM z FROM (A>0)#(B>0)\n");
  CHECK(ut::from(p, "z") == "PUSH_STREAM(STREAM_HASH_A_B)");
  CHECK(ut::from(p, "STREAM_HASH_A_B") == "PUSH_STREAM(A) PUSH_STREAM(B) STREAM_HASH");
  CHECK_FALSE(testing::has(p, "STREAM_TIMEMOVE_0_A"));
  CHECK_FALSE(testing::has(p, "STREAM_TIMEMOVE_0_B"));
  CHECK(p.get("z").origin == 0);
  CHECK(p.get("z").tail == 2);
  CHECK(ut::field(p, "z") == "PUSH_ID(z[0])");
}

TEST_CASE("equal intervals need equal shifts", "[factor]") {
  const std::string src =
      "DECLARE a INTEGER STREAM A, 1 FILE 'a'\n"
      "DECLARE b INTEGER STREAM B, 1 FILE 'b'\n";
  ir::Plan m = testing::compileText(src + "SELECT * STREAM m FROM (A>2)#(B>2)\n");
  CHECK(ut::from(m, "m") == "PUSH_STREAM(STREAM_HASH_A_B) STREAM_TIMEMOVE(4)");
  CHECK(m.get("m").origin == 4);
  ir::Plan n = testing::compileText(src + "SELECT * STREAM n FROM (A>2)#(B>1)\n");
  CHECK(ut::from(n, "n") == "PUSH_STREAM(STREAM_TIMEMOVE_2_A) PUSH_STREAM(STREAM_TIMEMOVE_1_B) STREAM_HASH");
}

TEST_CASE("a shift substrate read by another consumer stays for that consumer", "[factor]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT * STREAM matched FROM (A>2)#(B>1)\n"
                                    "SELECT * STREAM other FROM (A>2)+B\n");
  CHECK(ut::from(p, "matched") == "PUSH_STREAM(STREAM_HASH_A_B) STREAM_TIMEMOVE(3)");
  CHECK(testing::has(p, "STREAM_TIMEMOVE_2_A"));
  CHECK(ut::from(p, "other") == "PUSH_STREAM(STREAM_TIMEMOVE_2_A) PUSH_STREAM(B) STREAM_ADD");
  CHECK_FALSE(testing::has(p, "STREAM_TIMEMOVE_1_B"));
}

TEST_CASE("user shift streams are never factored away", "[factor]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT * STREAM sa FROM A>2\n"
                                    "SELECT * STREAM sb FROM B>1\n"
                                    "SELECT * STREAM h FROM sa#sb\n");
  CHECK(testing::has(p, "sa"));
  CHECK(testing::has(p, "sb"));
  CHECK(ut::from(p, "h") == "PUSH_STREAM(sa) PUSH_STREAM(sb) STREAM_HASH");
}

TEST_CASE("factoring keeps user field names and reuses an equal hash substrate", "[factor]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT m[0] STREAM m FROM (A>2)#(B>1)\n"
                                    "SELECT * STREAM k FROM (A#B)>7\n");
  CHECK(ut::countPrefix(p, "STREAM_HASH_A_B") == 1);
  CHECK(ut::from(p, "m") == "PUSH_STREAM(STREAM_HASH_A_B) STREAM_TIMEMOVE(3)");
  CHECK(ut::from(p, "k") == "PUSH_STREAM(STREAM_HASH_A_B) STREAM_TIMEMOVE(7)");
  REQUIRE(p.get("m").schema.size() == 1);
  CHECK(p.get("m").schema[0].name == "m_0");
  CHECK(ut::field(p, "m") == "PUSH_ID(m[0])");
}

TEST_CASE("the pass directly reports whether it rewrote anything", "[factor]") {
  auto prepare = [](const std::string& text) {
    ir::Plan p = ut::rawPlan(text);
    ir::passes::snapshotNamedSourceRefs(p);
    ir::passes::extractIntermediateStreams(p);
    ir::passes::expandSchemaWildcards(p);
    ir::passes::resolveStreamIntervals(p);
    return p;
  };
  ir::Plan m = prepare(std::string(kAB) + "SELECT * STREAM matched FROM (A>2)#(B>1)\n");
  CHECK(ir::passes::factorMatchedHashTimeMoves(m));
  CHECK(ut::from(m, "matched") == "PUSH_STREAM(STREAM_HASH_A_B) STREAM_TIMEMOVE(3)");
  ir::Plan u = prepare(std::string(kAB) + "SELECT * STREAM unmatched FROM (A>1)#(B>1)\n");
  CHECK_FALSE(ir::passes::factorMatchedHashTimeMoves(u));
  CHECK(ut::from(u, "unmatched") == "PUSH_STREAM(STREAM_TIMEMOVE_1_A) PUSH_STREAM(STREAM_TIMEMOVE_1_B) STREAM_HASH");
}

TEST_CASE("the exposed A#B substrate is then absorbed by an equal user stream", "[factor][dedup]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT * STREAM matched FROM (A>2)#(B>1)\n"
                                    "SELECT * STREAM h FROM A#B\n");
  CHECK_FALSE(testing::has(p, "STREAM_HASH_A_B"));
  CHECK(ut::from(p, "matched") == "PUSH_STREAM(h) STREAM_TIMEMOVE(3)");
  CHECK(ut::countPrefix(p, "STREAM_") == 0);
  CHECK(p.get("matched").origin == 3);
}
