// A run killed with SIGKILL at any moment leaves artifacts that reopen with
// whole records only, and a .meta index of whole entries; one stopped closes
// every stream's files with two syncs.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "run_support.hpp"
#include "spawn_support.hpp"
#include "storage/file_io.hpp"
#include "storage/store.hpp"

TEST_CASE("SIGKILL mid-run leaves whole records", "[engine][kill]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 6; ++round) {
    testing::RunDir d;
    d.write("s.txt", testing::sequence(1, 1000));
    d.write("query.rql",
            "STORAGE '.'\n"
            "DECLARE a INTEGER, b INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\n"
            "SELECT src[0], src[1], to_double(src[0]) / 3, 'row' STREAM wide FROM src\n"
            "SELECT * STREAM win FROM src@(1,16)\n");
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (chdir(d.dir.c_str()) != 0) _exit(127);
      setenv("TMPDIR", d.dir.c_str(), 1);
      freopen("/dev/null", "w", stdout);
      execl(RDB_XRETRACTOR, RDB_XRETRACTOR, "query.rql", "--no-clock", (char*)nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 150));
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    REQUIRE(WIFSIGNALED(st));
    for (std::string name : {"wide", "win"}) {
      std::string path = (d.dir / name).string();
      if (testing::sizeOf(path + ".desc") <= 0 || testing::sizeOf(path) < 0) continue;  // killed before it opened
      const auto desc = storage::Descriptor::load(path + ".desc");
      const int rec = desc.recordSize();
      struct stat before {};
      REQUIRE(stat(path.c_str(), &before) == 0);
      auto store = storage::openStore("DEFAULT", path, rec, {0, 0}, 0);
      struct stat after {};
      REQUIRE(stat(path.c_str(), &after) == 0);
      CHECK(after.st_size % rec == 0);
      CHECK(store->count() == uint64_t(after.st_size / rec));
      CHECK(before.st_size - after.st_size < rec);
      if (store->count() > 0) {
        std::vector<uint8_t> buf(static_cast<size_t>(rec));
        CHECK(store->read(store->count() - 1, buf.data()));
      }
      storage::MetaIndex meta(path + ".meta", int(desc.entries.size()), true);
      struct stat ms {};
      REQUIRE(stat((path + ".meta").c_str(), &ms) == 0);
      CHECK((ms.st_size - 8) % storage::metaEntrySize(int(desc.entries.size())) == 0);
      CHECK(meta.records() <= store->count());  // data first, the index never ahead
    }
  }
}

// kill -9 at random moments, clocked and offline: the .meta index never counts
// more records than the data file holds (data first, index never ahead), and a
// restart, with ROTATION (appending to the crashed files) or without, leaves
// data and index agreeing record by record.
TEST_CASE("SIGKILL never leaves the .meta index ahead of the data; restarts continue cleanly",
          "[engine][kill][crash]") {
  std::mt19937 rng(11);
  int checked = 0;
  for (int round = 0; round < 16; ++round) {
    const bool offline = round % 2 == 0;
    const bool rotate = round % 4 < 2;
    INFO("round " << round << (offline ? " --no-clock" : " clocked") << (rotate ? ", restart with ROTATION" : ""));
    testing::RunDir d;
    d.write("s.txt", testing::nullEveryThird(999));
    d.write("query.rql", testing::nullQuery(false));
    std::vector<std::string> args{"query.rql", "-k"};
    if (offline) args.push_back("--no-clock");
    pid_t pid = testing::spawnXretractor(d.dir, args);
    REQUIRE(pid > 0);
    // Three rounds in four are killed at a random moment after the data files
    // appear (start-up takes 0.1 s, or more than 0.5 s under ASan); the fourth
    // at a random moment from the start, maybe before any store opened.
    if (round % 4 != 3)
      for (int waited = 0; waited < 30000 && !std::filesystem::exists(d.dir / "wide"); waited += 5)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 160));
    kill(pid, SIGKILL);
    REQUIRE(testing::waitChild(pid) == 128 + SIGKILL);

    std::map<std::string, testing::Artifact> crashed;
    for (std::string name : {"nul", "wide"}) {
      testing::Artifact a = testing::inspect(d.dir, name, name);
      crashed[name] = a;
      if (!a.exists) continue;
      ++checked;
      INFO(name << ": data holds " << a.data << " records, .meta counts " << testing::metaRecords(a.meta));
      CHECK(testing::metaRecords(a.meta) <= a.data);
    }

    // Restart: with ROTATION the crashed files are reopened and appended to.
    d.write("query.rql", testing::nullQuery(rotate));
    REQUIRE(testing::runXretractor(d.dir, {"query.rql", "-k", "--no-clock", "-m", "300"}, {}, "restart") == 0);
    for (std::string name : {"nul", "wide"}) {
      const std::string dataName = rotate ? name + ".old0" : name;
      testing::Artifact a = testing::inspect(d.dir, name, dataName);
      REQUIRE(a.exists);
      const testing::Artifact& c = crashed[name];
      const uint64_t before = rotate && c.exists ? c.data : 0;
      INFO(name << " after restart: data " << a.data << " records (" << before << " from the killed run), .meta "
                << testing::metaRecords(a.meta));
      CHECK(a.meta.trailing == 0);
      CHECK(testing::sizeOf(d.dir / dataName) % a.rec == 0);
      CHECK(a.data == before + 299);
      CHECK(testing::metaRecords(a.meta) == a.data);
      testing::checkNullBits(d.dir, a, dataName, before ? testing::metaRecords(c.meta) : 0, before);
    }
  }
  CHECK(checked > 8);
}

// A start without ROTATION begins its streams afresh; after kill -9 that
// removes the killed run's records, so the start first says which files go
// and how many records they held (docs/reliability.md).
TEST_CASE("a restart without ROTATION names the killed run's files and records before it removes them",
          "[engine][kill][restart]") {
  testing::RunDir d;
  d.write("s.txt", testing::sequence(1, 1000));
  d.write("query.rql",
          "STORAGE '.'\n"
          "DECLARE a INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\n"
          "SELECT src[0] * 2 STREAM o FROM src\n");
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "--no-clock"});
  REQUIRE(pid > 0);
  const std::string data = (d.dir / "o").string();
  for (int i = 0; i < 6000 && testing::sizeOf(data) < 4000; ++i)  // up to 30 s: a slow start on a busy machine
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  REQUIRE(WIFSIGNALED(st));
  // What the killed run left: whole records, or a partial one at the end.
  const int64_t bytes = testing::sizeOf(data);
  REQUIRE(bytes > 0);
  const std::string held = bytes % 4 == 0 ? std::to_string(bytes / 4) + " records" : std::to_string(bytes) + " bytes";
  REQUIRE(
      d.run("STORAGE '.'\nDECLARE a INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\nSELECT src[0] * 2 STREAM o FROM src\n",
            "--no-clock -m 3") == 0);
  const std::string err = d.read("run.err");
  CHECK_THAT(err, Catch::Contains("warning: stream o starts afresh: removing ./o (" + held + ") of an earlier run"));
  CHECK(testing::sizeOf(data) == 2 * 4);  // the new run's two records
}

// A stop closes every stream's files with two syncs, whatever their number: one
// syncfs of the storage directory's file system for the data, one for the
// indexes (and, under ROTATION, the archives' renames), where an fsync a file
// made the close of 5,000 streams take 40 s. Offline, clocked after SIGTERM,
// and under ROTATION, each stream's data and index are whole and agree.
TEST_CASE("the close syncs all streams' files together, two syncs for any number of streams", "[engine][close]") {
  constexpr int kStreams = 200;
  const std::string n = std::to_string(kStreams);
  testing::RunDir d;
  // Where syncfs reports no writeback errors (before Linux 5.8; overlayfs,
  // FUSE, NFS) every file is fsynced instead.
  const bool together = storage::io::FileSystemSync(d.dir.string()).usable();
  d.write("s.txt", testing::nullEveryThird(999));
  auto plan = [&](bool rotation) {
    std::string q = std::string("STORAGE '.'\n") + (rotation ? "ROTATION 'rot.txt'\n" : "") +
                    "DECLARE a INTEGER, b INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\n";
    for (int i = 1; i <= kStreams; ++i) q += "SELECT src[0], src[1] STREAM s" + std::to_string(i) + " FROM src\n";
    return q;
  };
  // After the run: the -v report, and every stream's files holding `records` (0: any, at least one).
  auto check = [&](const std::string& suffix, uint64_t records) {
    const std::string out = d.read("run.out"), err = d.read("run.err");
    const size_t at = out.find("processed ");
    INFO("report:\n" << (at == std::string::npos ? out : out.substr(at)) << "stderr:\n" << err);
    if (together) {
      CHECK_THAT(out, Catch::Contains("closed " + n + " streams with 2 syncs (" + n + " synced together"));
    } else {
      WARN("syncfs reports no writeback errors on " << d.dir << ": its files are fsynced one by one");
      CHECK_THAT(out, Catch::Contains("closed " + n + " streams with "));
    }
    CHECK(err.find("ERROR") == std::string::npos);
    for (int i = 1; i <= kStreams; ++i) {
      const std::string name = "s" + std::to_string(i);
      testing::Artifact a = testing::inspect(d.dir, name, name + suffix);
      INFO(name << suffix << ": data " << a.data << " records, .meta " << testing::metaRecords(a.meta));
      REQUIRE(a.exists);
      CHECK(a.data == (records ? records : std::max<uint64_t>(a.data, 1)));
      CHECK(testing::metaRecords(a.meta) == a.data);
      if (i == 1 || i == kStreams) testing::checkNullBits(d.dir, a, name + suffix, 0, 0);
    }
  };
  SECTION("offline") {
    d.write("query.rql", plan(false));
    REQUIRE(testing::runXretractor(d.dir, {"query.rql", "-k", "--no-clock", "-m", "100", "-v"}) == 0);
    check("", 99);
  }
  SECTION("clocked, stopped by SIGTERM") {
    d.write("query.rql", plan(false));
    pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k", "-v"});
    REQUIRE(pid > 0);
    const auto last = d.dir / ("s" + n);
    for (int waited = 0; waited < 30000 && testing::sizeOf(last) < 8 * 20; waited += 5)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill(pid, SIGTERM);
    REQUIRE(testing::waitChild(pid) == 0);
    check("", 0);
  }
  SECTION("under ROTATION") {
    d.write("query.rql", plan(true));
    REQUIRE(testing::runXretractor(d.dir, {"query.rql", "-k", "--no-clock", "-m", "100", "-v"}) == 0);
    check(".old0", 99);
  }
}
