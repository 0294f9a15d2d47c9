// A run killed with SIGKILL at any moment leaves artifacts that reopen with
// whole records only, and a .meta index of whole entries.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "run_support.hpp"
#include "spawn_support.hpp"
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
      CHECK((ms.st_size - 8) % meta.entrySize() == 0);
      CHECK(meta.records() <= store->count() + 1);
    }
  }
}

namespace {

// Source rows "i i", every third "i NULL": field b of record i is NULL exactly
// when a % 3 == 0, so every record says which NULL bits its index must hold.
std::string nullEveryThird(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += std::to_string(i) + (i % 3 ? " " + std::to_string(i) : std::string(" NULL")) + "\n";
  return s;
}

const char* kNullQuery =
    "STORAGE '.'\n"
    "%s"
    "DECLARE a INTEGER, b INTEGER STREAM src, 1/1000 TEXTFILE 's.txt'\n"
    "SELECT src[0], src[1] STREAM nul FROM src\n"
    "SELECT src[0], src[1], to_double(src[0]) / 3, 'row' STREAM wide FROM src\n";

std::string nullQuery(bool rotation) {
  char buf[512];
  snprintf(buf, sizeof buf, kNullQuery, rotation ? "ROTATION 'rot.txt'\n" : "");
  return buf;
}

struct Artifact {
  bool exists = false;
  int rec = 0, bits = 0;
  uint64_t data = 0;  // whole records in the data file
  storage::MetaFileView meta;
};

Artifact inspect(const std::filesystem::path& dir, const std::string& name, const std::string& dataName) {
  Artifact a;
  if (testing::sizeOf(dir / (name + ".desc")) <= 0 || testing::sizeOf(dir / dataName) < 0) return a;
  auto desc = storage::Descriptor::load((dir / (name + ".desc")).string());
  a.exists = true;
  a.rec = desc.recordSize();
  a.bits = int(desc.entries.size());
  a.data = uint64_t(testing::sizeOf(dir / dataName)) / uint64_t(a.rec);
  a.meta = storage::readMetaFile((dir / (dataName + ".meta")).string(), a.bits);
  if (!a.meta.exists) a.meta = storage::readMetaFile((dir / (name + ".meta")).string(), a.bits);
  return a;
}

// Every record of `dataName` carries the NULL bit its values imply, except
// records in [unindexedFrom, unindexedTo), which a crash left without an index
// entry: those must read as non-NULL (all bits clear).
void checkNullBits(const std::filesystem::path& dir, const Artifact& a, const std::string& dataName,
                   uint64_t unindexedFrom, uint64_t unindexedTo) {
  std::ifstream in(dir / dataName, std::ios::binary);
  std::vector<char> rec(static_cast<size_t>(a.rec));
  uint64_t wrong = 0, firstWrong = UINT64_MAX;
  size_t entry = 0;     // the index entry holding record i
  uint64_t entryAt = 0;  // its first record
  for (uint64_t i = 0; i < a.data; ++i) {
    in.read(rec.data(), a.rec);
    int32_t va, vb;
    memcpy(&va, rec.data(), 4);
    memcpy(&vb, rec.data() + 4, 4);
    while (entry < a.meta.entries.size() &&
           (a.meta.entries[entry].gap || i >= entryAt + a.meta.entries[entry].count)) {
      if (!a.meta.entries[entry].gap) entryAt += a.meta.entries[entry].count;
      ++entry;
    }
    const storage::MetaFileEntry* e = entry < a.meta.entries.size() ? &a.meta.entries[entry] : nullptr;
    const bool n0 = e && e->isNull(0), n1 = e && e->isNull(1);
    const bool unindexed = i >= unindexedFrom && i < unindexedTo;
    const bool ok = unindexed ? !n0 && !n1 : !n0 && n1 == (va % 3 == 0) && (n1 ? vb == 0 : vb == va);
    if (!ok && wrong++ == 0) firstWrong = i;
  }
  INFO(dataName << ": " << wrong << " records with wrong NULL bits, first at " << firstWrong << " of " << a.data);
  CHECK(wrong == 0);
}

}  // namespace

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
    d.write("s.txt", nullEveryThird(999));
    d.write("query.rql", nullQuery(false));
    std::vector<std::string> args{"query.rql", "-k"};
    if (offline) args.push_back("--no-clock");
    pid_t pid = testing::spawnXretractor(d.dir, args);
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(40 + rng() % 160));
    kill(pid, SIGKILL);
    REQUIRE(testing::waitChild(pid) == 128 + SIGKILL);

    std::map<std::string, Artifact> crashed;
    for (std::string name : {"nul", "wide"}) {
      Artifact a = inspect(d.dir, name, name);
      crashed[name] = a;
      if (!a.exists) continue;
      ++checked;
      INFO(name << ": data holds " << a.data << " records, .meta counts " << testing::metaRecords(a.meta));
      CHECK(testing::metaRecords(a.meta) <= a.data);
    }

    // Restart: with ROTATION the crashed files are reopened and appended to.
    d.write("query.rql", nullQuery(rotate));
    REQUIRE(testing::runXretractor(d.dir, {"query.rql", "-k", "--no-clock", "-m", "300"}, {}, "restart") == 0);
    for (std::string name : {"nul", "wide"}) {
      const std::string dataName = rotate ? name + ".old0" : name;
      Artifact a = inspect(d.dir, name, dataName);
      REQUIRE(a.exists);
      const Artifact& c = crashed[name];
      const uint64_t before = rotate && c.exists ? c.data : 0;
      INFO(name << " after restart: data " << a.data << " records (" << before << " from the killed run), .meta "
                << testing::metaRecords(a.meta));
      CHECK(a.meta.trailing == 0);
      CHECK(testing::sizeOf(d.dir / dataName) % a.rec == 0);
      CHECK(a.data == before + 299);
      CHECK(testing::metaRecords(a.meta) == a.data);
      checkNullBits(d.dir, a, dataName, before ? testing::metaRecords(c.meta) : 0, before);
    }
  }
  CHECK(checked > 8);
}
