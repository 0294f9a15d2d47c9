// A full disk, for real: a file-size limit (RLIMIT_FSIZE with SIGXFSZ
// ignored, set in the child before exec) makes writes fail with EFBIG, the
// same write-failure path as ENOSPC, and needs no root.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "run_support.hpp"
#include "spawn_support.hpp"
#include "storage/store.hpp"

namespace {

// Every artifact holds whole records / whole entries, and the index never
// counts more records than the data.
void checkWhole(const testing::RunDir& d, const std::string& name) {
  INFO("artifact " << name);
  testing::Artifact a = testing::inspect(d.dir, name, name);
  REQUIRE(a.exists);
  const off_t size = testing::sizeOf(d.dir / name);
  const off_t msize = testing::sizeOf(d.dir / (name + ".meta"));
  INFO("data " << size << " bytes (" << a.rec << " per record), .meta " << msize << " bytes, "
               << testing::metaRecords(a.meta) << " records indexed");
  CHECK(size % a.rec == 0);
  CHECK(msize >= 8);
  CHECK((msize - 8) % storage::metaEntrySize(a.bits) == 0);
  CHECK(a.meta.trailing == 0);
  CHECK(testing::metaRecords(a.meta) <= a.data);
  CHECK(testing::sizeOf(d.dir / (name + ".meta.tmp")) < 0);
}

void diskFullRun(bool offline, long limit, const std::string& slots = "") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(999));
  d.write("query.rql", testing::nullQuery(false));
  std::vector<std::string> args{"query.rql", "-k"};
  if (offline) args.push_back("--no-clock");
  if (!slots.empty()) args.insert(args.end(), {"-m", slots});
  testing::SpawnOptions o;
  o.fileSizeLimit = limit;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = testing::spawnXretractor(d.dir, args, o);
  REQUIRE(pid > 0);
  // A run that does not stop by itself within 60 s is killed (and fails).
  int rc = -1;
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      break;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
      kill(pid, SIGKILL);
      testing::waitChild(pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string err = d.read("run.err");
  INFO((offline ? "--no-clock" : "clocked") << ", limit " << limit << " bytes; exit " << rc << "; stderr:\n" << err);
  CHECK(rc == 1);  // exit non-zero, not a signal (no abort from a destructor)
  CHECK(err.find("terminate called") == std::string::npos);
  CHECK(err.find("FATAL: ") != std::string::npos);
  CHECK(err.find("File too large") != std::string::npos);
  // The message names the file that could not be written.
  const bool named = err.find("./nul") != std::string::npos || err.find("./wide") != std::string::npos;
  CHECK(named);
  for (std::string name : {"nul", "wide"}) checkWhole(d, name);

  // A restart with ROTATION reopens the files the failed run left and appends.
  testing::Artifact before[2] = {testing::inspect(d.dir, "nul", "nul"), testing::inspect(d.dir, "wide", "wide")};
  d.write("query.rql", testing::nullQuery(true));
  REQUIRE(testing::runXretractor(d.dir, {"query.rql", "-k", "--no-clock", "-m", "100"}, {}, "restart") == 0);
  int k = 0;
  for (std::string name : {"nul", "wide"}) {
    const testing::Artifact& b = before[k++];
    testing::Artifact a = testing::inspect(d.dir, name, name + ".old0");
    REQUIRE(a.exists);
    CHECK(a.data == b.data + 99);
    CHECK(testing::metaRecords(a.meta) == a.data);
    testing::checkNullBits(d.dir, a, name + ".old0", testing::metaRecords(b.meta), b.data);
  }
}

}  // namespace

// The data file of `wide` (about 28 bytes a record) reaches the limit first
// in one run, the `.meta` of `nul` (18 bytes for two records in three) in
// another; offline, the last write happens at shutdown, from the buffer.
TEST_CASE("a full disk is a FATAL message, exit 1 and whole artifacts", "[engine][diskfull]") {
  SECTION("offline, data file full mid-run") { diskFullRun(true, 100003); }
  SECTION("offline, full at shutdown") { diskFullRun(true, 20001, "2001"); }
  SECTION("clocked") { diskFullRun(false, 2501); }
}

// Full before the first record: a descriptor that cannot be written is a
// FATAL naming it, and no torn `.desc` (nor its `.tmp`) is left behind.
TEST_CASE("a full disk while the descriptors are written leaves no torn .desc", "[engine][diskfull]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(30));
  // Long field names: src.desc (about 270 bytes) does not fit under the limit,
  // the instance lock's few lines in TMPDIR do.
  const std::string a(60, 'a'), b(60, 'b'), c(60, 'c'), e(60, 'e');
  d.write("query.rql", "STORAGE '.'\nDECLARE " + a + " INTEGER, " + b + " INTEGER, " + c + " INTEGER, " + e +
                           " INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\nSELECT src[0] STREAM nul FROM src\n");
  testing::SpawnOptions o;
  o.fileSizeLimit = 200;
  const int rc = testing::runXretractor(d.dir, {"query.rql", "-k", "--no-clock", "-m", "5"}, o);
  const std::string err = d.read("run.err");
  INFO("exit " << rc << ", stderr:\n" << err);
  CHECK(rc == 1);
  CHECK(err.find("terminate called") == std::string::npos);
  CHECK(err.find("FATAL: ") != std::string::npos);
  CHECK(err.find(".desc") != std::string::npos);
  for (auto& e : std::filesystem::directory_iterator(d.dir)) {
    const std::string n = e.path().filename().string();
    INFO(n);
    CHECK(n.find(".tmp") == std::string::npos);
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".desc") == 0)
      CHECK_NOTHROW(storage::Descriptor::load(e.path().string()));
  }
}

// A rule's dump file that hits the full disk: FATAL naming it, exit 1, and the
// dump holds whole records (a record size of 12 bytes never divides the limit).
TEST_CASE("a full disk while a rule dumps is a FATAL message and a dump of whole records",
          "[engine][diskfull][rules]") {
  testing::RunDir d;
  d.write("s.txt", testing::sequence(1, 3000));
  d.write("query.rql",
          "STORAGE '.'\n"
          "DECLARE x INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\n"
          "SELECT src[0], src[0] * 2, src[0] * 3 STREAM q FROM src\n"
          "RULE big ON q WHEN q[0] = 1 DO DUMP -300 TO 300\n");
  testing::SpawnOptions o;
  o.fileSizeLimit = 4000;  // the dump (300 zero records at once, then one a record) is first to reach it
  const int rc = testing::runXretractor(d.dir, {"query.rql", "-k", "--no-clock", "-m", "1000"}, o);
  const std::string err = d.read("run.err");
  INFO("exit " << rc << ", stderr:\n" << err);
  CHECK(rc == 1);
  CHECK(err.find("FATAL: ") != std::string::npos);
  CHECK(err.find("q_big_dump.tmp") != std::string::npos);
  const off_t dump = testing::sizeOf(d.dir / "q_big_dump.tmp");
  CHECK(dump > 0);
  CHECK(dump % 12 == 0);
  CHECK(dump <= 4000);
}
