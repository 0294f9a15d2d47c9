// Stream operators end to end: the seed chapter's AGSE table and the worked
// examples of each operator, run by the real engine, read back from disk.
#include <catch2/catch.hpp>

#include <random>

#include "engine/operators/operators.hpp"
#include "ir/ir.hpp"
#include "run_support.hpp"

using testing::RunDir;
using testing::sequence;
using Rec = std::vector<int32_t>;

TEST_CASE("AGSE windows reproduce the seed chapter's table", "[engine][agse]") {
  RunDir d;
  d.write("src.txt", sequence(0, 100));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt' ONESHOT\n"
                "SELECT * STREAM slide FROM s@(1,3)\n"
                "SELECT * STREAM tumble FROM s@(3,3)\n"
                "SELECT * STREAM sample FROM s@(5,1)\n"
                "SELECT * STREAM mirror FROM s@(2,-2)\n",
                "--no-clock -m 12") == 0);
  auto slide = d.records("slide", 3);
  REQUIRE(slide.size() >= 4);
  CHECK(slide[0] == Rec{2, 1, 0});
  CHECK(slide[1] == Rec{3, 2, 1});
  CHECK(slide[2] == Rec{4, 3, 2});
  CHECK(slide[3] == Rec{5, 4, 3});
  auto tumble = d.records("tumble", 3);
  REQUIRE(tumble.size() >= 2);
  CHECK(tumble[0] == Rec{3, 2, 1});
  CHECK(tumble[1] == Rec{6, 5, 4});
  auto sample = d.records("sample", 1);
  REQUIRE(sample.size() >= 2);
  CHECK(sample[0] == Rec{0});
  CHECK(sample[1] == Rec{5});
  auto mirror = d.records("mirror", 2);
  REQUIRE(mirror.size() >= 4);
  CHECK(mirror[0] == Rec{1, 2});
  CHECK(mirror[1] == Rec{3, 4});
  CHECK(mirror[2] == Rec{5, 6});
  CHECK(mirror[3] == Rec{7, 8});
}

TEST_CASE("interleave of 1/16 and 1/8 runs B,A,A and de-interleaves back exactly", "[engine][interleave]") {
  RunDir d;
  d.write("a.txt", sequence(1, 200));
  d.write("b.txt", sequence(1001, 200));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM sa, 1/16 TEXTFILE 'a.txt'\n"
                "DECLARE x INTEGER STREAM sb, 1/8 TEXTFILE 'b.txt'\n"
                "SELECT * STREAM c FROM sa#sb\n"
                "SELECT * STREAM left FROM c & 1/8\n"
                "SELECT * STREAM right FROM c % 1/16\n",
                "--no-clock -m 60") == 0);
  auto c = d.ints("c");
  REQUIRE(c.size() >= 9);
  CHECK(std::vector<int32_t>(c.begin(), c.begin() + 9) == std::vector<int32_t>{1001, 1, 2, 1002, 3, 4, 1003, 5, 6});
  auto l = d.ints("left");
  REQUIRE(l.size() >= 6);
  for (size_t i = 0; i < l.size(); ++i) CHECK(l[i] == int32_t(i + 1));
  auto r = d.ints("right");
  REQUIRE(r.size() >= 3);
  for (size_t i = 0; i < r.size(); ++i) CHECK(r[i] == int32_t(1001 + i));
}

TEST_CASE("sum joins the slower stream's last record", "[engine][sum]") {
  RunDir d;
  d.write("a.txt", sequence(1, 50));
  d.write("b.txt", sequence(10, 50));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM A, 1 TEXTFILE 'a.txt'\n"
                "DECLARE y INTEGER STREAM B, 2 TEXTFILE 'b.txt'\n"
                "SELECT * STREAM s FROM A+B\n",
                "--no-clock -m 8") == 0);
  auto s = d.records("s", 2);
  REQUIRE(s.size() >= 5);
  CHECK(s[0] == Rec{1, 10});
  CHECK(s[1] == Rec{2, 10});
  CHECK(s[2] == Rec{3, 11});
  CHECK(s[3] == Rec{4, 11});
  CHECK(s[4] == Rec{5, 12});
}

TEST_CASE("difference re-times, de-interleave of a plain stream skips records", "[engine][subtract]") {
  RunDir d;
  d.write("s.txt", sequence(10, 300, 10));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1/100 TEXTFILE 's.txt'\n"
                "SELECT * STREAM third FROM src - 3/100\n"
                "SELECT * STREAM fifth FROM src - 5/100\n"
                "SELECT * STREAM odd FROM src & 1/50\n"
                "SELECT * STREAM mixed FROM src & 3/100\n",
                "--no-clock -m 40") == 0);
  auto third = d.ints("third");
  REQUIRE(third.size() >= 5);
  CHECK(std::vector<int32_t>(third.begin(), third.begin() + 5) == std::vector<int32_t>{10, 40, 70, 100, 130});
  auto fifth = d.ints("fifth");
  REQUIRE(fifth.size() >= 3);
  CHECK(std::vector<int32_t>(fifth.begin(), fifth.begin() + 3) == std::vector<int32_t>{10, 60, 110});
  auto odd = d.ints("odd");
  REQUIRE(odd.size() >= 4);
  CHECK(std::vector<int32_t>(odd.begin(), odd.begin() + 4) == std::vector<int32_t>{20, 40, 60, 80});
  auto mixed = d.ints("mixed");
  REQUIRE(mixed.size() >= 4);
  CHECK(std::vector<int32_t>(mixed.begin(), mixed.begin() + 4) == std::vector<int32_t>{20, 30, 50, 60});
}

TEST_CASE("time shift delays by whole records; the join sees it older", "[engine][timeshift]") {
  RunDir d;
  d.write("f.txt", sequence(100, 100));
  d.write("s.txt", sequence(500, 100));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM fast, 1 TEXTFILE 'f.txt'\n"
                "DECLARE y INTEGER STREAM slow, 2 TEXTFILE 's.txt'\n"
                "SELECT * STREAM shifted FROM fast>2\n"
                "SELECT * STREAM joined FROM shifted+slow\n",
                "--no-clock -m 20") == 0);
  auto j = d.records("joined", 2);
  REQUIRE(j.size() >= 6);
  for (size_t k = 0; k < j.size(); ++k) {
    CHECK(j[k][0] == int32_t(100 + k));
    CHECK(j[k][1] == int32_t(500 + (k + 2) / 2));
  }
}

TEST_CASE("reducers fold the current record; NULL elements are skipped", "[engine][reduce]") {
  RunDir d;
  d.write("w.txt", "10 20 NULL 40 50 60 70 80\n");
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM source, 1 TEXTFILE 'w.txt'\n"
                "SELECT * STREAM win FROM source@(1,3)\n"
                "SELECT * STREAM total FROM win.sumc\n"
                "SELECT * STREAM top FROM win.max\n",
                "--no-clock -m 8") == 0);
  auto total = d.records("total", 2);  // RATIONAL: numerator, denominator
  REQUIRE(total.size() >= 4);
  CHECK(total[0] == Rec{30, 1});
  CHECK(total[1] == Rec{60, 1});
  CHECK(total[2] == Rec{90, 1});
  CHECK(total[3] == Rec{150, 1});
  auto top = d.records("top", 2);
  REQUIRE(top.size() >= 1);
  CHECK(top[0] == Rec{20, 1});
}

TEST_CASE("division by zero gives NULL and the run goes on", "[engine][null]") {
  RunDir d;
  d.write("s.txt", "4 0 5\n");
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1 TEXTFILE 's.txt' ONESHOT\n"
                "SELECT 100/src[0] STREAM q FROM src\n",
                "--no-clock -m 4") == 0);
  CHECK(d.ints("q") == std::vector<int32_t>{25, 0, 20});
  // The NULL is in the .meta index: run 1 clear, run 1 null, run 1 clear.
  std::string meta = d.read("q.meta");
  CHECK(meta.size() == 8 + 3 * 18);
}

// Regressions found in review.
TEST_CASE("windows over an array source see its flat elements", "[engine][agse][regression]") {
  RunDir d;
  d.write("d.txt", sequence(10, 40, 10));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER[2] STREAM src, 1 TEXTFILE 'd.txt'\n"
                "SELECT * STREAM one FROM src@(1,1)\n"
                "SELECT * STREAM two FROM src@(1,2)\n",
                "--no-clock -m 12") == 0);
  auto one = d.ints("one");
  REQUIRE(one.size() >= 4);
  CHECK(std::vector<int32_t>(one.begin(), one.begin() + 4) == std::vector<int32_t>{10, 20, 30, 40});
  auto two = d.records("two", 2);
  REQUIRE(two.size() >= 2);
  CHECK(two[0] == Rec{20, 10});
  CHECK(two[1] == Rec{30, 20});
}

TEST_CASE("--until-eof keeps a last incomplete text record", "[engine][regression]") {
  RunDir d;
  d.write("e.txt", "1 2\n3 4\n5\n");
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE a INTEGER, b INTEGER STREAM s, 1 TEXTFILE 'e.txt'\n"
                "SELECT s[0], s[1] STREAM o FROM s\n",
                "--no-clock --until-eof") == 0);
  CHECK(d.records("o", 2) == std::vector<Rec>{{1, 2}, {3, 4}, {5, 0}});
}

TEST_CASE("a STRING field with no quoted string in its file reads NULL and the run ends", "[engine][regression]") {
  RunDir d;
  d.write("n.txt", "abc def\n");
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE v STRING[4] STREAM a, 1 TEXTFILE 'n.txt'\n"
                "SELECT a[0] STREAM o FROM a\n",
                "--no-clock -m 4") == 0);
  CHECK(d.read("o").size() == 3 * 4);
}

TEST_CASE("string comparisons in a rule give INTEGER truth", "[engine][rules][regression]") {
  RunDir d;
  d.write("d.txt", "\"ab\" 1\n\"c\" 10\n");
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE s STRING[4], i INTEGER STREAM src, 1 TEXTFILE 'd.txt' ONESHOT\n"
                "SELECT src[0], src[1] STREAM o FROM src\n"
                "RULE never ON o WHEN o[0] = 'zz' DO DUMP 0 TO 1\n"
                "RULE later ON o WHEN o[0] > 'b' DO DUMP 0 TO 1\n",
                "--no-clock -m 3") == 0);
  CHECK(!std::filesystem::exists(d.dir / "o_never_dump.tmp"));
  CHECK(d.read("o_later_dump.tmp").size() == 8);
}

// A delay reaches at most 65536 records back (ir/limits.hpp); a ring past the
// power-of-two sizes (positions by modulo) comes from a re-timing that reads
// one record in 10^6: s keeps 10^6 records.
TEST_CASE("the longest delay, and a ring past the power-of-two sizes, read the right records", "[engine][history]") {
  testing::RunDir d;
  d.write("s.txt", testing::sequence(0, 2000100));
  const std::string q =
      "STORAGE '.'\n"
      "DECLARE x INTEGER STREAM s, 1 TEXTFILE 's.txt'\n"
      "SELECT * STREAM late FROM s > 65536\n"
      "SELECT * STREAM slow FROM s - 1000000\n";
  REQUIRE(d.run(q, "--no-clock -m 2000050") == 0);
  auto recs = d.records("late", 1);
  REQUIRE(recs.size() == 2000049 - 65536);
  size_t wrong = 0;
  for (size_t p = 0; p < recs.size(); ++p) wrong += recs[p][0] != int32_t(p);
  CHECK(wrong == 0);
  CHECK(d.records("slow", 1) == std::vector<std::vector<int32_t>>{{0}, {1000000}});
  CHECK(ir::historyRing(1000002) > (1 << 20));  // not a power of two: the modulo positions
}

TEST_CASE("pipelines too cheap to hand out stay on the plain loop (no core spinning for nothing)",
          "[engine][scheduler]") {
  testing::RunDir d;
  d.write("a.txt", testing::sequence(1, 5000));
  const std::string q =
      "STORAGE '.'\n"
      "DECLARE x INTEGER STREAM a, 1 TEXTFILE 'a.txt'\n"
      "SELECT a[0] + 1 STREAM p FROM a\n"
      "SELECT a[0] * 2 STREAM r FROM a\n";
  // Short blocks: the first five are timed stream by stream.
  REQUIRE(d.run(q, "--no-clock -m 8000 --threads 2 --block 512 -v") == 0);
  const std::string out = d.read("run.out");
  CHECK_THAT(out, Catch::Contains("scheduler: 2 pipelines") && Catch::Contains("of 2: serial"));
  // Whatever was chosen, the records are those of a serial run.
  auto p = d.records("p", 1), r = d.records("r", 1);
  REQUIRE(p.size() == 7999);
  for (size_t i = 0; i < p.size(); ++i) {
    CHECK(p[i][0] == int32_t(i % 5000) + 2);
    CHECK(r[i][0] == 2 * (int32_t(i % 5000) + 1));
  }
}

TEST_CASE("-v on a clocked run prints how late the slots finished (p50, p99, p99.9, max)", "[engine][latency]") {
  testing::RunDir d;
  d.write("a.txt", testing::sequence(1, 100));
  const std::string q =
      "STORAGE '.'\nDECLARE x INTEGER STREAM a, 1/200 TEXTFILE 'a.txt'\nSELECT a[0] + 1 STREAM p FROM a\n";
  REQUIRE(d.run(q, "-m 40 -k -v") == 0);
  const std::string out = d.read("run.out");
  CHECK_THAT(out, Catch::Contains("slot lateness over 39 clocked slots") && Catch::Contains("p99.9") &&
                      Catch::Contains("max"));
  // Offline runs have no deadlines: no such line.
  REQUIRE(d.run(q, "--no-clock -m 40 -k -v") == 0);
  CHECK_THAT(d.read("run.out"), !Catch::Contains("slot lateness"));
}

TEST_CASE("a window over BYTE and INTEGER fields widens every element (copying windows and fused reducers)",
          "[engine][agse][blocks]") {
  RunDir d;
  std::string src;
  for (int i = 0; i < 40; ++i) src += std::to_string(1000 + i) + " " + std::to_string(i % 7) + "\n";
  d.write("src.txt", src);
  // Mixed element types: the window's INTEGER slots are converted, never copied raw.
  const std::string q =
      "STORAGE '.'\n"
      "DECLARE v INTEGER, b BYTE STREAM s, 1 TEXTFILE 'src.txt' ONESHOT\n"
      "SELECT * STREAM w FROM s@(1,4)\n"
      "SELECT * STREAM wv FROM s@(1,4) VOLATILE\n"
      "SELECT to_integer(m[0]) STREAM m FROM wv.sumc\n";
  for (const char* mode : {"--block 1 --no-fuse", "--block 3", "--block 512"}) {
    INFO(mode);
    REQUIRE(d.run(q, std::string("--no-clock -m 30 ") + mode) == 0);
    auto w = d.records("w", 4);
    auto m = d.records("m", 1);
    REQUIRE(w.size() >= 10);
    REQUIRE(m.size() >= 10);
    // Record n holds flat positions n+3 .. n of the (v, b) pairs, newest first.
    for (size_t n = 0; n < 10; ++n) {
      Rec want, all;
      int64_t sum = 0;
      for (int i = 0; i < 4; ++i) {
        const int64_t pos = int64_t(n) + 3 - i, rec = pos / 2;
        want.push_back(pos % 2 == 0 ? int32_t(1000 + rec) : int32_t(rec % 7));
        sum += want.back();
      }
      CHECK(w[n] == want);
      CHECK(m[n] == Rec{int32_t(sum)});
    }
  }
}

// Four history aggregates make the FROM `s + R1 + R2 + R3 + R4`; the last
// reducer reaches s through its window as deep as the chain reaches s itself.
// s[k] must still name s's element (not a place in a folded window), in the
// fields and in every mode.
TEST_CASE("s[k] beside several history aggregates names s's own element", "[engine][history-aggregates]") {
  for (const char* mode : {"", " --interpret"}) {
    INFO("mode:" << mode);
    RunDir d;
    d.write("src.txt", "1 10\n2 20\n3 30\n4 40\n5 50\n6 60\n");
    REQUIRE(d.run("STORAGE '.'\n"
                  "DECLARE a INTEGER, b INTEGER STREAM s, 1 TEXTFILE 'src.txt' ONESHOT\n"
                  "SELECT s[1], MIN(s[0] : 2), MAX(s[1] : 2), SUMC(s[0] : 3), AVG(s[1] : 2), s[0] * 100 STREAM r "
                  "FROM s\n",
                  std::string("--no-clock -m 7") + mode) == 0);
    // INTEGER, four RATIONALs (numerator, denominator), INTEGER; the first
    // record is the one whose widest window (3) is full: a = 3.
    auto r = d.records("r", 10);
    REQUIRE(r.size() == 4);
    CHECK(r[0] == Rec{30, 2, 1, 30, 1, 6, 1, 25, 1, 300});
    // a = 4, b = 40: windows {4,3}, {40,30}, {4,3,2}, {40,30}.
    CHECK(r[1] == Rec{40, 3, 1, 40, 1, 9, 1, 35, 1, 400});
  }
}

// Two pipelines whose blocks cost far more than handing them out: the
// measured cost places one on each core (and the records are a serial run's).
TEST_CASE("independent pipelines of real cost run side by side, chosen from their measured cost",
          "[engine][scheduler]") {
  testing::RunDir d;
  d.write("a.txt", testing::sequence(1, 5000));
  std::string q = "STORAGE '.'\nDECLARE x INTEGER STREAM a, 1 TEXTFILE 'a.txt'\n";
  for (const char* p : {"p", "r"})  // 64-wide windows folded slot by slot: real work in each pipeline
    q += std::string("SELECT * STREAM ") + p + "w FROM a@(1,64) VOLATILE\nSELECT " + p + "w[_] * " + p +
         "w[_] STREAM " + p + "sq FROM " + p + "w VOLATILE\nSELECT * STREAM " + p + " FROM SUMC(" + p + "sq)\n";
  REQUIRE(d.run(q, "--no-clock -m 60000 --threads 2 --block 4096 -v --interpret") == 0);
  CHECK_THAT(d.read("run.out"), Catch::Contains("scheduler: 2 pipelines") && Catch::Contains("of 2: parallel"));
  auto p = d.records("p", 1), r = d.records("r", 1);
  REQUIRE(p.size() == r.size());
  REQUIRE(p.size() > 50000);
  CHECK(p == r);
}

// Whether the plan has independent pipelines is asked before its streams are
// set up (the rings are sized for the block): the longer parallel blocks must
// apply to such a plan when no --block is given.
TEST_CASE("a plan of independent pipelines on two threads runs the longer parallel blocks", "[engine][scheduler]") {
  testing::RunDir d;
  d.write("a.txt", testing::sequence(1, 100));
  REQUIRE(d.run("STORAGE '.'\nDECLARE x INTEGER STREAM a, 1 TEXTFILE 'a.txt'\n"
                "SELECT a[0] + 1 STREAM p FROM a\nSELECT a[0] * 2 STREAM r FROM a\n",
                "--no-clock -m 40000 --threads 2 -v") == 0);
  CHECK_THAT(d.read("run.out"), Catch::Contains("scheduler: 2 pipelines") && Catch::Contains("a block of 4096 slots"));
}

// A VOLATILE window read by one SELECT that loads few of its elements is not
// materialised: the SELECT gathers those elements from the window's producer.
// The records must be the materialised window's, NULLs included, in every
// block length, on the VM and when a second reader materialises it again.
TEST_CASE("a SELECT over a fused window reads the elements it loads, as the window would hold them",
          "[engine][agse][fusion]") {
  RunDir d;
  d.write("src.txt", sequence(0, 200));
  // p's second element is NULL where v % 3 == 0 (a zero divisor).
  const std::string q =
      "STORAGE '.'\n"
      "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt' ONESHOT\n"
      "SELECT s[0] * 10, 100 / (s[0] - 3 * (s[0] / 3)) STREAM p FROM s\n"
      "SELECT * STREAM w FROM p@(1,8) VOLATILE\n"
      "SELECT w[0] - w[7], w[3], w[1] + 1 STREAM r FROM w\n";
  auto expected = [](int64_t n) {  // record n of w holds flat positions n+7 .. n, newest first
    auto at = [](int64_t pos, bool& isNull) -> int32_t {
      isNull = false;
      if (pos < 0) return isNull = true, 0;
      const int64_t v = pos / 2;
      if (pos % 2 == 0) return int32_t(v * 10);
      if (v % 3 == 0) return isNull = true, 0;
      return int32_t(100 / (v % 3));
    };
    bool n0, n7, n3, n1;
    const int32_t e0 = at(n + 7, n0), e7 = at(n, n7), e3 = at(n + 4, n3), e1 = at(n + 6, n1);
    return std::tuple<Rec, bool, bool, bool>{Rec{n0 || n7 ? 0 : e0 - e7, e3, n1 ? 0 : e1 + 1}, n0 || n7, n3, n1};
  };
  std::string referenceIndex;  // r's NULL index from the materialised window
  for (const char* mode : {"--block 1 --no-fuse", "--block 1", "--block 3", "--block 512", "--interpret"}) {
    INFO(mode);
    REQUIRE(d.run(q, std::string("--no-clock -m 120 -v ") + mode) == 0);
    const bool fused = std::string(mode).find("no-fuse") == std::string::npos;
    CHECK((d.read("run.out").find("fusion: window w is not materialised; r reads") != std::string::npos) == fused);
    auto r = d.records("r", 3);
    REQUIRE(r.size() >= 100);
    for (size_t n = 0; n < r.size(); ++n) {
      auto [want, null0, null1, null2] = expected(int64_t(n));
      INFO("record " << n);
      CHECK(r[n][0] == (null0 ? 0 : want[0]));
      CHECK(r[n][1] == (null1 ? 0 : want[1]));
      CHECK(r[n][2] == (null2 ? 0 : want[2]));
    }
    // The index starts with its 8-byte creation time; its entries must not differ.
    const std::string index = d.read("r.meta").substr(8);
    if (referenceIndex.empty()) referenceIndex = index;
    CHECK(index == referenceIndex);
  }
  CHECK(referenceIndex.size() > 8 + 10 * 18);  // NULL runs throughout
}

// Streams where each is read by the next alone run as one compiled loop (a
// chain). Its members' records, NULL indexes and rounding counts must be
// what each stream's own step writes: a map with a slower operand (+ k: a
// tail 3 larger, so q reads the VOLATILE p three records back, from its ring), a
// sum over a record beyond INTEGER range (the exact fold in RATIONAL, with
// roundings), AVG, MIN, a window sliding over its producer (runs of 256
// records within a block), fused windows folded as they slide (NULLs in them,
// sums beyond INTEGER range, a producer outside the chain), NULLs from a zero
// divisor, a VOLATILE member, MAX, a window wider than a vector register and
// its fold, members not materialised (their NULL index still written), and
// every block length, on two threads and on the VM.
TEST_CASE("a chain compiled as one loop writes what each stream's own step writes", "[engine][chain]") {
  RunDir d;
  d.write("src.txt", sequence(-40, 400));
  d.write("k.txt", sequence(1, 200));
  const std::string q =
      "STORAGE '.'\n"
      "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt' ONESHOT\n"
      "DECLARE c INTEGER STREAM k, 4 TEXTFILE 'k.txt'\n"
      "SELECT s[0] + 2000000000, 7 / (s[0] - 3 * (s[0] / 3)), 2000000000 - s[0] * 11 STREAM p FROM s VOLATILE\n"
      "SELECT * STREAM q FROM p + k\n"
      "SELECT q[0] STREAM r FROM q.sumc\n"
      "SELECT r[0] * 3 / 7, r[0] + 1 STREAM t FROM r\n"
      "SELECT s[0] * 5, s[0] - 11, 9 / (s[0] - 2 * (s[0] / 2)) STREAM p2 FROM s\n"
      "SELECT p2[0] STREAM a FROM p2.avg\n"
      "SELECT to_integer(a[0]), a[0] STREAM a2 FROM a\n"
      "SELECT s[0] - 3, 0 - s[0] STREAM p3 FROM s\n"
      "SELECT p3[0] STREAM mn FROM p3.min\n"
      "SELECT mn[0] * 2 STREAM m2 FROM mn\n"
      "SELECT 7 / (s[0] - 5 * (s[0] / 5)) STREAM e FROM s\n"
      "SELECT * STREAM ew FROM e@(1,6)\n"
      "SELECT ew[0] - ew[5], ew[2] STREAM ed FROM ew\n"
      "SELECT 7 / (s[0] - 4 * (s[0] / 4)) + 1000000000 STREAM g FROM s\n"
      "SELECT * STREAM gw FROM g@(1,3) VOLATILE\n"
      "SELECT gw[0] STREAM ga FROM gw.avg\n"
      "SELECT ga[0] * 2 STREAM gb FROM ga\n"
      "SELECT 5 / (s[0] - 6 * (s[0] / 6)) STREAM h FROM s\n"
      "SELECT * STREAM hw FROM h@(1,5) VOLATILE\n"
      "SELECT hw[0] STREAM hs FROM hw.sumc\n"
      "SELECT * STREAM sw FROM s@(1,7) VOLATILE\n"
      "SELECT sw[0] STREAM sa FROM sw.avg\n"
      "SELECT sa[0] + 1 STREAM sb FROM sa\n"
      // Averages read only by to_integer (the chain skips their lowest terms),
      // negative and NULL elements among them: sliding and over a record.
      "SELECT 7 / (s[0] - 3 * (s[0] / 3)) - 2 * s[0] STREAM u FROM s\n"
      "SELECT * STREAM uw FROM u@(1,4) VOLATILE\n"
      "SELECT to_integer(uw[0]) STREAM ui FROM uw.avg\n"
      "SELECT 0 - s[0] * 3, s[0] + 1, 5 / (s[0] - 2 * (s[0] / 2)) STREAM p4 FROM s\n"
      "SELECT to_integer(p4[0]) STREAM fi FROM p4.avg\n"
      // MAX over a record; a window of 70 (wider than a vector register) and
      // its MAX, folded element by element.
      "SELECT s[0], 0 - s[0], 4 / (s[0] - 3 * (s[0] / 3)) STREAM p5 FROM s\n"
      "SELECT p5[0] STREAM mx FROM p5.max\n"
      "SELECT 3 / (s[0] - 7 * (s[0] / 7)) - s[0] STREAM b FROM s\n"
      "SELECT * STREAM bw FROM b@(1,70)\n"
      "SELECT bw[0] STREAM bx FROM bw.max\n"
      "SELECT bx[0] + 1 STREAM bz FROM bx\n"
      // VOLATILE members read only by the next one (vw, vm): not materialised.
      "SELECT 7 / (s[0] - 5 * (s[0] / 5)) - s[0] STREAM v1 FROM s VOLATILE\n"
      "SELECT * STREAM vw FROM v1@(1,5) VOLATILE\n"
      "SELECT vw[0] * 2, vw[1] - vw[4], vw[2] STREAM vm FROM vw VOLATILE\n"
      "SELECT vm[0] STREAM vs FROM vm.sumc\n"
      // A record with one large element: its sum of magnitudes is within
      // INTEGER range though three times its largest is not.
      "SELECT s[0] * 5000000, s[0], 1 STREAM p6 FROM s\n"
      "SELECT p6[0] STREAM ls FROM p6.sumc\n"
      // A NULL every 50 records in a sliding window of 20: short runs start
      // with it inside the window, not among the records leaving it.
      "SELECT 3 / (s[0] - 50 * (s[0] / 50)) STREAM z FROM s\n"
      "SELECT * STREAM zw FROM z@(1,20) VOLATILE\n"
      "SELECT zw[0] STREAM za FROM zw.avg\n"
      // A stream read by two heads the one reader's chain when the other
      // runs after that chain in plan order, not when it runs before.
      "SELECT s[0] * 3 - 7, 11 / (s[0] - 4 * (s[0] / 4)) STREAM hd FROM s\n"
      "SELECT hd[0] + 1, hd[1] STREAM hx FROM hd\n"
      "SELECT hx[0] * 2 - hx[1] STREAM hy FROM hx\n"
      "SELECT hd[0] * hd[1] STREAM hq FROM hd\n"
      "SELECT s[0] + 5 STREAM gd FROM s\n"
      "SELECT gd[0] * 2 STREAM gq FROM gd\n"
      "SELECT gd[0] - 1 STREAM gx FROM gd\n"
      "SELECT gx[0] * 3 STREAM gy FROM gx\n"
      // One NULL a member makes (record 240), past its ring's first wrap:
      // it leaves a sliding window, and a reader 3 records back copies it,
      // within the run that wrote it.
      "SELECT 7 / (s[0] - 200) STREAM n1 FROM s\n"
      "SELECT * STREAM n1w FROM n1@(1,4) VOLATILE\n"
      "SELECT n1w[0] STREAM n1a FROM n1w.avg\n"
      "SELECT 7 / (s[0] - 200) + 1 STREAM n2 FROM s VOLATILE\n"
      "SELECT * STREAM n2k FROM n2 + k\n";
  const std::vector<std::string> files = {"q",  "r",  "t",  "a",  "a2", "mn", "m2", "p2",  "p3",  "e",  "ew", "ed",
                                          "g",  "ga", "gb", "h",  "hs", "sa", "sb", "gw",  "hw",  "sw", "ui", "fi",
                                          "mx", "bw", "bx", "bz", "v1", "vw", "vm", "vs",  "ls",  "zw", "za", "hd",
                                          "hx", "hy", "hq", "gd", "gq", "gx", "gy", "n1w", "n1a", "n2", "n2k"};
  std::map<std::string, std::string> reference;
  std::string referenceRounded;
  // Chains run on optimised code (a run this short never tiers up from quick code).
  for (const char* mode : {"--block 1 --no-chains", "--jit-tier optimised", "--block 1 --jit-tier optimised",
                           "--block 3 --jit-tier optimised", "--block 77 --jit-tier optimised",
                           "--threads 2 --parallel --jit-tier optimised", "", "--interpret --no-chains", "--interpret",
                           "--block 1 --interpret", "--block 77 --interpret", "--threads 2 --parallel --interpret"}) {
    INFO(mode);
    REQUIRE(d.run(q, std::string("--no-clock -m 300 -v ") + mode) == 0);
    const std::string out = d.read("run.out");
    // Found (compiled when optimised), or run on the VM under --interpret.
    const bool chained = std::string(mode).find("no-chains") == std::string::npos;
    const std::string verb = std::string(mode).find("interpret") == std::string::npos ? " compiled as one loop"
                                                                                      : " runs as one loop on the VM";
    CHECK((out.find("chain: p -> q -> r -> t" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: p2 -> a -> a2" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: p3 -> mn -> m2" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: e -> ew -> ed" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: g -> gw -> ga -> gb" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: h -> hw -> hs" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: sw -> sa -> sb" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: u -> uw -> ui" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: p4 -> fi" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: p5 -> mx" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: b -> bw -> bx -> bz" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: v1 -> vw -> vm -> vs" + verb + " (vw, vm not materialised)") != std::string::npos) ==
          chained);
    const bool optimised = std::string(mode).find("optimised") != std::string::npos;
    CHECK((out.find("chain: p6 -> ls" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: z -> zw -> za" + verb) != std::string::npos) == chained);
    // The plan's order (its listing) says which of hd and gd may head a chain: one of each here.
    auto listed = [&](const char* name) { return out.find(std::string("\n") + name + "("); };
    const bool hAfter = listed("hq") > listed("hy"), gAfter = listed("gq") > listed("gy");
    CHECK(hAfter != gAfter);
    CHECK((out.find("chain: hd -> hx -> hy" + verb) != std::string::npos) == (chained && hAfter));
    CHECK((out.find("chain: hx -> hy" + verb) != std::string::npos) == (chained && !hAfter));
    CHECK((out.find("chain: gd -> gx -> gy" + verb) != std::string::npos) == (chained && gAfter));
    CHECK((out.find("chain: gx -> gy" + verb) != std::string::npos) == (chained && !gAfter));
    CHECK((out.find("chain: n1 -> n1w -> n1a" + verb) != std::string::npos) == chained);
    CHECK((out.find("chain: n2 -> n2k" + verb) != std::string::npos) == chained);
    CHECK((out.find("JIT: 18 chains run as one loop each") != std::string::npos) == optimised);
    std::string rounded;
    for (size_t at = out.find("rounded: "); at != std::string::npos; at = out.find("rounded: ", at + 1))
      rounded += out.substr(at, out.find('\n', at) - at) + "\n";
    for (auto& f : files) {
      INFO(f);
      const std::string data = d.read(f), meta = d.read(f + ".meta").substr(8);  // a fused window: no data
      if (!reference.count(f)) {
        reference[f] = data;
        reference[f + ".meta"] = meta;
        referenceRounded = rounded;
        continue;
      }
      CHECK(data == reference[f]);
      CHECK(meta == reference[f + ".meta"]);
    }
    CHECK(d.read("p.meta").size() > 8);  // the VOLATILE member keeps its NULL index
    CHECK(rounded == referenceRounded);
  }
  CHECK(reference["t"].size() > 250 * 16);
  CHECK(reference["ls"].size() > 250 * 8);
  CHECK(referenceRounded.find("rounded: r ") != std::string::npos);  // the fold beyond INTEGER range rounded
  // The sliding average of three values near 10^9 is exact: its sum is never rounded part way.
  CHECK(referenceRounded.find("rounded: ga ") == std::string::npos);
}

// A chain checks a run's outside records held from the first and last slots
// when the producer's visible counts allow (never falling; one more a slot):
// on any counts and slots it must answer what checking every slot answers.
TEST_CASE("a run's records are held throughout exactly when each slot holds its record", "[chain][property]") {
  std::mt19937_64 rng(24);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int shortcuts = 0;
  for (int round = 0; round < 20000; ++round) {
    const int slots = int(pick(1, 12));
    std::vector<int64_t> vis(static_cast<size_t>(slots), 0);
    const int64_t form = pick(0, 3);  // one more a slot, rising by 0..2, anything, rising then one fall
    int64_t v = pick(0, 6);
    for (int j = 0; j < slots; ++j) {
      vis[size_t(j)] = v;
      v += form == 0 ? 1 : form == 1 ? pick(0, 2) : form == 2 ? pick(-2, 2) : (j == slots / 2 ? -1 : 1);
    }
    std::vector<int> js;  // rising slots: all of them from some slot on, or some
    const bool consecutive = pick(0, 1) == 1;
    for (int j = int(pick(0, slots - 1)); j < slots; ++j)
      if (consecutive || pick(0, 1)) js.push_back(j);
    if (js.empty()) continue;
    const int k = int(js.size());
    const int64_t step = pick(0, 1), window = pick(1, 6), at0 = pick(-1, 10);
    const uint8_t shape = engine::ops::visShape(vis.data(), slots);
    bool each = at0 >= 0;
    for (int i = 0; i < k; ++i) {
      const int64_t at = at0 + i * step, seen = vis[size_t(js[size_t(i)])];
      each = each && at < seen && at >= seen - window;
    }
    INFO("round " << round);
    CHECK(engine::ops::heldThroughout(vis.data(), js.data(), k, at0, step, window, shape) == each);
    shortcuts += (step == 0 && (shape & engine::ops::kVisRising)) ||
                 (step == 1 && (shape & engine::ops::kVisStep) && js.back() - js.front() == k - 1);
  }
  CHECK(shortcuts > 5000);  // the shortcuts were taken, not only the loop
}

// A member read 299 records back (its reader joins a stream of interval 300):
// a run never writes what it reads, so a clean run checks those records'
// NULL flags before it starts (the clean loop takes them as zeros). They
// must match each stream's own step, NULLs (every third record) included.
TEST_CASE("a chain reading a member far back checks its NULLs before a clean run", "[engine][chain]") {
  RunDir d;
  d.write("src.txt", sequence(-40, 2000));
  d.write("k.txt", sequence(1, 20));
  const std::string q =
      "STORAGE '.'\n"
      "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt' ONESHOT\n"
      "DECLARE c INTEGER STREAM k, 300 TEXTFILE 'k.txt'\n"
      "SELECT 7 / (s[0] - 3 * (s[0] / 3)) STREAM n FROM s VOLATILE\n"
      "SELECT * STREAM nk FROM n + k\n";
  std::string reference, referenceIndex;
  for (const char* mode : {"--block 1 --no-chains", "--jit-tier optimised", "--block 77 --jit-tier optimised",
                           "--block 1000 --jit-tier optimised", "--block 77 --interpret", "--block 1000 --interpret"}) {
    INFO(mode);
    REQUIRE(d.run(q, std::string("--no-clock -m 1500 -v ") + mode) == 0);
    const bool chained = std::string(mode).find("no-chains") == std::string::npos,
               vm = std::string(mode).find("interpret") != std::string::npos;
    CHECK((d.read("run.out").find(vm ? "chain: n -> nk runs as one loop on the VM"
                                     : "chain: n -> nk compiled as one loop") != std::string::npos) == chained);
    CHECK((d.read("run.out").find("JIT: 1 chains run as one loop each") != std::string::npos) == (chained && !vm));
    const std::string data = d.read("nk"), index = d.read("nk.meta").substr(8);
    if (reference.empty()) {
      reference = data, referenceIndex = index;
      continue;
    }
    CHECK(data == reference);
    CHECK(index == referenceIndex);
  }
  CHECK(reference.size() > 1000 * 8);
}
