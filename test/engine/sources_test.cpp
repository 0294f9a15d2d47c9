// Declared sources that are missing, of the wrong kind, or FIFOs with no or a
// stalled writer: a clear error at start, or NULL records at the slot rate;
// never a runaway run and never a frozen engine.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "spawn_support.hpp"

using namespace std::chrono_literals;

namespace {

// Waits up to `limit` for the child; kills it and returns -1 when it is still running.
int waitFor(pid_t pid, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  int st = 0;
  while (std::chrono::steady_clock::now() < until) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    std::this_thread::sleep_for(10ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return -1;
}

const char* kTwoInts = "DECLARE a INTEGER, b INTEGER STREAM s, 1/10 ";

}  // namespace

TEST_CASE("a missing BINFILE or TEXTFILE is an error at start, naming the file", "[engine][sources]") {
  for (std::string kind : {"BINFILE 'nothere.dat'", "TEXTFILE 'nothere.txt'", "FILE 'nothere.dat'"}) {
    INFO(kind);
    testing::RunDir d;
    d.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + kind + "\nSELECT * STREAM q FROM s\n");
    pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "--no-clock", "--until-eof", "-k"});
    int rc = waitFor(pid, 10s);
    CHECK(rc == 1);
    CHECK_THAT(d.read("run.err"),
               Catch::Contains("FATAL") && Catch::Contains("nothere") && Catch::Contains("cannot be opened"));
    CHECK(testing::sizeOf(d.dir / "q") <= 0);  // nothing was produced
  }
}

TEST_CASE("a FIFO declared as TEXTFILE or BINFILE is refused at start instead of blocking", "[engine][sources]") {
  for (std::string kind : {"TEXTFILE 'f.txt'", "BINFILE 'f'"}) {
    INFO(kind);
    testing::RunDir d;
    const std::string fifo = kind.find("txt") != std::string::npos ? "f.txt" : "f";
    REQUIRE(mkfifo((d.dir / fifo).c_str(), 0600) == 0);
    d.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + kind + "\nSELECT * STREAM q FROM s\n");
    pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-m", "5", "-k"});
    CHECK(waitFor(pid, 10s) == 1);
    CHECK_THAT(d.read("run.err"), Catch::Contains("is not a regular file"));
  }
}

TEST_CASE("--until-eof stops on a missing DEVICE; without it the DEVICE gives NULL records at the slot rate",
          "[engine][sources]") {
  testing::RunDir d;
  d.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'nodev'\nSELECT * STREAM q FROM s\n");
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "--no-clock", "--until-eof", "-k"});
  CHECK(waitFor(pid, 10s) == 0);
  CHECK(testing::sizeOf(d.dir / "q") <= 8);  // at most the zero step's record
  // Clocked, no --until-eof: one NULL record per slot (5 slots in about half a second), then the limit.
  testing::RunDir c;
  c.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'nodev'\nSELECT * STREAM q FROM s\n");
  const auto t0 = std::chrono::steady_clock::now();
  pid = testing::spawnXretractor(c.dir, {"query.rql", "-m", "6", "-k"});
  CHECK(waitFor(pid, 10s) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 >= 400ms);  // paced by the clock, not a busy loop
  CHECK(testing::sizeOf(c.dir / "q") == 5 * 8);
  CHECK_THAT(c.read("run.err"), Catch::Contains("nodev"));
}

TEST_CASE("a FIFO with no writer, then a stalled writer, never freezes the engine", "[engine][sources][fifo]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'pipe'\nSELECT * STREAM q FROM s\n");
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  // No writer: the engine runs and serves clients.
  std::this_thread::sleep_for(600ms);
  std::string cmd =
      "cd '" + d.dir.string() + "' && TMPDIR='" + d.dir.string() + "' timeout 5 '" RDB_XQRY "' -d >xqry.out 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK_THAT(d.read("xqry.out"), Catch::Contains("q"));
  // A writer that sends half a record and stalls: NULL records go on, the half is kept.
  int w = ::open((d.dir / "pipe").c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(w >= 0);
  int32_t rec[2] = {7, 8};
  REQUIRE(::write(w, rec, 4) == 4);
  std::this_thread::sleep_for(400ms);
  REQUIRE(::write(w, rec + 1, 4) == 4);
  std::this_thread::sleep_for(400ms);
  CHECK(std::system(cmd.c_str()) == 0);
  // SIGTERM stops it within a second, writer still attached.
  const auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 1000ms) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 1000ms);
  ::close(w);
  // The completed record is in q exactly once, between NULL records.
  auto recs = d.records("q", 2);
  int found = 0;
  for (auto& r : recs)
    if (r[0] == 7 && r[1] == 8) ++found;
  CHECK(found == 1);
  CHECK(recs.size() >= 8);
}

TEST_CASE("offline, a missing DEVICE is retried at most ten times a second, never in a busy loop",
          "[engine][sources]") {
  testing::RunDir d;
  d.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'nodev'\nSELECT * STREAM q FROM s\n");
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "--no-clock", "-k"});
  std::this_thread::sleep_for(1500ms);
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 5s) == 0);
  // About 15 NULL records in 1.5 s; a busy loop writes millions.
  CHECK(testing::sizeOf(d.dir / "q") <= 40 * 8);
}
