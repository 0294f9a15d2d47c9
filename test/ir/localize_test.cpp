// localizeFieldOffsets: source-relative PUSH_IDs become positions in the stream's
// own input record; the interleave-constituent gate; strict reference checks
// (compiler.md §5.11, language.md §5.2; spec/README.md: strict checks adopted).
#include "../unit_helpers.hpp"

namespace {

const char* kSrc =
    "DECLARE a INTEGER, b INTEGER STREAM core0, 1 FILE 'datafile2.dat'\n"
    "DECLARE c INTEGER, d INTEGER STREAM core1, 0.5 FILE 'datafile3.dat'\n"
    "DECLARE e INTEGER STREAM core2, 0.25 FILE 'datafile4.dat'\n"
    "DECLARE v INTEGER[25] STREAM wide, 1 FILE 'wide.dat'\n";

std::string fieldOf(const std::string& select, size_t i = 0) {
  ir::Plan p = testing::compileText(std::string(kSrc) + select + "\n");
  return ut::field(p, "m", i);
}

const std::string kGate = "which is a constituent of an interleave (#)";

}  // namespace

TEST_CASE("offsets after +: the right operand starts after the left one's flat width", "[localize]") {
  // Pattern1 str3: core0[0] in core1+core0 is input element flat(core1)+0 = 2.
  CHECK(fieldOf("SELECT core0[0],core0[1] STREAM m FROM core1+core0", 0) == "PUSH_ID(m[2])");
  CHECK(fieldOf("SELECT core0[0],core0[1] STREAM m FROM core1+core0", 1) == "PUSH_ID(m[3])");
  CHECK(fieldOf("SELECT core1[1] STREAM m FROM core1+core0") == "PUSH_ID(m[1])");
  CHECK(fieldOf("SELECT core0[1] STREAM m FROM core0+core1") == "PUSH_ID(m[1])");
  CHECK(fieldOf("SELECT core1[0] STREAM m FROM core0+core1") == "PUSH_ID(m[2])");
}

TEST_CASE("own-name references address the input record unchanged", "[localize]") {
  CHECK(fieldOf("SELECT m[3] STREAM m FROM core0+core1") == "PUSH_ID(m[3])");
  CHECK(fieldOf("SELECT m[0]*10 STREAM m FROM core0") == "PUSH_ID(m[0]) PUSH_VAL(10) MULTIPLY");
}

TEST_CASE("offsets count flat elements: INTEGER[25] takes 25 positions", "[localize]") {
  CHECK(fieldOf("SELECT core0[1] STREAM m FROM wide+core0") == "PUSH_ID(m[26])");
  CHECK(fieldOf("SELECT wide[24] STREAM m FROM core0+wide") == "PUSH_ID(m[26])");
}

TEST_CASE("names behind substrates get their offsets transitively", "[localize]") {
  // (core0+core1)+core2: core0 at 0, core1 at 2, core2 at 4.
  CHECK(fieldOf("SELECT core2[0] STREAM m FROM (core0+core1)+core2") == "PUSH_ID(m[4])");
  CHECK(fieldOf("SELECT core1[1] STREAM m FROM (core0+core1)+core2") == "PUSH_ID(m[3])");
  CHECK(fieldOf("SELECT core1[0] STREAM m FROM core2+(core0+core1)") == "PUSH_ID(m[3])");
  CHECK(fieldOf("SELECT core0[1] STREAM m FROM (core0>1)+core2") == "PUSH_ID(m[1])");
  CHECK(fieldOf("SELECT core2[0] STREAM m FROM (core0>1)+core2") == "PUSH_ID(m[2])");
}

TEST_CASE("field names and bare names localize like indices", "[localize]") {
  CHECK(fieldOf("SELECT core1.d STREAM m FROM core0+core1") == "PUSH_ID(m[3])");
  CHECK(fieldOf("SELECT e STREAM m FROM core0+core2") == "PUSH_ID(m[2])");
  CHECK(fieldOf("SELECT a STREAM m FROM core1+core0") == "PUSH_ID(m[2])");
}

TEST_CASE("offsets of a SELECT * over + (simple_max str2)", "[localize]") {
  ir::Plan p = testing::compileText(std::string(kSrc) + "SELECT * STREAM m FROM core1+core0\n");
  const ir::Query& q = p.get("m");
  REQUIRE(q.schema.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(ut::str(q.schema[i].program) == "PUSH_ID(m[" + std::to_string(i) + "])");
  CHECK(q.schema[0].name == "core1_0");
  CHECK(q.schema[2].name == "core0_2");
}

TEST_CASE("interleave gate: a constituent of # cannot be referenced", "[localize][gate]") {
  const std::string hash = "DECLARE x INTEGER, y INTEGER STREAM h2, 1 FILE 'h2.dat'\n";
  auto err = [&](const std::string& select) {
    return ut::compileError<ir::CompileError>(std::string(kSrc) + hash + select + "\n");
  };
  SECTION("direct operand by index") {
    std::string e = err("SELECT core0[0] STREAM m FROM core0#core1");
    CHECK(e.find("Stream 'm' refers to 'core0', " + kGate) != std::string::npos);
    CHECK(e.find("Refer to 'm' by its own name, or recover the constituent with de-interleave (& / %)") !=
          std::string::npos);
  }
  SECTION("the right operand too") {
    CHECK(err("SELECT core1[1] STREAM m FROM core0#core1").find("refers to 'core1', " + kGate) != std::string::npos);
  }
  SECTION("by field name, bare name, wildcard and qualified star") {
    CHECK(err("SELECT core0.a STREAM m FROM core0#core1").find(kGate) != std::string::npos);
    CHECK(err("SELECT a STREAM m FROM core0#core1").find(kGate) != std::string::npos);
    CHECK(err("SELECT core0[_] STREAM m FROM core0#core1").find(kGate) != std::string::npos);
    CHECK(err("SELECT core0.* STREAM m FROM core0#core1").find(kGate) != std::string::npos);
  }
  SECTION("hidden behind a substrate") {
    CHECK(err("SELECT core0[0] STREAM m FROM (core0#core1)+core2").find("refers to 'core0', " + kGate) !=
          std::string::npos);
    CHECK(err("SELECT core0[0] STREAM m FROM (core0#core1)>1").find(kGate) != std::string::npos);
    CHECK(err("SELECT core0[0] STREAM m FROM ((core0+h2)#(core1+core0))+core2").find(kGate) != std::string::npos);
  }
  SECTION("in a rule condition") {
    CHECK(err("SELECT m[0] STREAM m FROM core0#core1\nRULE r ON m WHEN core1[0] > 1 DO DUMP -1 TO 1")
              .find("refers to 'core1', " + kGate) != std::string::npos);
  }
}

TEST_CASE("interleave gate: own name and non-constituents are fine", "[localize][gate]") {
  CHECK(fieldOf("SELECT m[1] STREAM m FROM core0#core1") == "PUSH_ID(m[1])");
  // core2 sits after the interleave's two positions.
  CHECK(fieldOf("SELECT core2[0] STREAM m FROM (core0#core1)+core2") == "PUSH_ID(m[2])");
  CHECK(fieldOf("SELECT m[0] STREAM m FROM (core0#core1)>1") == "PUSH_ID(m[0])");
  CHECK(ut::compileError(std::string(kSrc) + "SELECT * STREAM m FROM core0#core1\n").empty());
}

TEST_CASE("strict references: a stream outside FROM or an index out of range is an error", "[localize][strict]") {
  std::string e = ut::compileError<ir::CompileError>(std::string(kSrc) + "SELECT core1[0] STREAM m FROM core0\n");
  CHECK(e.find("Stream 'm' refers to 'core1', which is not in its FROM clause") != std::string::npos);
  e = ut::compileError<ir::CompileError>(std::string(kSrc) + "SELECT core0[2] STREAM m FROM core0\n");
  CHECK(e.find("index 2 of core0 is out of range") != std::string::npos);
  e = ut::compileError<ir::CompileError>(std::string(kSrc) + "SELECT m[4] STREAM m FROM core0+core1\n");
  CHECK(e.find("index 4 of m is out of range") != std::string::npos);
  e = ut::compileError(std::string(kSrc) + "SELECT foo[3] STREAM m FROM core0\n");
  CHECK(e.find("foo") != std::string::npos);
  CHECK(fieldOf("SELECT m[3] STREAM m FROM core0+core1") == "PUSH_ID(m[3])");
}

TEST_CASE("rule conditions are not localized", "[localize][rules]") {
  ir::Plan p = testing::compileText(std::string(kSrc) +
                                    "SELECT m[0] STREAM m FROM core0+core1\n"
                                    "RULE r ON m WHEN m[0] < 15 DO DUMP -5 TO 5\n"
                                    "RULE s ON m WHEN core1[0] > 11 DO DUMP -5 TO 5\n");
  REQUIRE(p.get("m").rules.size() == 2);
  CHECK(ut::str(p.get("m").rules[0].condition) == "PUSH_ID(m[0]) PUSH_VAL(15) CMP_LT");
  CHECK(ut::str(p.get("m").rules[1].condition) == "PUSH_ID(core1[0]) PUSH_VAL(11) CMP_GT");
  // A rule reads m's record (one field): index 1 of anything is past its end.
  std::string e = ut::compileError<ir::CompileError>(std::string(kSrc) +
                                                     "SELECT m[0] STREAM m FROM core0+core1\n"
                                                     "RULE s ON m WHEN core1[1] > 11 DO DUMP -5 TO 5\n");
  CHECK(e.find("rule 's': core1[1] is outside the record of 'm' (1 field)") != std::string::npos);
}

TEST_CASE("sourceOffsets and inputRecord of a query", "[localize]") {
  ir::Plan p = testing::compileText(std::string(kSrc) + "SELECT m[0] STREAM m FROM (core0#core1)+core2\n");
  ir::passes::SourceOffsets so = ir::passes::sourceOffsets(p, p.get("m"));
  CHECK(so.offset.at("STREAM_HASH_core0_core1") == 0);
  CHECK(so.offset.at("core2") == 2);
  CHECK(so.offset.at("core0") == 0);
  CHECK(so.offset.at("core1") == 0);
  CHECK(so.viaInterleave == std::set<std::string>{"core0", "core1"});
  CHECK(ir::passes::inputRecord(p, p.get("m")).size() == 3);
}
