// inferFieldShapes (adopted BOOK type inference; notes/typeinfer.md; compiler.md §7;
// seeds/substrates.txt listings).
#include "../unit_helpers.hpp"

using ut::shape;

namespace {

const char* kCores =
    "DECLARE a BYTE, b INTEGER STREAM core0, 0.1 TEXTFILE 'sensor_a.txt'\n"
    "DECLARE c INTEGER, d FLOAT STREAM core1, 0.2 TEXTFILE 'sensor_b.txt'\n"
    "DECLARE e INTEGER STREAM core2, 0.3 TEXTFILE 'sensor_c.txt'\n";

// s[0] BYTE, s[1] INTEGER, s[2] FLOAT, s[3] DOUBLE, s[4] UINT, s[5] STRING[6]
const char* kAll = "DECLARE b BYTE, i INTEGER, f FLOAT, d DOUBLE, u UINT, t STRING[6] STREAM s, 1 FILE 's.dat'\n";

std::string shapeOf(const std::string& e) {
  ir::Plan p = testing::compileText(std::string(kAll) + "SELECT " + e + " STREAM o FROM s\n");
  return shape(p, "o", 0);
}

}  // namespace

TEST_CASE("pure reads keep the source shape", "[shapes]") {
  CHECK(shapeOf("s[0]") == "BYTE 1x1");
  CHECK(shapeOf("s[1]") == "INTEGER 4x1");
  CHECK(shapeOf("s[2]") == "FLOAT 4x1");
  CHECK(shapeOf("s[3]") == "DOUBLE 8x1");
  CHECK(shapeOf("s[4]") == "UINT 4x1");
  CHECK(shapeOf("s[5]") == "STRING 1x6");
  CHECK(shapeOf("s.f") == "FLOAT 4x1");
  CHECK(shapeOf("d") == "DOUBLE 8x1");
  CHECK(shapeOf("o[0]") == "BYTE 1x1");
}

TEST_CASE("BYTE op BYTE gives INTEGER; otherwise the higher type", "[shapes][arith]") {
  CHECK(shapeOf("s[0]+s[0]") == "INTEGER 4x1");
  CHECK(shapeOf("s[0]*s[0]") == "INTEGER 4x1");
  CHECK(shapeOf("s[0]-s[0]") == "INTEGER 4x1");
  CHECK(shapeOf("s[0]/s[0]") == "INTEGER 4x1");
  CHECK(shapeOf("s[0]+1") == "INTEGER 4x1");
  CHECK(shapeOf("s[0]*s[2]") == "FLOAT 4x1");
  CHECK(shapeOf("s[1]+s[4]") == "UINT 4x1");
  CHECK(shapeOf("s[2]+s[3]") == "DOUBLE 8x1");
  CHECK(shapeOf("s[1]*2.5") == "FLOAT 4x1");
  CHECK(shapeOf("-s[0]") == "BYTE 1x1");  // NEGATE keeps the argument's shape
}

TEST_CASE("function result types", "[shapes][functions]") {
  CHECK(shapeOf("to_float(s[1])") == "FLOAT 4x1");
  CHECK(shapeOf("to_double(s[0])") == "DOUBLE 8x1");
  CHECK(shapeOf("to_integer(s[2])") == "INTEGER 4x1");
  CHECK(shapeOf("to_float('2.5')*2") == "FLOAT 4x1");
  CHECK(shapeOf("Sqrt(s[2])") == "FLOAT 4x1");
  CHECK(shapeOf("Abs(s[0])") == "BYTE 1x1");
  CHECK(shapeOf("sin(s[1])") == "DOUBLE 8x1");
  CHECK(shapeOf("isnull(s[3])") == "INTEGER 4x1");
  CHECK(shapeOf("null2zero(s[3])") == "DOUBLE 8x1");
}

TEST_CASE("to_string width: declared N, or 32", "[shapes][strings]") {
  CHECK(shapeOf("to_string(s[1] : 8)") == "STRING 1x8");
  CHECK(shapeOf("to_string(s[1])") == "STRING 1x32");
  CHECK(shapeOf("to_string(42 : 16)") == "STRING 1x16");  // before constant folding
}

TEST_CASE("string concatenation adds the widths of its string sides", "[shapes][strings]") {
  CHECK(shapeOf("to_string(s[1] : 8) + '_ok'") == "STRING 1x11");
  CHECK(shapeOf("'ab' + s[1]") == "STRING 1x2");
  CHECK(shapeOf("'ab' + 'cde'") == "STRING 1x5");
  CHECK(shapeOf("s[5] + 'xy'") == "STRING 1x8");
  CHECK(shapeOf("'abc'") == "STRING 1x3");
  CHECK(shapeOf("''") == "STRING 1x32");
}

TEST_CASE("reducers: RATIONAL over integral sources, FLOAT/DOUBLE kept", "[shapes][reducers]") {
  ir::Plan p = testing::compileText(
      "DECLARE i INTEGER, j INTEGER STREAM ints, 1 FILE 'i.dat'\n"
      "DECLARE x BYTE STREAM bytes, 1 FILE 'b.dat'\n"
      "DECLARE f FLOAT, g FLOAT STREAM floats, 1 FILE 'f.dat'\n"
      "DECLARE d DOUBLE STREAM doubles, 1 FILE 'd.dat'\n"
      "SELECT * STREAM r1 FROM ints.max\n"
      "SELECT r2[0] STREAM r2 FROM ints.sumc\n"
      "SELECT * STREAM r3 FROM bytes.avg\n"
      "SELECT * STREAM r4 FROM floats.min\n"
      "SELECT r5[0] STREAM r5 FROM floats.sumc\n"
      "SELECT * STREAM r6 FROM doubles.sumc\n"
      "SELECT to_double(r7[0]) STREAM r7 FROM ints.avg\n");
  CHECK(shape(p, "r1") == "RATIONAL 8x1");
  CHECK(p.get("r1").schema[0].name == "max");
  CHECK(shape(p, "r2") == "RATIONAL 8x1");
  CHECK(shape(p, "r3") == "RATIONAL 8x1");
  CHECK(p.get("r3").schema[0].name == "avg");
  CHECK(shape(p, "r4") == "FLOAT 4x1");
  CHECK(shape(p, "r5") == "FLOAT 4x1");
  CHECK(shape(p, "r6") == "DOUBLE 8x1");
  CHECK(shape(p, "r7") == "DOUBLE 8x1");
}

TEST_CASE("irrational functions over a RATIONAL reducer result are rejected", "[shapes][reducers]") {
  std::string err = ut::compileError<ir::CompileError>(
      "DECLARE i INTEGER STREAM ints, 1 FILE 'i.dat'\n"
      "SELECT Sqrt(r[0]) STREAM r FROM ints.avg\n");
  CHECK(err.find("Stream 'r': 'Sqrt' over a RATIONAL value is not implemented") != std::string::npos);
  CHECK(err.find("Write Sqrt(to_double(x))") != std::string::npos);
  CHECK(ut::compileError("DECLARE i INTEGER STREAM ints, 1 FILE 'i.dat'\n"
                         "SELECT Sqrt(to_double(r[0])) STREAM r FROM ints.avg\n")
            .empty());
}

TEST_CASE("SELECT * over a BYTE source stays BYTE", "[shapes][star]") {
  ir::Plan p = testing::compileText(
      "DECLARE a BYTE, b BYTE STREAM coreAB, 1 FILE '/dev/urandom'\n"
      "DECLARE v INTEGER[3], t STRING[4] STREAM arr, 1 FILE 'a.dat'\n"
      "SELECT * STREAM all FROM coreAB\n"
      "SELECT * STREAM flat FROM arr\n");
  REQUIRE(p.get("all").schema.size() == 2);
  CHECK(shape(p, "all", 0) == "BYTE 1x1");
  CHECK(shape(p, "all", 1) == "BYTE 1x1");
  // One field per flat element; T[N] gives N fields of T, STRING[N] stays one field.
  REQUIRE(p.get("flat").schema.size() == 4);
  CHECK(shape(p, "flat", 0) == "INTEGER 4x1");
  CHECK(shape(p, "flat", 2) == "INTEGER 4x1");
  CHECK(shape(p, "flat", 3) == "STRING 1x4");
}

TEST_CASE("interleave promotion per position (seed): a BYTE # c INTEGER -> INTEGER, b INTEGER # d FLOAT -> FLOAT",
          "[shapes][hash][seed]") {
  ir::Plan p =
      testing::compileText(std::string(kCores) + "SELECT merged[0] STREAM merged FROM (core0 # core1) + core2\n");
  const ir::Query& h = p.get("STREAM_HASH_core0_core1");
  REQUIRE(h.schema.size() == 2);
  CHECK(h.schema[0].name == "a");
  CHECK(shape(h.schema[0]) == "INTEGER 4x1");
  CHECK(h.schema[1].name == "b");
  CHECK(shape(h.schema[1]) == "FLOAT 4x1");
  CHECK(shape(p, "merged") == "INTEGER 4x1");
  // The promotion is symmetric in operand order; names come from the left operand.
  ir::Plan q = testing::compileText(std::string(kCores) + "SELECT * STREAM rev FROM core1 # core0\n");
  CHECK(q.get("rev").schema[0].name == "c");
  CHECK(shape(q, "rev", 0) == "INTEGER 4x1");
  CHECK(shape(q, "rev", 1) == "FLOAT 4x1");
  // An explicit read of the interleave sees the promoted slot.
  ir::Plan r = testing::compileText(std::string(kCores) + "SELECT h[1] STREAM h FROM core0#core1\n");
  CHECK(shape(r, "h") == "FLOAT 4x1");
  // BYTE # BYTE stays BYTE.
  ir::Plan b = testing::compileText(
      "DECLARE a BYTE STREAM x, 1 FILE 'x'\nDECLARE b BYTE STREAM y, 1 FILE 'y'\nSELECT * STREAM z FROM x#y\n");
  CHECK(shape(b, "z") == "BYTE 1x1");
}

TEST_CASE("interleave of strings keeps the larger width", "[shapes][hash]") {
  ir::Plan p = testing::compileText(
      "DECLARE a STRING[3] STREAM x, 1 FILE 'x'\nDECLARE b STRING[7] STREAM y, 1 FILE 'y'\n"
      "SELECT * STREAM z FROM x#y\n");
  CHECK(shape(p, "z") == "STRING 1x7");
}

TEST_CASE("reads through a shift keep the source shape (seed reduction example)", "[shapes][seed]") {
  ir::Plan p = testing::compileText(
      "DECLARE a BYTE, b INTEGER   STREAM core0, 0.1 TEXTFILE 'sensor_a.txt'\n"
      "DECLARE c INTEGER, d FLOAT  STREAM core1, 0.2 TEXTFILE 'sensor_b.txt'\n"
      "SELECT merged[0]  STREAM merged  FROM (core0 > 2) + core1\n"
      "SELECT shifted[0] STREAM shifted FROM core0 > 2\n");
  CHECK(shape(p, "merged") == "BYTE 1x1");
  CHECK(shape(p, "shifted") == "BYTE 1x1");
  CHECK(shape(p, "STREAM_TIMEMOVE_2_core0", 0) == "BYTE 1x1");
  CHECK(shape(p, "STREAM_TIMEMOVE_2_core0", 1) == "INTEGER 4x1");
}

TEST_CASE("sums: fields named <source>_<k> with the source slot shapes", "[shapes][add]") {
  ir::Plan p = testing::compileText(std::string(kCores) +
                                    "SELECT * STREAM s FROM core0+core1\n"
                                    "SELECT core0[_]*core1[_] STREAM m FROM core0+core1\n");
  const ir::Query& s = p.get("s");
  REQUIRE(s.schema.size() == 4);
  CHECK(s.schema[0].name == "core0_0");
  CHECK(s.schema[3].name == "core1_3");
  CHECK(shape(s.schema[0]) == "BYTE 1x1");
  CHECK(shape(s.schema[3]) == "FLOAT 4x1");
  // core0[_]*core1[_] over (BYTE,INTEGER)+(INTEGER,FLOAT) -> INTEGER, FLOAT
  CHECK(shape(p, "m", 0) == "INTEGER 4x1");
  CHECK(shape(p, "m", 1) == "FLOAT 4x1");
}

TEST_CASE("AGSE fields take the widest type of the source", "[shapes][agse]") {
  ir::Plan p = testing::compileText(std::string(kCores) +
                                    "SELECT * STREAM w FROM core1@(1,3)\n"
                                    "SELECT w2[0] STREAM w2 FROM core1@(1,2)\n");
  REQUIRE(p.get("w").schema.size() == 3);
  CHECK(shape(p, "w", 0) == "FLOAT 4x1");
  CHECK(shape(p, "w", 2) == "FLOAT 4x1");
  CHECK(shape(p, "w2") == "FLOAT 4x1");
}

TEST_CASE("Pattern2 and Pattern7 field types under inference", "[shapes]") {
  ir::Plan p2 = testing::compileText(
      "declare a BYTE stream core0, 1 file '/dev/urandom'\n"
      "declare c BYTE stream core1, 0.5 file '/dev/urandom'\n"
      "select core0[0] stream str0 from core0\n"
      "select core1[0]+1 stream str1 from core1\n"
      "select core1[0]/2+1,a stream str2 from core1+core0\n");
  CHECK(shape(p2, "str0") == "BYTE 1x1");
  CHECK(shape(p2, "str1") == "INTEGER 4x1");
  CHECK(shape(p2, "str2", 0) == "INTEGER 4x1");
  CHECK(shape(p2, "str2", 1) == "BYTE 1x1");
  ir::Plan p7 = testing::compileText(
      "DECLARE a BYTE, b BYTE STREAM coreAB, 1 FILE '/dev/urandom'\n"
      "SELECT str2[0]+10,str2[1]+1 STREAM str2 FROM coreAB\n");
  CHECK(shape(p7, "str2", 0) == "INTEGER 4x1");
  CHECK(shape(p7, "str2", 1) == "INTEGER 4x1");
}

TEST_CASE("declared schemas are never changed", "[shapes]") {
  ir::Plan p = testing::compileText(std::string(kCores) + "SELECT core0[0]*2.5 STREAM m FROM core0\n");
  CHECK(shape(p, "core0", 0) == "BYTE 1x1");
  CHECK(shape(p, "core1", 1) == "FLOAT 4x1");
  CHECK(shape(p, "m") == "FLOAT 4x1");
}

TEST_CASE("shapes settle regardless of statement order (fixed point)", "[shapes]") {
  ir::Plan p = testing::compileText(
      "SELECT c[0]+c[0] STREAM d FROM c\n"
      "SELECT b[0] STREAM c FROM b\n"
      "SELECT a[0] STREAM b FROM a>1\n"
      "DECLARE x BYTE STREAM a, 1 FILE 'a'\n");
  CHECK(shape(p, "b") == "BYTE 1x1");
  CHECK(shape(p, "c") == "BYTE 1x1");
  CHECK(shape(p, "d") == "INTEGER 4x1");
}

TEST_CASE("NOT and math functions keep the argument type", "[shapes]") {
  CHECK(shapeOf("NOT s[0]") == "BYTE 1x1");
  CHECK(shapeOf("NOT s[2]") == "FLOAT 4x1");
  CHECK(shapeOf("tan(s[1])") == "INTEGER 4x1");
  CHECK(shapeOf("Floor(s[3])") == "DOUBLE 8x1");
}

TEST_CASE("SELECT * names use one counter across the whole pass (Pattern3)", "[shapes][star]") {
  ir::Plan p = testing::compileText(
      "declare a INTEGER, b INTEGER stream datasrc,0.5 file 'datafile2.dat'\n"
      "select * stream out1 from datasrc file 'out1_file.dat' retention 20 5\n"
      "select * stream out3 from datasrc\n");
  REQUIRE(p.get("out1").schema.size() == 2);
  REQUIRE(p.get("out3").schema.size() == 2);
  std::set<std::string> names{p.get("out1").schema[0].name, p.get("out1").schema[1].name, p.get("out3").schema[0].name,
                              p.get("out3").schema[1].name};
  CHECK(names == std::set<std::string>{"datasrc_0", "datasrc_1", "datasrc_2", "datasrc_3"});
  CHECK(p.get("out1").schema[0].name == "datasrc_0");
}
