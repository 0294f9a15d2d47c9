// ROTATION end to end (book rotation.md): each clean shutdown archives its
// session's data with the index and shadows of the same number; the counter
// is reserved at start; a counter file without a session number stops the
// start before any artifact is touched.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <thread>

#include "spawn_support.hpp"
#include "storage/artifacts.hpp"

namespace {

namespace fs = std::filesystem;

std::set<std::string> filesIn(const fs::path& dir) {
  std::set<std::string> out;
  for (auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("run.", 0) == 0 || n.rfind("xretractor", 0) == 0 || n[0] == '.' || n == "query.rql") continue;
    out.insert(n);
  }
  return out;
}

// A source with NULLs in every third record, an output of it and a segmented one.
const std::string kQuery =
    "STORAGE '.'\n"
    "ROTATION 'rot.txt'\n"
    "DECLARE a INTEGER, b INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\n"
    "SELECT src[0], src[1] STREAM x FROM src\n"
    "SELECT src[0] STREAM r FROM src RETENTION 4 0\n";

}  // namespace

TEST_CASE("ROTATION: each shutdown archives data, index and shadow under its session's number", "[engine][rotation]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(30));
  REQUIRE(d.run(kQuery, "--no-clock -m 10") == 0);
  CHECK(d.read("rot.txt") == "1");
  REQUIRE(d.run(kQuery, "--no-clock -m 7") == 0);
  CHECK(d.read("rot.txt") == "2");
  const std::set<std::string> want = {"s.txt", "rot.txt", "src.desc", "x.desc", "r.desc",
                                      // session 0: 9 records (-m 10: the zero step and 9 slots; r in segments of 4)
                                      "x.old0", "x.meta.old0", "x.shadow.old0", "r_segment_0.old0", "r_segment_1.old0",
                                      "r_segment_2.old0", "r_segment_0.shadow.old0", "r_segment_1.shadow.old0",
                                      "r_segment_2.shadow.old0", "r.meta.old0",
                                      // session 1: 6 records
                                      "x.old1", "x.meta.old1", "x.shadow.old1", "r_segment_0.old1", "r_segment_1.old1",
                                      "r_segment_0.shadow.old1", "r_segment_1.shadow.old1", "r.meta.old1"};
  CHECK(filesIn(d.dir) == want);
  // Each index counts its own session's records, with its NULL bits.
  for (auto [n, records] : {std::pair<int, uint64_t>{0, 9}, {1, 6}}) {
    const std::string k = std::to_string(n);
    testing::Artifact a = testing::inspect(d.dir, "x", "x.old" + k);
    REQUIRE(a.exists);
    CHECK(a.data == records);
    CHECK(testing::metaRecords(a.meta) == records);
    testing::checkNullBits(d.dir, a, "x.old" + k, 0, 0);
  }
}

TEST_CASE("ROTATION: a counter file without a session number stops the start; nothing is deleted or rotated",
          "[engine][rotation]") {
  for (const std::string& bad :
       {std::string(""), std::string("abc"), std::string("-3"), std::string("4294967296"), std::string("7 8")}) {
    INFO("counter '" << bad << "'");
    testing::RunDir d;
    d.write("s.txt", testing::nullEveryThird(30));
    REQUIRE(d.run(kQuery, "--no-clock -m 5") == 0);
    d.write("rot.txt", bad);
    // What an interrupted session left: its data and index, to be archived by the next clean shutdown.
    d.write("x", std::string(16, '\0'));
    const auto before = filesIn(d.dir);
    const int rc = d.run(kQuery, "--no-clock -m 5");
    CHECK(rc != 0);
    const std::string err = d.read("run.err");
    CHECK_THAT(err, Catch::Contains("rotation counter file 'rot.txt'"));
    CHECK(filesIn(d.dir) == before);
    CHECK(d.read("rot.txt") == bad);
    CHECK(d.read("x") == std::string(16, '\0'));
  }
}

TEST_CASE("ROTATION: the session number is reserved at start, so a killed session costs a number",
          "[engine][rotation]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(999));
  d.write("query.rql", kQuery);
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  REQUIRE(pid > 0);
  // Clocked at 1 ms a slot: wait for the reservation, then kill before any shutdown.
  for (int i = 0; i < 200 && d.read("rot.txt") != "1"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(pid, SIGKILL);
  REQUIRE(testing::waitChild(pid) == 128 + SIGKILL);
  CHECK(d.read("rot.txt") == "1");
  CHECK_FALSE(fs::exists(d.dir / "x.old0"));
  CHECK_FALSE(fs::exists(d.dir / "rot.txt.tmp"));
  // The next session is number 1: it archives what the killed one left together with its own records.
  REQUIRE(d.run(kQuery, "--no-clock -m 5") == 0);
  CHECK(d.read("rot.txt") == "2");
  CHECK(fs::exists(d.dir / "x.old1"));
  CHECK(fs::exists(d.dir / "x.meta.old1"));
  CHECK_FALSE(fs::exists(d.dir / "x.old0"));
}
