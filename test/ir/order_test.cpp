// Plan order: interval sort, topological sort and the Pattern2 trace
// (compiler.md §6.1–§6.3, §13.3), with type inference applied to the dump.
#include "../unit_helpers.hpp"

namespace passes = ir::passes;

namespace {

const char* kPattern2 =
    "declare a BYTE stream core0, 1 file '/dev/urandom'\n"
    "declare c BYTE stream core1, 0.5 file '/dev/urandom'\n"
    "select core0[0] stream str0 from core0\n"
    "select core1[0]+1 stream str1 from core1\n"
    "select core1[0]/2+1,a stream str2 from core1+core0\n";

}  // namespace

TEST_CASE("Pattern2 order trace (compiler.md §6.3)", "[order]") {
  ir::Plan p = ut::rawPlan(kPattern2);
  REQUIRE(ut::order(p) == "core0 core1 str0 str1 str2");  // file order

  passes::snapshotNamedSourceRefs(p);
  passes::extractIntermediateStreams(p);  // sort() first, no substrates here
  CHECK(ut::order(p) == "str0 str1 str2 core1 core0");

  ir::Plan topo = p;
  passes::topoSort(topo);  // the first step of pass 3
  CHECK(ut::order(topo) == "core0 str0 core1 str1 str2");

  passes::expandSchemaWildcards(p);  // topo() then sort()
  CHECK(ut::order(p) == "str0 str1 str2 core1 core0");

  passes::resolveStreamIntervals(p);
  CHECK(p.get("str0").interval == ir::Rational(1));
  CHECK(p.get("str1").interval == ir::Rational(1, 2));
  CHECK(p.get("str2").interval == ir::Rational(1, 2));
  CHECK(ut::order(p) == "str1 str2 core1 str0 core0");

  passes::topoSort(p);  // pass 17
  CHECK(ut::order(p) == "core1 str1 core0 str2 str0");

  CHECK(ut::order(testing::compileText(kPattern2)) == "core1 str1 core0 str2 str0");
}

TEST_CASE("Pattern2 dump with type inference (compiler.md §13.3)", "[order][dump]") {
  const std::string expected =
      "core1(1/2)\t/dev/urandom\n"
      "\tc: BYTE\n"
      "str1(1/2)\n"
      "\t:- PUSH_STREAM(core1)\n"
      "\tstr1_0: INTEGER\n"
      "\t\tPUSH_ID(str1[0])\n"
      "\t\tPUSH_VAL(1)\n"
      "\t\tADD\n"
      "core0(1/1)\t/dev/urandom\n"
      "\ta: BYTE\n"
      "str2(1/2)\ttail=1\n"
      "\t:- PUSH_STREAM(core1)\n"
      "\t:- PUSH_STREAM(core0)\n"
      "\t:- STREAM_ADD\n"
      "\tstr2_0: INTEGER\n"
      "\t\tPUSH_ID(str2[0])\n"
      "\t\tPUSH_VAL(2)\n"
      "\t\tDIVIDE\n"
      "\t\tPUSH_VAL(1)\n"
      "\t\tADD\n"
      "\tstr2_1: BYTE\n"
      "\t\tPUSH_ID(str2[1])\n"
      "str0(1/1)\n"
      "\t:- PUSH_STREAM(core0)\n"
      "\tstr0_0: BYTE\n"
      "\t\tPUSH_ID(str0[0])\n";
  CHECK(testing::planOf(kPattern2) == expected);
}

TEST_CASE("interval sort: ascending, stable for small plans, unresolved first", "[order][sort]") {
  ir::Plan p;
  auto add = [&](const std::string& id, ir::Rational d) {
    ir::Query q;
    q.id = id;
    q.interval = d;
    p.queries.push_back(q);
  };
  add("a", ir::Rational(1));
  add("b", ir::Rational(0));
  add("c", ir::Rational(1, 2));
  add("d", ir::Rational(1));
  add("e", ir::Rational(0));
  add("f", ir::Rational(1, 2));
  passes::intervalSort(p);
  CHECK(ut::order(p) == "b e c f a d");
}

TEST_CASE("interval sort reproduces std::sort beyond 16 entries", "[order][sort]") {
  ir::Plan p;
  std::vector<ir::Query> ref;
  for (int i = 0; i < 40; ++i) {
    ir::Query q;
    q.id = "q" + std::to_string(i);
    q.interval = ir::Rational((i * 7) % 5 + 1, 2);
    p.queries.push_back(q);
  }
  ref = p.queries;
  std::sort(ref.begin(), ref.end(), [](const ir::Query& a, const ir::Query& b) { return a.interval < b.interval; });
  passes::intervalSort(p);
  CHECK(ut::order(p) == ut::order(ref));
}

TEST_CASE("topological sort: producers first, FROM-operand order, duplicates collapse", "[order][topo]") {
  ir::Plan p = ut::rawPlan(
      "SELECT * STREAM z FROM y+x\n"
      "SELECT * STREAM y FROM w\n"
      "DECLARE v INTEGER STREAM x, 1 FILE 'x'\n"
      "DECLARE v INTEGER STREAM w, 1 FILE 'w'\n");
  passes::topoSort(p);
  CHECK(ut::order(p) == "w y x z");

  ir::Plan d = ut::rawPlan(
      "DECLARE v INTEGER STREAM x, 1 FILE 'first'\n"
      "DECLARE v INTEGER STREAM x, 1 FILE 'second'\n"
      "SELECT * STREAM z FROM x\n");
  passes::topoSort(d);
  CHECK(ut::order(d) == "x z");
  CHECK(d.get("x").filename == "first");
}

TEST_CASE("final order of a plan with substrates: consumers after producers", "[order]") {
  ir::Plan p = testing::compileText(
      "DECLARE a BYTE, b INTEGER STREAM core0, 0.1 TEXTFILE 'sensor_a.txt'\n"
      "DECLARE c INTEGER, d FLOAT STREAM core1, 0.2 TEXTFILE 'sensor_b.txt'\n"
      "DECLARE e INTEGER STREAM core2, 0.3 TEXTFILE 'sensor_c.txt'\n"
      "SELECT merged[0] STREAM merged FROM (core0 # core1) + core2\n"
      "SELECT merged2[0] STREAM merged2 FROM (core0 # core1) > 2\n");
  CHECK(ut::order(p) == "core0 core1 STREAM_HASH_core0_core1 core2 merged merged2");
}

TEST_CASE("directives print first, in file order", "[order]") {
  ir::Plan p = testing::compileText(
      "DECLARE a INTEGER STREAM core0, 0.1 FILE 'x'\n"
      "SUBSTRAT 'memory'\n"
      "SELECT * STREAM s FROM core0\n"
      "STORAGE 'temp'\n");
  CHECK(ut::order(p) == ":SUBSTRAT :STORAGE core0 s");
}
