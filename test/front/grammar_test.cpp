// Grammar and lowering to IR token programs (language.md §3–§5, compiler.md §4).
#include "../unit_helpers.hpp"

using ut::errorOf;
using ut::field;
using ut::parse;
using ut::stmt;

using ut::expr;
using ut::kDecl;

namespace {

// FROM program of `SELECT * STREAM t FROM <e>`.
std::string fromOf(const std::string& e) {
  auto qs = parse("SELECT * STREAM t FROM " + e + "\n");
  return ut::str(stmt(qs, "t").program);
}

bool syntaxError(const std::string& text) {
  try {
    parse(text);
  } catch (const rql::SyntaxError&) {
    return true;
  }
  return false;
}

}  // namespace

TEST_CASE("precedence: '+' binds tighter than binary '-' (a-b+c = a-(b+c))", "[grammar][precedence]") {
  CHECK(expr("s[0]-s[1]+s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) PUSH_ID2(s[2]) ADD SUBTRACT");
  CHECK(expr("s[0]+s[1]-s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) ADD PUSH_ID2(s[2]) SUBTRACT");
  CHECK(expr("s[0]-s[1]-s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) SUBTRACT PUSH_ID2(s[2]) SUBTRACT");
  CHECK(expr("s[0]+s[1]+s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) ADD PUSH_ID2(s[2]) ADD");
  CHECK(expr("10-2+3") == "PUSH_VAL(10) PUSH_VAL(2) PUSH_VAL(3) ADD SUBTRACT");
}

TEST_CASE("precedence: '*' binds tighter than '/' (a/b*c = a/(b*c))", "[grammar][precedence]") {
  CHECK(expr("s[0]/s[1]*s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) PUSH_ID2(s[2]) MULTIPLY DIVIDE");
  CHECK(expr("s[0]*s[1]/s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) MULTIPLY PUSH_ID2(s[2]) DIVIDE");
  CHECK(expr("s[0]/s[1]/s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) DIVIDE PUSH_ID2(s[2]) DIVIDE");
}

TEST_CASE("precedence: multiplicative operators bind tighter than additive ones", "[grammar][precedence]") {
  CHECK(expr("s[0]+s[1]*s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) PUSH_ID2(s[2]) MULTIPLY ADD");
  CHECK(expr("s[0]-s[1]/s[2]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) PUSH_ID2(s[2]) DIVIDE SUBTRACT");
  CHECK(expr("(s[0]+1)*2+1") == "PUSH_ID2(s[0]) PUSH_VAL(1) ADD PUSH_VAL(2) MULTIPLY PUSH_VAL(1) ADD");
  CHECK(expr("str1[1]*str1[0]+20") == "PUSH_ID2(str1[1]) PUSH_ID2(str1[0]) MULTIPLY PUSH_VAL(20) ADD");
}

TEST_CASE("precedence: NOT extends over * and / but not over + and -", "[grammar][precedence]") {
  CHECK(expr("NOT s[0]*s[1]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) MULTIPLY NOT");
  CHECK(expr("NOT s[0]/s[1]") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) DIVIDE NOT");
  CHECK(expr("NOT s[0]+s[1]") == "PUSH_ID2(s[0]) NOT PUSH_ID2(s[1]) ADD");
  CHECK(expr("NOT s[0]-s[1]") == "PUSH_ID2(s[0]) NOT PUSH_ID2(s[1]) SUBTRACT");
  CHECK(expr("s[1]+NOT s[0]") == "PUSH_ID2(s[1]) PUSH_ID2(s[0]) NOT ADD");
}

TEST_CASE("negative literals", "[grammar][literals]") {
  CHECK(expr("-5") == "PUSH_VAL(-5)");
  CHECK(expr("3--5") == "PUSH_VAL(3) PUSH_VAL(-5) SUBTRACT");
  CHECK(expr("s[0]*-2") == "PUSH_ID2(s[0]) PUSH_VAL(-2) MULTIPLY");
  CHECK(expr("-2.5") == "PUSH_VAL(-2.5)");
  CHECK(expr("-2147483648") == "PUSH_VAL(-2147483648)");
  // A binary minus stays binary.
  CHECK(expr("s[0]-5") == "PUSH_ID2(s[0]) PUSH_VAL(5) SUBTRACT");
  CHECK(expr("2-3") == "PUSH_VAL(2) PUSH_VAL(3) SUBTRACT");
  CHECK(expr("s[0]--5") == "PUSH_ID2(s[0]) PUSH_VAL(-5) SUBTRACT");
  CHECK(expr("-5+s[0]") == "PUSH_VAL(-5) PUSH_ID2(s[0]) ADD");
  CHECK(expr("-2*3") == "PUSH_VAL(-2) PUSH_VAL(3) MULTIPLY");
  auto qs = parse(std::string(kDecl) + "SELECT -5, -2.5, 7, 0.5 STREAM t FROM s\n");
  const auto& t = stmt(qs, "t");
  CHECK(std::holds_alternative<int32_t>(t.schema[0].program[0].v));
  CHECK(std::holds_alternative<float>(t.schema[1].program[0].v));
  CHECK(std::get<float>(t.schema[1].program[0].v) == -2.5f);
  CHECK(std::get<int32_t>(t.schema[2].program[0].v) == 7);
}

TEST_CASE("unary minus on an expression is NEGATE (adopted)", "[grammar][literals]") {
  CHECK(expr("-s[0]") == "PUSH_ID2(s[0]) NEGATE");
  CHECK(expr("-(2)") == "PUSH_VAL(2) NEGATE");
}

TEST_CASE("integer literals out of range are syntax errors", "[grammar][literals]") {
  CHECK(syntaxError(std::string(kDecl) + "SELECT 2147483648 STREAM t FROM s\n"));
  CHECK(syntaxError(std::string(kDecl) + "SELECT 99999999999 STREAM t FROM s\n"));
  CHECK(syntaxError(std::string(kDecl) + "SELECT 1E5 STREAM t FROM s\n"));
}

// Counts, indexes, windows and reaches are bounded by the plan's limits: one
// past them, however long, is the same plan error (exit 71) as one just past.
TEST_CASE("a count, index or window past its limit is a plan error, not a syntax error", "[grammar][literals]") {
  auto refusal = [](const std::string& text) {
    try {
      parse(std::string(kDecl) + text);
    } catch (const ir::CompileError& e) {
      return std::string(e.what());
    } catch (const std::exception& e) {
      return std::string("not a plan error: ") + e.what();
    }
    return std::string("accepted");
  };
  CHECK(refusal("SELECT s[99999999999999999999] STREAM t FROM s\n") ==
        "index 99999999999999999999 exceeds the limit 2147483647");
  CHECK(refusal("SELECT MIN(s[0] : 2147483648) STREAM t FROM s\n") == "window 2147483648 exceeds the limit 65536");
  CHECK(refusal("SELECT MIN(s[0] : -1) STREAM t FROM s\n") == "window must not be negative, got -1");
  CHECK(refusal("SELECT * STREAM t FROM s > 99999999999\n") == "time shift 99999999999 exceeds the limit 65536");
  CHECK(refusal("SELECT * STREAM t FROM s@(1,99999999999)\n") == "number 99999999999 exceeds the limit 2147483647");
}

TEST_CASE("operands: references and literals lower to their tokens", "[grammar][operands]") {
  CHECK(expr("a") == "PUSH_ID3(a)");
  CHECK(expr("s.b") == "PUSH_ID1(s.b)");
  CHECK(expr("s[2]") == "PUSH_ID2(s[2])");
  CHECK(expr("s[_]") == "PUSH_IDX(s[_])");
  CHECK(expr("'txt'") == "PUSH_VAL(txt)");
  CHECK(expr("Sqrt(s[0])") == "PUSH_ID2(s[0]) CALL(Sqrt)");
  CHECK(expr("to_string(s[0] : 8)") == "PUSH_ID2(s[0]) CALL2(to_string[8])");
}

TEST_CASE("SELECT fields are named <stream>_<i>; * is one placeholder field", "[grammar][select]") {
  auto qs = parse(std::string(kDecl) +
                  "SELECT s[0], s[1]*2 STREAM t FROM s\nSELECT * STREAM u FROM s\n"
                  "SELECT s.* STREAM v FROM s\n");
  const auto& t = stmt(qs, "t");
  REQUIRE(t.schema.size() == 2);
  CHECK(t.schema[0].name == "t_0");
  CHECK(t.schema[1].name == "t_1");
  CHECK(field(qs, "u") == "PUSH_TSCAN(*)");
  CHECK(field(qs, "v") == "PUSH_TSCAN(s.*)");
  CHECK(syntaxError(std::string(kDecl) + "SELECT *, s[0] STREAM t FROM s\n"));
}

TEST_CASE("FROM expressions lower to reverse Polish stream programs", "[grammar][from]") {
  CHECK(fromOf("core0") == "PUSH_STREAM(core0)");
  CHECK(fromOf("core0+core1") == "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_ADD");
  CHECK(fromOf("core0#core1") == "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_HASH");
  CHECK(fromOf("(core0#core1)+core2") ==
        "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_HASH PUSH_STREAM(core2) STREAM_ADD");
  CHECK(fromOf("core0>2") == "PUSH_STREAM(core0) STREAM_TIMEMOVE(2)");
  CHECK(fromOf("core1-1/2") == "PUSH_STREAM(core1) STREAM_SUBTRACT(1/2)");
  CHECK(fromOf("core1-0.5") == "PUSH_STREAM(core1) STREAM_SUBTRACT(1/2)");
  CHECK(fromOf("core0&3/2") == "PUSH_STREAM(core0) PUSH_VAL(3/2) STREAM_DEHASH_DIV");
  CHECK(fromOf("core0%2") == "PUSH_STREAM(core0) PUSH_VAL(2/1) STREAM_DEHASH_MOD");
  CHECK(fromOf("core@(1,10)") == "PUSH_STREAM(core) STREAM_AGSE(1,10)");
  CHECK(fromOf("core@(1,-10)") == "PUSH_STREAM(core) STREAM_AGSE(1,-10)");
  CHECK(fromOf("str0.max") == "PUSH_STREAM(str0) STREAM_MAX");
  CHECK(fromOf("str0.sumc") == "PUSH_STREAM(str0) STREAM_SUM");
  CHECK(fromOf("str0.min") == "PUSH_STREAM(str0) STREAM_MIN");
  CHECK(fromOf("str0.avg") == "PUSH_STREAM(str0) STREAM_AVG");
}

TEST_CASE("FROM grammar: chains are left-associative, # binds tighter than + and >", "[grammar][from]") {
  CHECK(fromOf("s1+s2+s3+s4") ==
        "PUSH_STREAM(s1) PUSH_STREAM(s2) STREAM_ADD PUSH_STREAM(s3) STREAM_ADD PUSH_STREAM(s4) STREAM_ADD");
  CHECK(fromOf("s1#s2#s3") == "PUSH_STREAM(s1) PUSH_STREAM(s2) STREAM_HASH PUSH_STREAM(s3) STREAM_HASH");
  CHECK(fromOf("A#B>1") == "PUSH_STREAM(A) PUSH_STREAM(B) STREAM_HASH STREAM_TIMEMOVE(1)");
  CHECK(fromOf("a+b#c") == "PUSH_STREAM(a) PUSH_STREAM(b) PUSH_STREAM(c) STREAM_HASH STREAM_ADD");
  CHECK(fromOf("(A>2)#(B>1)") == "PUSH_STREAM(A) STREAM_TIMEMOVE(2) PUSH_STREAM(B) STREAM_TIMEMOVE(1) STREAM_HASH");
  CHECK(fromOf("s3+((s1+s2)>1)") ==
        "PUSH_STREAM(s3) PUSH_STREAM(s1) PUSH_STREAM(s2) STREAM_ADD STREAM_TIMEMOVE(1) STREAM_ADD");
}

TEST_CASE("# written inline with spaces is the interleave, not a comment", "[grammar][hash][comment]") {
  auto qs = parse("SELECT merged[0] STREAM merged FROM (core0 # core1) + core2\n");
  CHECK(ut::str(stmt(qs, "merged").program) ==
        "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_HASH PUSH_STREAM(core2) STREAM_ADD");
  CHECK(fromOf("core0 # core1") == "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_HASH");
  CHECK(fromOf("core0 #core1") == "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_HASH");
}

TEST_CASE("comments: column-0 # lines, // and nested /* */ are ignored", "[grammar][comment]") {
  auto qs = parse(
      "# header comment\n"
      "#SELECT * STREAM ghost FROM nowhere\n"
      "DECLARE a INTEGER STREAM s, 1 FILE 'x.dat' // trailing comment\n"
      "/* block /* nested */ still comment */ SELECT s[0] /* inline */ STREAM t FROM s\n"
      "// SELECT * STREAM ghost2 FROM s\n"
      "   # indented comment line\n");
  REQUIRE(qs.size() == 2);
  CHECK(qs[0].id == "s");
  CHECK(qs[1].id == "t");
  CHECK(field(qs, "t") == "PUSH_ID2(s[0])");
}

TEST_CASE("backslash continuation joins a statement across physical lines", "[grammar][lines]") {
  auto qs = parse(
      "DECLARE a INTEGER, \\\n"
      "        b BYTE \\\n"
      "# a comment inside the continuation\n"
      "  STREAM s, 0.5 FILE 'x.dat'\n"
      "SELECT s[0]+ \\\n"
      "  s[1] STREAM t \\\n"
      "  FROM s\n");
  REQUIRE(qs.size() == 2);
  const auto& s = stmt(qs, "s");
  REQUIRE(s.schema.size() == 2);
  CHECK(s.schema[1].type == ir::Type::BYTE);
  CHECK(s.interval == ir::Rational(1, 2));
  CHECK(field(qs, "t") == "PUSH_ID2(s[0]) PUSH_ID2(s[1]) ADD");
  // The statement location is the physical line it starts on.
  CHECK(stmt(qs, "t").loc.line == 5);
}

TEST_CASE("several statements may share one logical line", "[grammar][lines]") {
  auto qs = parse("DECLARE a INTEGER STREAM s, 1 FILE 'x.dat' SELECT s[0] STREAM t FROM s\n");
  CHECK(ut::order(qs) == "s t");
}

TEST_CASE("DECLARE: fields, intervals, flags", "[grammar][declare]") {
  auto qs = parse(
      "DECLARE a BYTE, b INTEGER[25], c STRING[16], d DOUBLE STREAM s, 0.1 FILE 'x.dat' DISPOSABLE ONESHOT HOLD\n"
      "DECLARE a UINT STREAM r, 1/3 FILE 'y.dat'\n"
      "DECLARE a FLOAT STREAM q, 2 FILE 'z.dat' HOLD\n");
  const auto& s = stmt(qs, "s");
  REQUIRE(s.schema.size() == 4);
  CHECK(ut::shape(s.schema[0]) == "BYTE 1x1");
  CHECK(ut::shape(s.schema[1]) == "INTEGER 4x25");
  CHECK(ut::shape(s.schema[2]) == "STRING 1x16");
  CHECK(ut::shape(s.schema[3]) == "DOUBLE 8x1");
  CHECK(s.interval == ir::Rational(1, 10));
  CHECK(s.isDisposable);
  CHECK(s.isOneShot);
  CHECK(s.isHold);
  CHECK(s.program.empty());
  CHECK(stmt(qs, "r").interval == ir::Rational(1, 3));
  CHECK(stmt(qs, "q").interval == ir::Rational(2, 1));
  CHECK_FALSE(stmt(qs, "q").isDisposable);
  CHECK(stmt(qs, "q").isHold);
}

TEST_CASE("DECLARE: TEXTFILE, BINFILE and DEVICE select the source kind; FILE guesses from .txt and /dev/",
          "[grammar][declare][source]") {
  auto qs = parse(
      "DECLARE a INTEGER STREAM t1, 1 TEXTFILE 'data.dat'\n"
      "DECLARE a INTEGER STREAM t2, 1 textfile 'data.dat'\n"
      "DECLARE a INTEGER STREAM b1, 1 BINFILE 'data.txt'\n"
      "DECLARE a INTEGER STREAM d1, 1 DEVICE '/dev/urandom'\n"
      "DECLARE a INTEGER STREAM f1, 1 FILE 'Sensor.TXT.gz'\n"
      "DECLARE a INTEGER STREAM f2, 1 FILE 'datafile2.dat'\n"
      "DECLARE a INTEGER STREAM f3, 1 FILE '/dev/ttyUSB0'\n");
  CHECK(stmt(qs, "t1").sourceKind == ir::SourceKind::TEXTSOURCE);
  CHECK(stmt(qs, "t2").sourceKind == ir::SourceKind::TEXTSOURCE);
  CHECK(stmt(qs, "b1").sourceKind == ir::SourceKind::BINFILE);
  CHECK(stmt(qs, "d1").sourceKind == ir::SourceKind::DEVICE);
  CHECK(stmt(qs, "f1").sourceKind == ir::SourceKind::TEXTSOURCE);
  CHECK(stmt(qs, "f2").sourceKind == ir::SourceKind::BINFILE);  // a regular file: BINFILE
  CHECK(stmt(qs, "f3").sourceKind == ir::SourceKind::DEVICE);   // under /dev/: DEVICE
  CHECK(stmt(qs, "t1").filename == "data.dat");
  CHECK(stmt(qs, "d1").filename == "/dev/urandom");
}

TEST_CASE("DECLARE: the dump is the same with FILE and TEXTFILE", "[grammar][declare][source]") {
  std::string q = "SELECT s[0] STREAM t FROM s\n";
  CHECK(testing::planOf("DECLARE a INTEGER STREAM s, 1 FILE 'd.txt'\n" + q) ==
        testing::planOf("DECLARE a INTEGER STREAM s, 1 TEXTFILE 'd.txt'\n" + q));
}

TEST_CASE("DECLARE: a zero interval or a zero denominator is rejected", "[grammar][declare]") {
  CHECK_FALSE(errorOf<std::exception>("DECLARE a INTEGER STREAM s, 0 FILE 'x'\n").empty());
  CHECK_FALSE(errorOf<std::exception>("DECLARE a INTEGER STREAM s, 1/0 FILE 'x'\n").empty());
}

TEST_CASE("SELECT clauses: FILE, RETENTION, VOLATILE, STORAGE", "[grammar][select]") {
  auto qs = parse(
      "DECLARE a INTEGER STREAM s, 1 FILE 'x.dat'\n"
      "SELECT * STREAM o1 FROM s FILE 'out1_file.dat' RETENTION 20 5\n"
      "SELECT * STREAM o2 FROM s RETENTION 7\n"
      "SELECT * STREAM o3 FROM s VOLATILE\n"
      "SELECT * STREAM o4 FROM s STORAGE memory\n");
  CHECK(stmt(qs, "o1").filename == "out1_file.dat");
  CHECK(stmt(qs, "o1").retentionCapacity == 20);
  CHECK(stmt(qs, "o1").retentionSegments == 5);
  CHECK(stmt(qs, "o2").policyCapacity == 7);
  CHECK(stmt(qs, "o3").policyProfile == "MEMORY");
  CHECK(stmt(qs, "o3").policyCapacity == 1);
  CHECK(stmt(qs, "o4").storageProfile == "MEMORY");
}

TEST_CASE("directives become :KEYWORD pseudo-streams", "[grammar][directive]") {
  auto qs = parse("STORAGE 'temp'\nSUBSTRAT 'memory'\nROTATION 'counter'\n");
  CHECK(stmt(qs, ":STORAGE").filename == "temp/");
  CHECK(stmt(qs, ":SUBSTRAT").filename == "memory");
  CHECK(stmt(qs, ":ROTATION").filename == "counter");
  CHECK(parse("STORAGE 'temp/'\n")[0].filename == "temp/");
}

TEST_CASE("RULE attaches to an already parsed stream", "[grammar][rule]") {
  auto qs = parse(
      "DECLARE a INTEGER STREAM core0, 0.1 FILE 'datafile2.dat'\n"
      "SELECT str1[0] STREAM str1 FROM core0\n"
      "RULE r1 ON str1 WHEN str1[0] < 15 DO DUMP -5 TO 5\n"
      "RULE r2 ON str1 WHEN str1[0] = 13 OR str1[0] = 11 DO SYSTEM 'echo x'\n"
      "RULE r3 ON str1 WHEN str1[0] > 11 AND NOT str1[0] = 2 DO DUMP -2 TO -1 RETENTION 100\n");
  const auto& s = stmt(qs, "str1");
  REQUIRE(s.rules.size() == 3);
  CHECK(ut::str(s.rules[0].condition) == "PUSH_ID2(str1[0]) PUSH_VAL(15) CMP_LT");
  CHECK(s.rules[0].dumpFrom == -5);
  CHECK(s.rules[0].dumpTo == 5);
  CHECK(ut::str(s.rules[1].condition) ==
        "PUSH_ID2(str1[0]) PUSH_VAL(13) CMP_EQUAL PUSH_ID2(str1[0]) PUSH_VAL(11) CMP_EQUAL OR");
  CHECK(s.rules[1].action == ir::RuleAction::SYSTEM);
  CHECK(s.rules[1].command == "echo x");
  CHECK(s.rules[2].dumpFrom == -2);
  CHECK(s.rules[2].dumpTo == -1);
  CHECK(s.rules[2].dumpRetention == 100);
  CHECK(errorOf<ir::CompileError>(
            "DECLARE a INTEGER STREAM s, 1 FILE 'x'\nRULE r ON nowhere WHEN s[0] > 1 DO DUMP 0 TO 1\n")
            .find("unknown stream") != std::string::npos);
}

TEST_CASE("syntax errors", "[grammar][errors]") {
  CHECK(syntaxError("SELECT STREAM t FROM s\n"));
  CHECK(syntaxError("SELECT s[0] STREAM t\n"));
  CHECK(syntaxError("DECLARE a INTEGER STREAM min, 1 FILE 'x'\n"));
  CHECK(syntaxError("DECLARE a INTEGER STREAM s, 1 FILE 'memory'\n"));
  CHECK(syntaxError("SELECT * STREAM t FROM a+\n"));
}

TEST_CASE("FROM grammar: a shift or difference applies to a term, not to a sum", "[grammar][from]") {
  CHECK(fromOf("a>1+b") == "PUSH_STREAM(a) STREAM_TIMEMOVE(1) PUSH_STREAM(b) STREAM_ADD");
  CHECK(fromOf("a-1/2+b") == "PUSH_STREAM(a) STREAM_SUBTRACT(1/2) PUSH_STREAM(b) STREAM_ADD");
  CHECK(fromOf("a&1/2#b") == "PUSH_STREAM(a) PUSH_VAL(1/2) STREAM_DEHASH_DIV PUSH_STREAM(b) STREAM_HASH");
  CHECK(fromOf("(a+b)>1") == "PUSH_STREAM(a) PUSH_STREAM(b) STREAM_ADD STREAM_TIMEMOVE(1)");
  CHECK(fromOf("a+b>1") == "PUSH_STREAM(a) PUSH_STREAM(b) STREAM_TIMEMOVE(1) STREAM_ADD");  // as the book: + is loosest
  CHECK(fromOf("a>1>2") == "PUSH_STREAM(a) STREAM_TIMEMOVE(1) STREAM_TIMEMOVE(2)");
  // A negative step is a plan error (exit 71), as a zero or too large one is.
  CHECK_THROWS_WITH(parse("SELECT * STREAM t FROM a@(-1,2)\n"), "AGSE step must not be negative, got -1");
}

TEST_CASE("FROM grammar: postfix forms chain, reducers are primaries", "[grammar][from]") {
  CHECK(fromOf("a@(1,4)&2") == "PUSH_STREAM(a) STREAM_AGSE(1,4) PUSH_VAL(2/1) STREAM_DEHASH_DIV");
  CHECK(fromOf("a#b&2") == "PUSH_STREAM(a) PUSH_STREAM(b) PUSH_VAL(2/1) STREAM_DEHASH_DIV STREAM_HASH");
  CHECK(fromOf("MIN(a)") == "PUSH_STREAM(a) STREAM_MIN");
  CHECK(fromOf("min(a)") == "PUSH_STREAM(a) STREAM_MIN");
  CHECK(fromOf("SUMC(a@(1,5))") == "PUSH_STREAM(a) STREAM_AGSE(1,5) STREAM_SUM");
  CHECK(fromOf("MIN(a)#MAX(b)") == "PUSH_STREAM(a) STREAM_MIN PUSH_STREAM(b) STREAM_MAX STREAM_HASH");
  CHECK(fromOf("a.max>1") == "PUSH_STREAM(a) STREAM_MAX STREAM_TIMEMOVE(1)");
  CHECK(fromOf("(a+b).avg") == "PUSH_STREAM(a) PUSH_STREAM(b) STREAM_ADD STREAM_AVG");
}

TEST_CASE("an ad hoc statement's kind comes from its first word", "[grammar][adhoc]") {
  using rql::StatementKind;
  CHECK(rql::statementKind("SELECT * STREAM t FROM s") == StatementKind::SELECT);
  CHECK(rql::statementKind("  select * stream t from s") == StatementKind::SELECT);
  CHECK(rql::statementKind("# a comment\nSELECT * STREAM t FROM s") == StatementKind::SELECT);
  CHECK(rql::statementKind("DECLARE a INTEGER STREAM s, 1 FILE 'x'") == StatementKind::DECLARE);
  CHECK(rql::statementKind("RULE r ON s WHEN s[0] > 1 DO DUMP 1 TO 2") == StatementKind::RULE);
  CHECK(rql::statementKind("STORAGE 'out'") == StatementKind::DIRECTIVE);
  CHECK(rql::statementKind("SUBSTRAT 'x'") == StatementKind::DIRECTIVE);
  CHECK(rql::statementKind("ROTATION 'n'") == StatementKind::DIRECTIVE);
  CHECK(rql::statementKind("SELECTED * FROM s") == StatementKind::OTHER);
  CHECK(rql::statementKind("") == StatementKind::OTHER);
  CHECK(rql::statementKind("$ what") == StatementKind::OTHER);
}
