// ROTATION end to end (book rotation.md): each clean shutdown archives its
// session's data with the index, shadows and descriptor of the same number;
// the counter is reserved at start; a counter file without a session number
// stops the start before any artifact is touched; files of another layout are
// never continued.
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

// kQuery with x of another layout (15-byte records instead of 8); r as it was.
const std::string kWideX =
    "STORAGE '.'\n"
    "ROTATION 'rot.txt'\n"
    "DECLARE a INTEGER, b INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\n"
    "SELECT src[0], to_double(src[0]) / 3, 'abc' STREAM x FROM src\n"
    "SELECT src[0] STREAM r FROM src RETENTION 4 0\n";

int recordSizeOf(const fs::path& desc) { return storage::Descriptor::load(desc.string()).recordSize(); }

}  // namespace

TEST_CASE("ROTATION: each shutdown archives data, index and shadow under its session's number", "[engine][rotation]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(30));
  REQUIRE(d.run(kQuery, "--no-clock -m 10") == 0);
  CHECK(d.read("rot.txt") == "1");
  REQUIRE(d.run(kQuery, "--no-clock -m 7") == 0);
  CHECK(d.read("rot.txt") == "2");
  const std::set<std::string> want = {
      "s.txt", "rot.txt", "src.desc", "x.desc", "r.desc",
      // session 0: 9 records (-m 10: the zero step and 9 slots; r in segments of 4)
      "x.old0", "x.meta.old0", "x.shadow.old0", "x.desc.old0", "r_segment_0.old0", "r_segment_1.old0",
      "r_segment_2.old0", "r_segment_0.shadow.old0", "r_segment_1.shadow.old0", "r_segment_2.shadow.old0",
      "r.meta.old0", "r.desc.old0",
      // session 1: 6 records
      "x.old1", "x.meta.old1", "x.shadow.old1", "x.desc.old1", "r_segment_0.old1", "r_segment_1.old1",
      "r_segment_0.shadow.old1", "r_segment_1.shadow.old1", "r.meta.old1", "r.desc.old1"};
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
  for (int i = 0; i < 3000 && d.read("rot.txt") != "1"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
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

// A clean restart with x of another layout: each archive keeps the descriptor
// its records were written with, so session 0 still reads as 8-byte records.
TEST_CASE("ROTATION: each archive keeps its own descriptor; a restart with another layout leaves it readable",
          "[engine][rotation]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(30));
  REQUIRE(d.run(kQuery, "--no-clock -m 10") == 0);
  REQUIRE(d.run(kWideX, "--no-clock -m 7") == 0);
  CHECK(d.read("rot.txt") == "2");
  CHECK(d.read("run.err").find("another layout") == std::string::npos);  // nothing was left to continue
  REQUIRE(fs::exists(d.dir / "x.desc.old0"));
  REQUIRE(fs::exists(d.dir / "x.desc.old1"));
  CHECK(recordSizeOf(d.dir / "x.desc.old0") == 8);
  CHECK(recordSizeOf(d.dir / "x.desc.old1") == 15);
  CHECK(testing::sizeOf(d.dir / "x.old0") == 9 * 8);
  CHECK(testing::sizeOf(d.dir / "x.old1") == 6 * 15);
  CHECK(recordSizeOf(d.dir / "x.desc") == 15);
  CHECK(d.read("r.desc.old0") == d.read("r.desc.old1"));
  // The inspector's name for the archive finds its own descriptor.
  CHECK(storage::ArtifactPaths::forFile(d.dir.string(), "x.old0").desc() == (d.dir / "x.desc.old0").string());
  // Each index has the entries of its own descriptor (2 and 3 bits).
  CHECK(testing::metaRecords(storage::readMetaFile((d.dir / "x.meta.old0").string(), 2)) == 9);
  CHECK(testing::metaRecords(storage::readMetaFile((d.dir / "x.meta.old1").string(), 3)) == 6);
}

// kill -9 leaves x's files in place; the next start has x of another layout:
// they are archived whole as a session of their own (with their descriptor),
// never appended to, and the new session writes x afresh under the next
// number. r, whose layout did not change, is continued as before.
TEST_CASE("ROTATION: after kill -9 a start with another layout archives the killed session whole, with a warning",
          "[engine][rotation]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(999));
  d.write("query.rql", kQuery);
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  REQUIRE(pid > 0);
  // Clocked at 1 ms a slot: wait until x holds records, then kill before any shutdown.
  for (int i = 0; i < 3000 && (d.read("rot.txt") != "1" || testing::sizeOf(d.dir / "x") < 8 * 4); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(pid, SIGKILL);
  REQUIRE(testing::waitChild(pid) == 128 + SIGKILL);
  const off_t killed = testing::sizeOf(d.dir / "x");
  REQUIRE(killed >= 8 * 4);
  const std::string killedDesc = d.read("x.desc");

  REQUIRE(d.run(kWideX, "--no-clock -m 5") == 0);
  const std::string err = d.read("run.err");
  INFO(err);
  CHECK(err.find("warning: stream x: its files on disk were written with another layout") != std::string::npos);
  CHECK(err.find("archived whole as session 1 (") != std::string::npos);
  CHECK(err.find("x.old1") != std::string::npos);
  CHECK(err.find("stream r:") == std::string::npos);
  // Session 1 is the killed session's files as they were, with their descriptor.
  CHECK(testing::sizeOf(d.dir / "x.old1") == killed);
  CHECK(d.read("x.desc.old1") == killedDesc);
  CHECK(recordSizeOf(d.dir / "x.desc.old1") == 8);
  CHECK(fs::exists(d.dir / "x.meta.old1"));
  // The new session is number 2 (reserved: the counter says 3): x afresh, 4 records of 15 bytes.
  CHECK(d.read("rot.txt") == "3");
  CHECK(testing::sizeOf(d.dir / "x.old2") == 4 * 15);
  CHECK(recordSizeOf(d.dir / "x.desc.old2") == 15);
  CHECK(testing::metaRecords(storage::readMetaFile((d.dir / "x.meta.old2").string(), 3)) == 4);
  CHECK_FALSE(fs::exists(d.dir / "x"));
  // r kept its layout: the killed records and the new ones are session 2's.
  CHECK_FALSE(fs::exists(d.dir / "r.meta.old1"));
  CHECK(fs::exists(d.dir / "r.meta.old2"));
  CHECK(testing::metaRecords(storage::readMetaFile((d.dir / "r.meta.old2").string(), 1)) > 4);
}
