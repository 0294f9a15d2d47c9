// computeLogicalOrigin and computeStartupLatency (compiler.md §5.12, §5.13, §8, §13).
#include "../unit_helpers.hpp"

namespace {

std::string decl(const std::string& name, const std::string& interval, const std::string& fields = "x INTEGER") {
  return "DECLARE " + fields + " STREAM " + name + ", " + interval + " FILE '" + name + ".dat'\n";
}

// Tail of `SELECT * STREAM h FROM a#b` with the given intervals.
int hashTail(const std::string& da, const std::string& db) {
  ir::Plan p = testing::compileText(decl("a", da) + decl("b", db) + "SELECT * STREAM h FROM a#b\n");
  return p.get("h").tail;
}

struct TO {
  int tail, origin;
  bool operator==(const TO& o) const { return tail == o.tail && origin == o.origin; }
};

TO of(const ir::Plan& p, const std::string& id) {
  REQUIRE(p.find(id) != nullptr);
  return {p.get(id).tail, p.get(id).origin};
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<TO> {
  static std::string convert(const TO& t) {
    return "tail=" + std::to_string(t.tail) + " origin=" + std::to_string(t.origin);
  }
};
}  // namespace Catch

TEST_CASE("hash tails: exact phase scan (compiler.md §5.13 reference checks)", "[tails][hash]") {
  CHECK(hashTail("1/10", "1/5") == 2);   // a#b
  CHECK(hashTail("1/5", "1/10") == 1);   // b#a
  CHECK(hashTail("1/10", "1/10") == 1);  // equal intervals
  CHECK(hashTail("1", "1") == 1);
  CHECK(hashTail("3/100", "1/20") == 3);
  CHECK(hashTail("3/100", "1/50") == 2);
  CHECK(hashTail("7/100", "11/100") == 3);
  CHECK(hashTail("4/25", "147/1000") == 2);
}

TEST_CASE("de-interleave tails: s12&3/2 -> 1, s12&1 -> 0", "[tails][dehash]") {
  ir::Plan p = testing::compileText(decl("s12", "1/2") +
                                    "SELECT * STREAM d1 FROM s12&3/2\n"
                                    "SELECT * STREAM d2 FROM s12&1\n");
  CHECK(p.get("d1").interval == ir::Rational(3, 4));
  CHECK(p.get("d1").tail == 1);
  CHECK(p.get("d2").tail == 0);
}

TEST_CASE("AGSE over a shifted three-field source: tail 2", "[tails][agse]") {
  ir::Plan p = testing::compileText(decl("wide", "1", "x INTEGER, y INTEGER, z INTEGER") +
                                    "SELECT * STREAM wide_shifted FROM wide>1\n"
                                    "SELECT * STREAM w FROM wide_shifted@(1,2)\n");
  CHECK(of(p, "wide_shifted") == TO{0, 1});
  // tail ⌈(1+0)·3/1⌉−1 = 2; origin ⌈(1·3 + 2 − 1)/1⌉ = 4
  CHECK(of(p, "w") == TO{2, 4});
}

TEST_CASE("AGSE origins: ⌈(O1·F + |w| − 1)/k⌉ (Pattern6)", "[origins][agse]") {
  ir::Plan p = testing::compileText(decl("core", "1", "b BYTE") +
                                    "SELECT * STREAM test_1 FROM core@(1,10)\n"
                                    "SELECT * STREAM test_2 FROM core@(1,-10)\n"
                                    "SELECT * STREAM test_3 FROM core@(3,3)\n"
                                    "SELECT * STREAM test_4 FROM (core>2)@(1,10)\n");
  CHECK(of(p, "test_1") == TO{0, 9});
  CHECK(of(p, "test_2") == TO{0, 9});
  CHECK(of(p, "test_3") == TO{0, 1});
  CHECK(of(p, "test_4") == TO{0, 11});
}

TEST_CASE("TIMEMOVE moves the origin and reduces the tail", "[origins][tails][timemove]") {
  ir::Plan p = testing::compileText(decl("core0", "0.1") + decl("core1", "0.2") +
                                    "SELECT * STREAM s2 FROM core0>2\n"
                                    "SELECT * STREAM s5 FROM (core0>2)>3\n"
                                    "SELECT * STREAM sum FROM core0+core1\n"
                                    "SELECT * STREAM late FROM sum>1\n"
                                    "SELECT * STREAM hs FROM (core0#core1)>1\n"
                                    "SELECT * STREAM hs3 FROM (core0#core1)>3\n");
  CHECK(of(p, "s2") == TO{0, 2});
  CHECK(of(p, "s5") == TO{0, 5});
  CHECK(of(p, "sum") == TO{1, 0});
  CHECK(of(p, "late") == TO{0, 1});
  CHECK(of(p, "STREAM_HASH_core0_core1") == TO{2, 0});
  CHECK(of(p, "hs") == TO{1, 1});
  CHECK(of(p, "hs3") == TO{0, 3});
}

TEST_CASE("ADD tails and origins", "[origins][tails][add]") {
  ir::Plan p = testing::compileText(decl("A", "1/2") + decl("B", "1") + decl("core0", "0.1") + decl("core1", "0.2") +
                                    "SELECT str1[0] STREAM str1 FROM core0+core1\n"
                                    "SELECT * STREAM S FROM A+B\n"
                                    "SELECT * STREAM o1 FROM (A>3)+B\n"
                                    "SELECT * STREAM o2 FROM A+(B>3)\n");
  CHECK(of(p, "str1") == TO{1, 0});  // ⌈(1+0)·(1/5)/(1/10)⌉−1 = 1
  CHECK(of(p, "S") == TO{1, 0});     // from B: ⌈(1+0)·1/(1/2)⌉−1 = 1
  CHECK(of(p, "o1") == TO{1, 3});
  CHECK(of(p, "o2") == TO{1, 6});
}

TEST_CASE("SUBTRACT tails and origins", "[origins][tails][subtract]") {
  ir::Plan p = testing::compileText(decl("A", "1/2") + decl("B", "1") + decl("C", "1/3") + decl("core1", "0.5") +
                                    "SELECT * STREAM S FROM A+B\n"
                                    "SELECT * STREAM T FROM S-1/2\n"
                                    "SELECT * STREAM T2 FROM S-2\n"
                                    "SELECT * STREAM X FROM C+B\n"
                                    "SELECT * STREAM Y FROM X-1/2\n"
                                    "SELECT * STREAM U FROM (A>3)-1\n"
                                    "SELECT * STREAM str2 FROM core1-1/2\n");
  CHECK(of(p, "str2") == TO{0, 0});  // Pattern1
  CHECK(of(p, "S") == TO{1, 0});
  CHECK(of(p, "T") == TO{1, 0});   // ρ = 1: ⌈(0 + 1 + 1)/1⌉ − 1
  CHECK(of(p, "T2") == TO{0, 0});  // ρ = 4: ⌈(0 + 1 + 1)/4⌉ − 1
  CHECK(of(p, "X") == TO{2, 0});
  CHECK(of(p, "Y") == TO{2, 0});  // ρ = 3/2: ⌈(1/2 + 2 + 1)/(3/2)⌉ − 1 = ⌈7/3⌉ − 1
  CHECK(of(p, "U") == TO{0, 2});  // first n with ⌈n·1/(1/2)⌉ ≥ 3
  CHECK(p.get("T2").interval == ir::Rational(2, 1));
}

TEST_CASE("de-interleave origins", "[origins][dehash]") {
  ir::Plan p = testing::compileText(decl("half", "1/2") +
                                    "SELECT * STREAM dv FROM (half>3)&1\n"
                                    "SELECT * STREAM md FROM (half>3)%1\n");
  CHECK(of(p, "dv") == TO{0, 1});  // first i with i + ⌈(i+1)·1/1⌉ ≥ 3
  CHECK(of(p, "md") == TO{0, 2});  // first n with n + ⌊n·1/1⌋ ≥ 3
}

TEST_CASE("interleave origins and tails through shifts (subquery, compiler.md §13.6)", "[origins][tails][hash]") {
  ir::Plan p = testing::compileText(decl("core1", "0.1", "a INTEGER") + decl("core2", "0.1", "b INTEGER") +
                                    "SELECT * STREAM str1 FROM (core1#core2)>1\n"
                                    "SELECT * STREAM str2 FROM (core1>1)#core2\n");
  CHECK(of(p, "STREAM_HASH_core1_core2") == TO{1, 0});
  CHECK(of(p, "str1") == TO{0, 1});
  CHECK(of(p, "STREAM_TIMEMOVE_1_core1") == TO{0, 1});
  CHECK(of(p, "str2") == TO{1, 2});
}

TEST_CASE("reducers keep the source's tail and origin", "[origins][tails][reducer]") {
  ir::Plan p = testing::compileText(decl("core0", "0.1") + decl("core1", "0.2") +
                                    "SELECT * STREAM str0 FROM core0+core1\n"
                                    "SELECT str1[0] STREAM str1 FROM str0.max\n"
                                    "SELECT * STREAM sh FROM core0>4\n"
                                    "SELECT * STREAM r FROM sh.sumc\n");
  CHECK(of(p, "str1") == TO{1, 0});
  CHECK(of(p, "r") == TO{0, 4});
}

TEST_CASE("the seed example: tail 2 of the interleave, tail 4 of the sum", "[tails][seed]") {
  ir::Plan p = testing::compileText(
      "DECLARE a BYTE, b INTEGER STREAM core0, 0.1 TEXTFILE 'sensor_a.txt'\n"
      "DECLARE c INTEGER, d FLOAT STREAM core1, 0.2 TEXTFILE 'sensor_b.txt'\n"
      "DECLARE e INTEGER STREAM core2, 0.3 TEXTFILE 'sensor_c.txt'\n"
      "SELECT merged[0] STREAM merged FROM (core0 # core1) + core2\n"
      "SELECT merged2[0] STREAM merged2 FROM (core0 # core1) > 2\n");
  CHECK(of(p, "STREAM_HASH_core0_core1") == TO{2, 0});
  CHECK(of(p, "merged") == TO{4, 0});
  CHECK(of(p, "merged2") == TO{0, 2});
}

TEST_CASE("dsp: tails come from the slow filter, origins from the window", "[origins][tails][seed]") {
  ir::Plan p = testing::compileText(
      "DECLARE coef INTEGER[25] STREAM filter, 1 FILE 'filterremez.txt'\n"
      "DECLARE data BYTE STREAM source, 0.02 FILE '/dev/urandom'\n"
      "SELECT * STREAM signalRow FROM source@(1,25)\n"
      "SELECT signalRow[_] * filter[_] STREAM accRow FROM signalRow+filter\n"
      "SELECT accRow[0] STREAM output FROM accRow.sumc\n"
      "SELECT output[0]/25/1000,source[0] STREAM outputAll FROM output+source\n");
  CHECK(of(p, "signalRow") == TO{0, 24});
  CHECK(of(p, "accRow") == TO{49, 24});
  CHECK(of(p, "output") == TO{49, 24});
  CHECK(of(p, "outputAll") == TO{49, 24});
}

TEST_CASE("declarations and directives have no tail and no origin", "[origins][tails]") {
  ir::Plan p = testing::compileText("STORAGE 'temp'\n" + decl("core0", "0.1") + "SELECT * STREAM s FROM core0>2\n");
  CHECK(of(p, ":STORAGE") == TO{0, 0});
  CHECK(of(p, "core0") == TO{0, 0});
}

TEST_CASE("the passes directly: origins and tails of a hand-built plan", "[origins][tails]") {
  ir::Plan p = testing::compileText(decl("a", "1/10") + decl("b", "1/5") + "SELECT * STREAM h FROM a#b\n");
  p.get("h").tail = 99;
  p.get("h").origin = 99;
  ir::passes::computeLogicalOrigins(p);
  ir::passes::computeStartupLatencies(p);
  CHECK(of(p, "h") == TO{2, 0});
}

namespace {

// The phase scan of compiler.md §5.13, written out independently (sources with tail 0).
int64_t specHashTail(ir::Rational dA, ir::Rational dB) {
  using R = ir::Rational;
  R dC = dA * dB / (dA + dB);
  R ratio = dA / dB;
  int64_t period = ratio.num + ratio.den;
  R z = dB / (dA + dB);
  int64_t w = 0;
  for (int64_t i = 0; i < period; ++i) {
    int64_t lo = ir::floorOf(z * R(i)), hi = ir::floorOf(z * R(i + 1));
    bool readsB = lo == hi;
    int64_t j = readsB ? i - lo : lo;
    R ds = readsB ? dB : dA;
    w = std::max(w, ir::ceilOf(R(j + 1) * ds / dC) - 1 - i);
  }
  return w;
}

}  // namespace

TEST_CASE("hash tails agree with the phase scan for many interval pairs", "[tails][hash]") {
  const std::vector<std::string> ds{"1/10", "1/5",   "3/10",   "1/3",  "1/2",      "1", "3/100",
                                    "1/20", "7/100", "11/100", "4/25", "147/1000", "2", "5/7"};
  auto parseR = [](const std::string& s) {
    auto slash = s.find('/');
    if (slash == std::string::npos) return ir::Rational(std::stoll(s));
    return ir::Rational(std::stoll(s.substr(0, slash)), std::stoll(s.substr(slash + 1)));
  };
  for (auto& a : ds)
    for (auto& b : ds) {
      INFO(a << " # " << b);
      CHECK(hashTail(a, b) == specHashTail(parseR(a), parseR(b)));
    }
}

TEST_CASE("hash tails above a period of 100000 use the closed form", "[tails][hash]") {
  // ΔA/ΔB = 3/100000: period 100003; ΔB/ΔA = 100000/3, own = ⌊(3 + 100000 − 2)/3⌋ + 1.
  CHECK(hashTail("1/100000", "1/3") == 33334);
}

TEST_CASE("AGSE seed usage patterns: intervals, origins and tails", "[origins][tails][agse][seed]") {
  ir::Plan p = testing::compileText(decl("A", "1", "x INTEGER, y INTEGER") +
                                    "SELECT * STREAM s1 FROM A@(1,1)\n"
                                    "SELECT * STREAM s2 FROM A@(4,4)\n"
                                    "SELECT * STREAM s3 FROM A@(1,5)\n"
                                    "SELECT * STREAM s4 FROM A@(5,1)\n"
                                    "SELECT * STREAM s5 FROM (s1>1)@(2,-2)\n");
  // serialization: 2 fields -> 1 field, interval ÷ 2
  CHECK(p.get("s1").interval == ir::Rational(1, 2));
  CHECK(p.get("s1").schema.size() == 1);
  CHECK(of(p, "s1") == TO{1, 0});
  // tumbling window of 4 elements
  CHECK(p.get("s2").interval == ir::Rational(2));
  CHECK(p.get("s2").schema.size() == 4);
  CHECK(of(p, "s2") == TO{0, 1});
  // sliding window of 5 elements
  CHECK(p.get("s3").interval == ir::Rational(1, 2));
  CHECK(of(p, "s3") == TO{1, 4});
  // sampling every fifth element
  CHECK(p.get("s4").interval == ir::Rational(5, 2));
  CHECK(of(p, "s4") == TO{0, 0});
  // deserialization restores the source interval
  CHECK(p.get("s5").interval == ir::Rational(1));
  CHECK(p.get("s5").schema.size() == 2);
  CHECK(of(p, "STREAM_TIMEMOVE_1_s1") == TO{0, 1});
  CHECK(of(p, "s5") == TO{0, 1});
}

TEST_CASE("AGSE over AGSE: the inner window's flat width drives the outer origin", "[origins][tails][agse]") {
  ir::Plan p = testing::compileText(decl("core", "1", "b BYTE") + "SELECT * STREAM n FROM (core@(1,3))@(1,2)\n");
  CHECK(of(p, "STREAM_AGSE_1_3_core") == TO{0, 2});
  CHECK(p.get("n").interval == ir::Rational(1, 3));
  CHECK(of(p, "n") == TO{2, 7});  // origin ⌈(2·3 + 2 − 1)/1⌉, tail ⌈(1+0)·3/1⌉ − 1
}
