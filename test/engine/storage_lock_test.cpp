// One engine per storage directory: a second xretractor on the same storage
// (another instance name, another TMPDIR) is refused before it touches any
// file; the lock file is never followed through a symbolic link.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <map>
#include <thread>

#include "run_support.hpp"
#include "spawn_support.hpp"
#include "storage/lock.hpp"

namespace {

// Waits until `file` in the run directory has at least `bytes` bytes.
bool waitForSize(const testing::RunDir& d, const std::string& file, off_t bytes, int ms = 5000) {
  for (int i = 0; i < ms / 10; ++i) {
    if (testing::sizeOf(d.dir / file) >= bytes) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

struct Identity {
  ino_t ino = 0;
  off_t size = -1;
};
Identity identity(const std::filesystem::path& p) {
  struct stat st {};
  if (stat(p.c_str(), &st) != 0) return {};
  return {st.st_ino, st.st_size};
}

}  // namespace

TEST_CASE("a second engine on the same storage directory is refused before it touches a file",
          "[engine][storagelock]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(999));
  d.write("query.rql", testing::nullQuery(false, "1/200"));
  pid_t first = testing::spawnXretractor(d.dir, {"query.rql", "-k"}, {}, "first");
  REQUIRE(first > 0);
  REQUIRE(waitForSize(d, "nul", 8 * 10));  // running: records arrive
  const std::string files[] = {"nul", "nul.desc", "nul.meta", "wide", "wide.desc", "wide.meta"};
  std::map<std::string, Identity> was;
  for (auto& f : files) was[f] = identity(d.dir / f);

  SECTION("another instance name") {
    int rc = testing::runXretractor(d.dir, {"query.rql", "--name", "other", "-k", "-m", "5"}, {}, "second");
    const std::string err = d.read("second.err");
    INFO("second engine: exit " << rc << ", stderr:\n" << err);
    CHECK(rc != 0);
    CHECK(err.find("in use by another engine") != std::string::npos);
  }
  SECTION("another TMPDIR, the default instance name") {
    std::filesystem::create_directory(d.dir / "elsewhere");
    testing::SpawnOptions o;
    o.tmpdir = (d.dir / "elsewhere").string();
    int rc = testing::runXretractor(d.dir, {"query.rql", "-k", "-m", "5", "--no-clock"}, o, "second");
    const std::string err = d.read("second.err");
    INFO("second engine: exit " << rc << ", stderr:\n" << err);
    CHECK(rc != 0);
    CHECK(err.find("in use by another engine") != std::string::npos);
  }
  // The first engine's files are the same files, and they only grew.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (auto& f : files) {
    Identity now = identity(d.dir / f);
    INFO(f << ": inode " << was[f].ino << " -> " << now.ino << ", size " << was[f].size << " -> " << now.size);
    CHECK(now.ino == was[f].ino);
    CHECK(now.size >= was[f].size);
  }
  kill(first, SIGTERM);
  CHECK(testing::waitChild(first) == 0);
  for (std::string name : {"nul", "wide"}) {
    testing::Artifact a = testing::inspect(d.dir, name, name);
    REQUIRE(a.exists);
    CHECK(testing::metaRecords(a.meta) == a.data);
    testing::checkNullBits(d.dir, a, name, 0, 0);
  }
  // Released at exit: the next engine runs.
  CHECK(testing::sizeOf(d.dir / storage::kStorageLockName) < 0);
  CHECK(testing::runXretractor(d.dir, {"query.rql", "-k", "-m", "5", "--no-clock"}, {}, "third") == 0);
}

TEST_CASE("the storage lock is never taken through a symbolic link", "[engine][storagelock]") {
  testing::RunDir d;
  d.write("s.txt", testing::nullEveryThird(30));
  d.write("query.rql", testing::nullQuery(false));
  d.write("target", "keep\n");
  std::filesystem::create_symlink(d.dir / "target", d.dir / storage::kStorageLockName);
  int rc = testing::runXretractor(d.dir, {"query.rql", "-k", "-m", "5", "--no-clock"});
  const std::string err = d.read("run.err");
  INFO("exit " << rc << ", stderr:\n" << err);
  CHECK(rc != 0);
  CHECK(err.find("symbolic link") != std::string::npos);
  CHECK(d.read("target") == "keep\n");
  CHECK(testing::sizeOf(d.dir / "nul") < 0);  // refused before any artifact
}
