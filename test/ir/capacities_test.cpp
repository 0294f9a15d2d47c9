// computeRequiredCapacities and applyCapacitiesToStreams (compiler.md §5.14, §5.16).
#include "../unit_helpers.hpp"

namespace {

std::string decl(const std::string& name, const std::string& interval, const std::string& fields = "x INTEGER") {
  return "DECLARE " + fields + " STREAM " + name + ", " + interval + " FILE '" + name + ".dat'\n";
}

int cap(const ir::Plan& p, const std::string& id) {
  auto it = p.maxCapacity.find(id);
  REQUIRE(it != p.maxCapacity.end());
  return it->second;
}

}  // namespace

TEST_CASE("capacity examples of §5.14: wide_shifted 2, subsrc 3, mid 3", "[capacities]") {
  SECTION("AGSE over a shifted three-field source (computes_startup_latency)") {
    ir::Plan p = testing::compileText(decl("wide", "1", "x INTEGER, y INTEGER, z INTEGER") +
                                      "SELECT * STREAM wide_shifted FROM wide>1\n"
                                      "SELECT * STREAM w FROM wide_shifted@(1,2)\n");
    CHECK(cap(p, "wide_shifted") == 2);
    CHECK(cap(p, "wide") == 4);  // TIMEMOVE over a declaration: 0 − 0 + 1 + 1 + 2
  }
  SECTION("SUBTRACT over a declaration at the same interval (computes_startup_latency)") {
    ir::Plan p = testing::compileText(decl("subsrc", "1/2") + "SELECT * STREAM sub FROM subsrc-1/2\n");
    CHECK(cap(p, "subsrc") == 3);  // max(⌊0·1⌋ + 2, ⌊1·1⌋ + 2)
  }
  SECTION("AGSE window over a computed source (agse_capacity_covers_whole_window_over_computed_source)") {
    ir::Plan p = testing::compileText(decl("src", "1") +
                                      "SELECT src[0]*2 STREAM mid FROM src\n"
                                      "SELECT * STREAM win FROM mid@(1,3)\n");
    CHECK(cap(p, "mid") == 3);  // the whole window of 3 records: newest 2 − oldest 0, + 1
  }
}

TEST_CASE("TIMEMOVE demand: Wq − Ws + N + 1 (+2 over a declaration)", "[capacities]") {
  ir::Plan p = testing::compileText(decl("core0", "0.1") + decl("core1", "0.2") +
                                    "SELECT * STREAM s2 FROM core0>2\n"
                                    "SELECT * STREAM sum FROM core0+core1\n"
                                    "SELECT * STREAM late FROM sum>3\n");
  CHECK(cap(p, "core0") == 5);
  CHECK(cap(p, "sum") == 3);  // 0 − 1 + 3 + 1
}

TEST_CASE("ADD demand: ⌈(1+Wq)·Δ/Δs⌉ − Ws (+2 over a declaration) (simple)", "[capacities]") {
  ir::Plan p =
      testing::compileText("STORAGE 'temp'\n" + decl("core0", "0.1", "a INTEGER") + decl("core1", "0.2", "b INTEGER") +
                           "SELECT str1[0]*10,str1[1]*10,str1[1]*str1[0]+20 STREAM str1 FROM core0+core1\n");
  CHECK(cap(p, "core0") == 4);
  CHECK(cap(p, "core1") == 3);
  CHECK(cap(p, "str1") == 1);
}

TEST_CASE("SUBTRACT demand over declarations and computed streams", "[capacities]") {
  ir::Plan p = testing::compileText(decl("A", "1/2") + decl("B", "1") + decl("C", "1/3") + decl("D", "1/2") +
                                    "SELECT * STREAM T1 FROM A-1\n"    // ρ = 2: max(0 + 2, 2 + 2)
                                    "SELECT * STREAM T2 FROM C-1/2\n"  // ρ = 3/2: max(0 + 2, ⌊3/2⌋ + 2)
                                    "SELECT * STREAM X FROM D+B\n"
                                    "SELECT * STREAM Y FROM X-2\n");
  CHECK(cap(p, "A") == 4);
  CHECK(cap(p, "C") == 3);
  CHECK(cap(p, "X") == 1);  // ⌈Wq·ρ − Ws⌉ = ⌈0·4 − 1⌉, clamped to 1
}

TEST_CASE("HASH demand: max(4, ⌈Wq·Δ/Δs⌉ − Ws + 2) on both sources", "[capacities]") {
  ir::Plan p = testing::compileText(decl("a", "1/10") + decl("b", "1/5") + "SELECT * STREAM h FROM a#b\n");
  CHECK(cap(p, "a") == 4);
  CHECK(cap(p, "b") == 4);

  // A slow second operand behind a sum makes the interleave wait long: tail 18.
  ir::Plan q = testing::compileText(decl("A", "1/10", "x INTEGER") + decl("B", "1", "y INTEGER") +
                                    decl("C", "1/10", "u INTEGER, v INTEGER") +
                                    "SELECT * STREAM S FROM A+B\n"
                                    "SELECT * STREAM H FROM S#C\n");
  REQUIRE(q.get("S").tail == 9);
  REQUIRE(q.get("H").tail == 18);
  CHECK(cap(q, "C") == 11);  // ⌈18·(1/20)/(1/10)⌉ − 0 + 2
  CHECK(cap(q, "S") == 4);   // max(4, 9 − 9 + 2)
}

TEST_CASE("DEHASH demand: max(4, ⌈Wq·Δ/Δs⌉ − Ws + 2)", "[capacities]") {
  ir::Plan p = testing::compileText(decl("s12", "1/2") + decl("slow", "1/10") + "SELECT * STREAM d1 FROM s12&3/2\n");
  CHECK(cap(p, "s12") == 4);
}

TEST_CASE("AGSE demand over a declaration covers the window (Pattern6, dsp)", "[capacities][agse]") {
  ir::Plan p = testing::compileText(decl("core", "1", "b BYTE") + "SELECT * STREAM test_1 FROM core@(1,10)\n");
  CHECK(cap(p, "core") == 11);  // newest 9 − oldest 0, + 2

  ir::Plan d = testing::compileText(
      "DECLARE coef INTEGER[25] STREAM filter, 1 FILE 'filterremez.txt'\n"
      "DECLARE data BYTE STREAM source, 0.02 FILE '/dev/urandom'\n"
      "SELECT * STREAM signalRow FROM source@(1,25)\n"
      "SELECT signalRow[_] * filter[_] STREAM accRow FROM signalRow+filter\n"
      "SELECT accRow[0] STREAM output FROM accRow.sumc\n"
      "SELECT output[0]/25/1000,source[0] STREAM outputAll FROM output+source\n");
  CHECK(cap(d, "filter") == 3);      // ADD: ⌈50·(1/50)/1⌉ + 2
  CHECK(cap(d, "source") == 52);     // ADD from outputAll: ⌈50·1⌉ + 2 (beats the window's 26)
  CHECK(cap(d, "signalRow") == 50);  // ADD from accRow: ⌈50·1⌉ − 0
  CHECK(cap(d, "accRow") == 1);      // reducers demand nothing
}

TEST_CASE("a DUMP rule with negative history raises the first FROM operand (issue42_rule)", "[capacities][rules]") {
  ir::Plan p = testing::compileText("STORAGE 'temp'\n" + decl("core0", "0.1", "a INTEGER") +
                                    "SELECT str1[0] STREAM str1 FROM core0\n"
                                    "RULE testrule1 ON str1 WHEN str1[0] < 15 DO DUMP -5 TO 5\n"
                                    "RULE testrule2 ON str1 WHEN str1[0] > 11 DO DUMP -7 TO -1 RETENTION 100\n");
  CHECK(cap(p, "core0") == 7);
}

TEST_CASE("declarations, directives and unread streams need one record", "[capacities]") {
  ir::Plan p = testing::compileText("STORAGE 'temp'\n" + decl("core0", "0.1") + decl("idle", "1") +
                                    "SELECT * STREAM s FROM core0\n");
  CHECK(cap(p, "idle") == 1);
  CHECK(cap(p, "core0") == 1);
  CHECK(cap(p, "s") == 1);
}

TEST_CASE("applyCapacitiesToStreams: VOLATILE streams and substrates grow to the demand", "[capacities][apply]") {
  ir::Plan p = testing::compileText(decl("src", "1") + decl("other", "1") +
                                    "SELECT src[0]*2 STREAM mid FROM src VOLATILE\n"
                                    "SELECT * STREAM win FROM mid@(1,3)\n"
                                    "SELECT src[0] STREAM plain FROM src\n"
                                    "SELECT * STREAM w2 FROM plain@(1,3)\n"
                                    "SELECT * STREAM viaSub FROM (other>0)@(1,4)\n");
  CHECK(p.get("mid").policyProfile == "MEMORY");
  CHECK(p.get("mid").policyCapacity == 3);
  CHECK(p.get("plain").policyCapacity == 0);  // a default stream keeps "no ring"
  REQUIRE(testing::has(p, "STREAM_TIMEMOVE_0_other"));
  CHECK(p.get("STREAM_TIMEMOVE_0_other").policyCapacity == cap(p, "STREAM_TIMEMOVE_0_other"));
  CHECK(cap(p, "STREAM_TIMEMOVE_0_other") == 4);
}

TEST_CASE("history over the budget is refused at compile time, naming the stream", "[capacities][budget]") {
  // A record of 16384 INTEGERs (80 KiB with its NULL flags) kept 65536 records back: 20 GiB.
  SECTION("a delay of 65536 wide records") {
    CHECK_THROWS_WITH(
        testing::compileText(decl("s", "1/10", "a INTEGER[16384]") + "SELECT * STREAM q FROM s > 65536\n"),
        Catch::Contains("history of stream 's' (read by 'q')") &&
            Catch::Contains("over the limit of 1024 MiB (limits.history_memory_mib)"));
  }
  SECTION("a dump window of 65536 wide records back") {
    try {
      testing::compileText(decl("t", "1/10", "y INTEGER[16384]") + decl("s", "1/10") +
                           "SELECT * STREAM q FROM t + s\n"
                           "RULE r ON q WHEN q[0] > 1 DO DUMP -65536 TO 0\n");
      FAIL("compiled");
    } catch (const ir::CompileError& e) {
      CHECK_THAT(e.what(), Catch::Contains("its rule 'r' dumps 65536 records back"));
      CHECK(e.loc.line == 4);
    }
  }
  SECTION("the budget is an option") {
    ir::Options o = ir::defaultOptions();
    o.historyBudgetBytes = 1 << 20;
    CHECK_THROWS_AS(ir::compile(ut::parse(decl("s", "1") + "SELECT * STREAM q FROM s > 65536\n"), o), ir::CompileError);
    CHECK_NOTHROW(ir::compile(ut::parse(decl("s", "1") + "SELECT * STREAM q FROM s > 20000\n"), o));
  }
  SECTION("the longest delay (the reach limit 65536) of a narrow record fits") {
    ir::Plan p = testing::compileText(decl("s", "1/10", "a INTEGER, b INTEGER") + "SELECT * STREAM q FROM s > 65536\n");
    CHECK(cap(p, "s") == 65539);
    CHECK(ir::historyRing(cap(p, "s")) == (1 << 18));
  }
}

TEST_CASE("history rings: small ones a power of two with margin, large ones a small margin", "[capacities][budget]") {
  CHECK(ir::historyRing(1) == 16);
  CHECK(ir::historyRing(100) == 256);
  CHECK(ir::historyRing(500000) == (1 << 20));
  const int64_t big = ir::historyRing(600000);
  CHECK(big >= 600000);
  CHECK(big < 700000);
}

TEST_CASE("a DUMP rule's history is demanded of the stream itself", "[capacities][rules]") {
  ir::Plan p = testing::compileText("STORAGE 'temp'\n" + decl("core0", "0.1", "a INTEGER") +
                                    "SELECT str1[0] STREAM str1 FROM core0\n"
                                    "RULE testrule1 ON str1 WHEN str1[0] < 15 DO DUMP -7 TO 5\n");
  CHECK(cap(p, "str1") == 9);
}
