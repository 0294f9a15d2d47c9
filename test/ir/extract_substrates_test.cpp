// extractIntermediateStreams, substrate naming N2 and the name-uniqueness check
// (compiler.md §5.1, §5.2, §5.2.1, §5.2.2; seeds/substrates.txt; notes/typeinfer.md §5).
#include "../unit_helpers.hpp"

using ir::Op;
using ir::Program;
using ir::Rational;
using ir::Token;
namespace passes = ir::passes;

namespace {

Token ps(const std::string& s) { return Token(Op::PUSH_STREAM, s); }

// Plan after passes 1 and 2 only.
ir::Plan extracted(const std::string& text) {
  ir::Plan p = ut::rawPlan(text);
  passes::snapshotNamedSourceRefs(p);
  passes::extractIntermediateStreams(p);
  return p;
}

std::string hex16(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
  return buf;
}

const char* kCores =
    "DECLARE a BYTE, b INTEGER STREAM core0, 0.1 TEXTFILE 'sensor_a.txt'\n"
    "DECLARE c INTEGER, d FLOAT STREAM core1, 0.2 TEXTFILE 'sensor_b.txt'\n";

}  // namespace

TEST_CASE("substrate names: parameter encoded, operands in source order", "[substrates][names]") {
  CHECK(passes::substrateName({ps("core0"), Token(Op::STREAM_TIMEMOVE, int32_t(2))}) == "STREAM_TIMEMOVE_2_core0");
  CHECK(passes::substrateName({ps("core0"), Token(Op::STREAM_AGSE, std::pair<int32_t, int32_t>(1, 10))}) ==
        "STREAM_AGSE_1_10_core0");
  CHECK(passes::substrateName({ps("core0"), Token(Op::STREAM_AGSE, std::pair<int32_t, int32_t>(1, -10))}) ==
        "STREAM_AGSE_1_N10_core0");
  CHECK(passes::substrateName({ps("core0"), Token(Op::STREAM_SUBTRACT, Rational(1, 2))}) ==
        "STREAM_SUBTRACT_1_2_core0");
  CHECK(passes::substrateName({ps("core0"), ps("core1"), Token(Op::STREAM_HASH)}) == "STREAM_HASH_core0_core1");
  CHECK(passes::substrateName({ps("s2"), ps("s1"), Token(Op::STREAM_ADD)}) == "STREAM_ADD_s2_s1");
  CHECK(passes::substrateName({ps("a"), Token(Op::STREAM_MAX)}) == "STREAM_MAX_a");
}

TEST_CASE("substrate names: the de-interleave rational comes after the stream", "[substrates][names]") {
  // notes/typeinfer.md §5: `&`/`%` carry the rational as an operand token, so it lands last;
  // an integral rational keeps its "_1".
  CHECK(passes::substrateName({ps("core0"), Token(Op::PUSH_VAL, Rational(3, 2)), Token(Op::STREAM_DEHASH_DIV)}) ==
        "STREAM_DEHASH_DIV_core0_3_2");
  CHECK(passes::substrateName({ps("core0"), Token(Op::PUSH_VAL, Rational(2, 1)), Token(Op::STREAM_DEHASH_MOD)}) ==
        "STREAM_DEHASH_MOD_core0_2_1");
}

TEST_CASE("substrate names as produced from FROM clauses", "[substrates][names]") {
  ir::Plan p = extracted(std::string(kCores) +
                         "SELECT * STREAM t1 FROM (core0>2)+core1\n"
                         "SELECT * STREAM t2 FROM (core0@(1,10))+core1\n"
                         "SELECT * STREAM t3 FROM (core0@(1,-10))+core1\n"
                         "SELECT * STREAM t4 FROM (core0-1/2)+core1\n"
                         "SELECT * STREAM t5 FROM (core0-0.5)>1\n"
                         "SELECT * STREAM t6 FROM (core0&3/2)>1\n"
                         "SELECT * STREAM t7 FROM (core0%2)>1\n"
                         "SELECT * STREAM t8 FROM (core0#core1)>1\n");
  for (const char* name :
       {"STREAM_TIMEMOVE_2_core0", "STREAM_AGSE_1_10_core0", "STREAM_AGSE_1_N10_core0", "STREAM_SUBTRACT_1_2_core0",
        "STREAM_DEHASH_DIV_core0_3_2", "STREAM_DEHASH_MOD_core0_2_1", "STREAM_HASH_core0_core1"}) {
    INFO(name);
    CHECK(testing::has(p, name));
  }
  CHECK(ut::from(p, "t1") == "PUSH_STREAM(STREAM_TIMEMOVE_2_core0) PUSH_STREAM(core1) STREAM_ADD");
  CHECK(ut::from(p, "t5") == "PUSH_STREAM(STREAM_SUBTRACT_1_2_core0) STREAM_TIMEMOVE(1)");
  CHECK(ut::from(p, "STREAM_DEHASH_DIV_core0_3_2") == "PUSH_STREAM(core0) PUSH_VAL(3/2) STREAM_DEHASH_DIV");
  CHECK(ut::from(p, "STREAM_DEHASH_MOD_core0_2_1") == "PUSH_STREAM(core0) PUSH_VAL(2/1) STREAM_DEHASH_MOD");
  CHECK(ut::from(p, "STREAM_AGSE_1_N10_core0") == "PUSH_STREAM(core0) STREAM_AGSE(1,-10)");
}

TEST_CASE("substrate names survive into the compiled plan", "[substrates][names]") {
  ir::Plan p = testing::compileText(std::string(kCores) + "SELECT merged[0] STREAM merged FROM (core0>2)+core1\n");
  CHECK(testing::has(p, "STREAM_TIMEMOVE_2_core0"));
  CHECK(ut::from(p, "merged") == "PUSH_STREAM(STREAM_TIMEMOVE_2_core0) PUSH_STREAM(core1) STREAM_ADD");
}

TEST_CASE("a chain s1+s2+s3+s4 is split left to right", "[substrates][extract]") {
  ir::Plan p = extracted(
      "DECLARE a INTEGER STREAM s1, 1 FILE 'x'\nDECLARE a INTEGER STREAM s2, 1 FILE 'x'\n"
      "DECLARE a INTEGER STREAM s3, 1 FILE 'x'\nDECLARE a INTEGER STREAM s4, 1 FILE 'x'\n"
      "SELECT * STREAM sum FROM s1+s2+s3+s4\n");
  CHECK(ut::from(p, "STREAM_ADD_s1_s2") == "PUSH_STREAM(s1) PUSH_STREAM(s2) STREAM_ADD");
  CHECK(ut::from(p, "STREAM_ADD_STREAM_ADD_s1_s2_s3") == "PUSH_STREAM(STREAM_ADD_s1_s2) PUSH_STREAM(s3) STREAM_ADD");
  CHECK(ut::from(p, "sum") == "PUSH_STREAM(STREAM_ADD_STREAM_ADD_s1_s2_s3) PUSH_STREAM(s4) STREAM_ADD");
  CHECK(ut::countPrefix(p, "STREAM_") == 2);
  // Substrates are appended in creation order, after the interval sort of the statements.
  CHECK(p.queries[p.queries.size() - 2].id == "STREAM_ADD_s1_s2");
  CHECK(p.queries.back().id == "STREAM_ADD_STREAM_ADD_s1_s2_s3");
}

TEST_CASE("extraction is innermost-leftmost first", "[substrates][extract]") {
  ir::Plan p = extracted(
      "DECLARE a INTEGER STREAM s1, 1 FILE 'x'\nDECLARE a INTEGER STREAM s2, 1 FILE 'x'\n"
      "DECLARE a INTEGER STREAM s3, 1 FILE 'x'\n"
      "SELECT * STREAM merged FROM s3+((s1+s2)>1)\n");
  CHECK(ut::from(p, "STREAM_ADD_s1_s2") == "PUSH_STREAM(s1) PUSH_STREAM(s2) STREAM_ADD");
  CHECK(ut::from(p, "STREAM_TIMEMOVE_1_STREAM_ADD_s1_s2") == "PUSH_STREAM(STREAM_ADD_s1_s2) STREAM_TIMEMOVE(1)");
  CHECK(ut::from(p, "merged") == "PUSH_STREAM(s3) PUSH_STREAM(STREAM_TIMEMOVE_1_STREAM_ADD_s1_s2) STREAM_ADD");
}

TEST_CASE("substrates: flags, placeholder schema and SUBSTRAT profile", "[substrates][extract]") {
  ir::Plan p = extracted(std::string("SUBSTRAT 'memory'\n") + kCores + "SELECT * STREAM t FROM (core0>2)+core1\n");
  const ir::Query& s = p.get("STREAM_TIMEMOVE_2_core0");
  CHECK(s.isSubstrat);
  CHECK(s.policyProfile == "MEMORY");
  CHECK(s.policyCapacity == 1);
  CHECK(s.interval.isZero());
  REQUIRE(s.schema.size() == 1);
  CHECK(ut::str(s.schema[0].program) == "PUSH_TSCAN(*)");
  CHECK_FALSE(p.get("t").isSubstrat);

  ir::Plan d = extracted(std::string(kCores) + "SELECT * STREAM t FROM (core0>2)+core1\n");
  CHECK(d.get("STREAM_TIMEMOVE_2_core0").policyProfile == "DEFAULT");
}

TEST_CASE("a FROM program with one operator is not split", "[substrates][extract]") {
  ir::Plan p = extracted(std::string(kCores) +
                         "SELECT * STREAM t1 FROM core0+core1\nSELECT * STREAM t2 FROM core0>1\n"
                         "SELECT * STREAM t3 FROM core0.max\n");
  CHECK(ut::countPrefix(p, "STREAM_") == 0);
}

TEST_CASE("fnv1a64: the standard 64-bit FNV-1a", "[substrates][digest]") {
  CHECK(passes::fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(passes::fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(passes::fnv1a64("foobar") == 0x85944171f73967e8ULL);
}

TEST_CASE("a readable name above 200 bytes becomes OPNAME_x<fnv1a64> (compiler.md §5.2.1)", "[substrates][digest]") {
  const std::string third =
      "STREAM_ADD_STREAM_ADD_STREAM_ADD_sensor_channel_00_raw_measurement_sensor_channel_01_raw_measurement_"
      "sensor_channel_02_raw_measurement_sensor_channel_03_raw_measurement";
  const std::string readable = "STREAM_ADD_" + third + "_sensor_channel_04_raw_measurement";
  REQUIRE(readable.size() == 213);
  CHECK(hex16(passes::fnv1a64(readable)) == "2a325a70f1f643aa");
  CHECK(passes::substrateName({ps(third), ps("sensor_channel_04_raw_measurement"), Token(Op::STREAM_ADD)}) ==
        "STREAM_ADD_x2a325a70f1f643aa");
}

TEST_CASE("the 213-byte chain compiles to STREAM_ADD_x2a325a70f1f643aa", "[substrates][digest]") {
  std::string text;
  for (int i = 0; i < 5; ++i)
    text += "DECLARE a INTEGER STREAM sensor_channel_0" + std::to_string(i) + "_raw_measurement, 1 FILE 'x'\n";
  text +=
      "SELECT * STREAM wide FROM (sensor_channel_00_raw_measurement+sensor_channel_01_raw_measurement+"
      "sensor_channel_02_raw_measurement+sensor_channel_03_raw_measurement+sensor_channel_04_raw_measurement)>1\n";
  ir::Plan p = testing::compileText(text);
  CHECK(testing::has(p, "STREAM_ADD_x2a325a70f1f643aa"));
  CHECK(ut::from(p, "wide") == "PUSH_STREAM(STREAM_ADD_x2a325a70f1f643aa) STREAM_TIMEMOVE(1)");
  // The nested operands keep their readable (short enough) names.
  CHECK(testing::has(p,
                     "STREAM_ADD_STREAM_ADD_STREAM_ADD_sensor_channel_00_raw_measurement_sensor_channel_01_raw_"
                     "measurement_sensor_channel_02_raw_measurement_sensor_channel_03_raw_measurement"));
}

TEST_CASE("names of exactly 200 bytes stay readable, 201 bytes are digested", "[substrates][digest]") {
  const std::string prefix = "STREAM_TIMEMOVE_1_";
  std::string op200(200 - prefix.size(), 'q');
  std::string op201(201 - prefix.size(), 'q');
  Token shift(Op::STREAM_TIMEMOVE, int32_t(1));
  CHECK(passes::substrateName({ps(op200), shift}) == prefix + op200);
  std::string digested = passes::substrateName({ps(op201), shift});
  CHECK(digested == "STREAM_TIMEMOVE_x" + hex16(passes::fnv1a64(prefix + op201)));
  CHECK(digested.size() == std::string("STREAM_TIMEMOVE_x").size() + 16);
  // A different operand order gives a different digest.
  std::string l(120, 'l'), r(120, 'r');
  CHECK(passes::substrateName({ps(l), ps(r), Token(Op::STREAM_ADD)}) !=
        passes::substrateName({ps(r), ps(l), Token(Op::STREAM_ADD)}));
}

TEST_CASE("name uniqueness: one name for two different programs is an error", "[substrates][unique]") {
  // A_B + C and A + B_C both read STREAM_ADD_A_B_C.
  std::string text =
      "DECLARE x INTEGER STREAM A_B, 1 FILE 'x'\nDECLARE x INTEGER STREAM C, 1 FILE 'x'\n"
      "DECLARE x INTEGER STREAM A, 1 FILE 'x'\nDECLARE x INTEGER STREAM B_C, 1 FILE 'x'\n"
      "SELECT * STREAM q1 FROM (A_B+C)>1\n"
      "SELECT * STREAM q2 FROM (A+B_C)>1\n";
  CHECK_THROWS_WITH(testing::compileText(text),
                    Catch::Contains("Substrate name 'STREAM_ADD_A_B_C' denotes two different programs"));
  ir::Plan p = extracted(text);
  CHECK_THROWS_AS(passes::validateSubstrateNameUniqueness(p), ir::CompileError);
}

TEST_CASE("name uniqueness: identical duplicates are allowed and collapse", "[substrates][unique]") {
  std::string text =
      "DECLARE a UINT STREAM core0, 0.1 TEXTFILE 'datafile1.txt'\n"
      "DECLARE a UINT STREAM core1, 0.1 TEXTFILE 'datafile2.txt'\n"
      "SELECT str4[0] STREAM str4 FROM (core0+core1)>2\n"
      "SELECT str5[0] STREAM str5 FROM (core0+core1)>3\n";
  ir::Plan p = extracted(text);
  CHECK(ut::countPrefix(p, "STREAM_ADD_core0_core1") == 2);
  CHECK_NOTHROW(passes::validateSubstrateNameUniqueness(p));
  ir::Plan c = testing::compileText(text, ut::allOff());
  CHECK(ut::countPrefix(c, "STREAM_ADD_core0_core1") == 1);
}

TEST_CASE("snapshotNamedSourceRefs records the streams the user named", "[substrates][refs]") {
  ir::Plan p = ut::rawPlan(
      "DECLARE a INTEGER STREAM s, 1 FILE 'x'\nDECLARE b INTEGER STREAM r, 1 FILE 'x'\n"
      "SELECT s[0], r.b, s[_], a, t[0] STREAM t FROM s+r\n"
      "SELECT s.* STREAM u FROM s\n"
      "SELECT * STREAM v FROM s\n"
      "RULE x ON v WHEN r[0] > 1 DO DUMP 0 TO 1 RETENTION 1\n");
  passes::snapshotNamedSourceRefs(p);
  CHECK(p.get("t").userRefs == std::set<std::string>{"s", "r", "t"});
  CHECK(p.get("u").userRefs == std::set<std::string>{"s"});
  CHECK(p.get("v").userRefs == std::set<std::string>{"r"});
}

TEST_CASE("name uniqueness: a user stream named like a different substrate is an error", "[substrates][unique]") {
  std::string err = ut::compileError<ir::CompileError>(
      "DECLARE x INTEGER STREAM a, 1 FILE 'x'\nDECLARE x INTEGER STREAM b, 1 FILE 'x'\n"
      "DECLARE x INTEGER STREAM c, 1 FILE 'x'\n"
      "SELECT * STREAM STREAM_ADD_a_b FROM a+c\n"
      "SELECT * STREAM q FROM (a+b)>1\n");
  CHECK(err.find("Substrate name 'STREAM_ADD_a_b' denotes two different programs") != std::string::npos);
}
