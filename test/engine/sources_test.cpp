// Declared sources that are missing, of the wrong kind, or FIFOs with no or a
// stalled writer: a clear error at start, or NULL records at the slot rate;
// never a runaway run and never a frozen engine.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "../eventually.hpp"
#include "spawn_support.hpp"

using namespace std::chrono_literals;
using testing::eventually;

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

// `xqry ARGS` against the engine serving in `d` (killed after 20 s), its output in `out`; the exit status.
int xqry(const testing::RunDir& d, const std::string& args, const std::string& out = "xqry.out") {
  const std::string cmd = "cd '" + d.dir.string() + "' && TMPDIR='" + d.dir.string() +
                          "' timeout -s KILL 20 '" RDB_XQRY "' " + args + " >'" + out + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The engine in `d` has taken its instance lock (its signal handlers are in place by then).
bool locked(const testing::RunDir& d) { return d.read("xretractor_service.lock").rfind("PID:", 0) == 0; }

// Records the DEVICE source `stream` of the engine in `d` has read (xqry -t); -1 when it does not answer.
long deviceReads(const testing::RunDir& d, const std::string& stream) {
  if (xqry(d, "-t " + stream, "reads.out") != 0) return -1;
  const std::string text = d.read("reads.out");
  const size_t at = text.find("\n  reads: ");
  return at == std::string::npos ? -1 : std::stol(text.substr(at + 10));
}

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
  CHECK(waitFor(pid, 60s) == 0);
  CHECK(testing::sizeOf(d.dir / "q") <= 8);  // at most the zero step's record
  // Clocked, no --until-eof: one NULL record per slot (5 slots in about half a second), then the limit.
  testing::RunDir c;
  c.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'nodev'\nSELECT * STREAM q FROM s\n");
  const auto t0 = std::chrono::steady_clock::now();
  pid = testing::spawnXretractor(c.dir, {"query.rql", "-m", "6", "-k"});
  CHECK(waitFor(pid, 60s) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 >= 400ms);  // paced by the clock, not a busy loop
  CHECK(testing::sizeOf(c.dir / "q") == 5 * 8);
  CHECK_THAT(c.read("run.err"), Catch::Contains("nodev"));
}

TEST_CASE("a FIFO with no writer, then a stalled writer, never freezes the engine", "[engine][sources][fifo]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'pipe'\nSELECT * STREAM q FROM s\n");
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  // No writer: the engine runs and serves clients (however slowly it starts).
  CHECK(eventually([&] { return xqry(d, "-d") == 0; }));
  CHECK_THAT(d.read("xqry.out"), Catch::Contains("q"));
  // A writer that sends half a record and stalls: NULL records go on (four
  // slots' worth, stored as each slot ends), the half is kept.
  int w = ::open((d.dir / "pipe").c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(w >= 0);
  int32_t rec[2] = {7, 8};
  REQUIRE(::write(w, rec, 4) == 4);
  const off_t stalled = std::max<off_t>(testing::sizeOf(d.dir / "q"), 0);
  CHECK(eventually([&] { return testing::sizeOf(d.dir / "q") >= stalled + 4 * 8; }));
  REQUIRE(::write(w, rec + 1, 4) == 4);
  // The completed record comes with the next slot; NULL records follow it.
  auto completedThenMore = [&] {
    auto recs = d.records("q", 2);
    for (size_t i = 0; i < recs.size(); ++i)
      if (recs[i][0] == 7 && recs[i][1] == 8) return recs.size() >= i + 4;
    return false;
  };
  CHECK(eventually(completedThenMore));
  CHECK(xqry(d, "-d") == 0);
  // SIGTERM stops it promptly, writer still attached: a read blocked on the
  // writer would never end; ten seconds leave room for a busy machine.
  const auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 30s) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
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
  CHECK(eventually([&] { return locked(d); }));  // a slow start is not counted, and SIGTERM is handled
  std::this_thread::sleep_for(1500ms);
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 30s) == 0);
  // About 15 NULL records in 1.5 s; a busy loop writes millions.
  CHECK(testing::sizeOf(d.dir / "q") <= 40 * 8);
}

// ------------------------------------------------------------ DEVICE TIMEOUT
namespace {

struct WriterPlan {
  int first = 1, count = 0;            // records {v, -v}, v = first, first+1, ...
  std::chrono::milliseconds period{};  // between records
  bool halfAtEnd = false;              // then half a record, and the writer goes away
  bool stayOpen = true;                // keep the FIFO open (silent) until killed
  int prefilled = 0;                   // records written at once, before the paced ones
};

// A writer process on the FIFO `fifo`. Opened read-write so that it never
// waits for the reader and can put the first records in before xretractor runs.
pid_t startWriter(const std::filesystem::path& fifo, const WriterPlan& w) {
  int fd = ::open(fifo.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  int v = w.first;
  for (int i = 0; i < w.prefilled; ++i, ++v) {
    int32_t rec[2] = {v, -v};
    REQUIRE(::write(fd, rec, 8) == 8);
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid != 0) {
    ::close(fd);
    return pid;
  }
  auto at = std::chrono::steady_clock::now();
  for (int i = w.prefilled; i < w.count; ++i, ++v) {
    at += w.period;
    std::this_thread::sleep_until(at);
    int32_t rec[2] = {v, -v};
    if (::write(fd, rec, 8) != 8) _exit(1);
  }
  if (w.halfAtEnd) {
    int32_t half = 999;
    if (::write(fd, &half, 4) != 4) _exit(1);
    std::this_thread::sleep_for(100ms);
    ::close(fd);
    _exit(0);
  }
  if (w.stayOpen)
    for (;;) pause();
  _exit(0);
}

// Records {v, -v}, v = first, first+1, ..., in one write: a reader finds all or none.
void sendAtOnce(const std::filesystem::path& fifo, int first, int count) {
  std::vector<int32_t> recs;
  for (int v = first; v < first + count; ++v) recs.insert(recs.end(), {v, -v});
  int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(fd >= 0);
  const auto bytes = ssize_t(recs.size() * sizeof(int32_t));
  CHECK(::write(fd, recs.data(), size_t(bytes)) == bytes);
  ::close(fd);
}

void stopWriter(pid_t pid) {
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
}

int nullRecords(const std::vector<std::vector<int32_t>>& recs) {
  int n = 0;
  for (auto& r : recs) n += r[0] == 0 && r[1] == 0;
  return n;
}

}  // namespace

TEST_CASE("DEVICE TIMEOUT: a writer faster than the interval gives every slot its record", "[engine][sources][fifo]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql",
          "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'pipe' TIMEOUT 0.09\nSELECT * STREAM q FROM s\n");
  // A record every 80 ms while the slots come every 100 ms: each slot's record
  // arrives within its deadline (or is already there). The three sent ahead
  // keep the writer ahead though a busy machine wakes it late now and then.
  pid_t w = startWriter(d.dir / "pipe", {.count = 40, .period = 80ms, .prefilled = 3});
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k", "-v", "-m", "21"});
  const int rc = waitFor(pid, 60s);
  stopWriter(w);
  REQUIRE(rc == 0);
  auto recs = d.records("q", 2);
  REQUIRE(recs.size() == 20);
  // Consecutive values from the first records on: no slot went without.
  CHECK(recs[0][0] >= 1);
  CHECK(recs[0][0] <= 2);
  for (size_t i = 0; i < recs.size(); ++i) {
    CHECK(recs[i][0] == recs[0][0] + int32_t(i));
    CHECK(recs[i][1] == -recs[i][0]);
  }
  CHECK_THAT(d.read("run.out"), Catch::Contains("device: s 21 reads, 0 misses"));
}

TEST_CASE("DEVICE TIMEOUT: a writer that pauses gives NULL records for the slots past their deadline",
          "[engine][sources][fifo]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("t.txt", testing::sequence(1, 7));
  d.write("query.rql", "STORAGE '.'\n" + std::string(kTwoInts) +
                           "DEVICE 'pipe' TIMEOUT 1/20\nSELECT * STREAM q FROM s\n"
                           "DECLARE x INTEGER STREAM t, 1/10 TEXTFILE 't.txt'\nSELECT * STREAM qt FROM t\n");
  // 10 records, a pause (still connected) until at least three slots have
  // passed their deadline, 10 more; then silence. Each part is in the FIFO at
  // once: however late a busy machine runs a slot, only the pause can leave
  // one without its record.
  pid_t w = startWriter(d.dir / "pipe", {.count = 10, .prefilled = 10});
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k", "-v"});
  // Slots stored after the record with value `v` (clocked runs store every slot as it ends); -1: not there yet.
  auto after = [&](int32_t v) {
    auto recs = d.records("q", 2);
    for (size_t i = 0; i < recs.size(); ++i)
      if (recs[i][0] == v) return long(recs.size() - i - 1);
    return -1L;
  };
  const bool paused = eventually([&] { return after(10) >= 3; });
  CHECK(paused);
  if (paused) {
    sendAtOnce(d.dir / "pipe", 11, 10);
    CHECK(eventually([&] { return after(20) >= 3; }));
  }
  CHECK(xqry(d, "-t s", "detail.out") == 0);
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 30s) == 0);
  stopWriter(w);
  auto recs = d.records("q", 2);
  REQUIRE(recs.size() >= 25);
  // Every record the writer sent arrives once and in order, with NULL records
  // only in the pause (and after the writer fell silent).
  std::vector<int32_t> values;
  size_t last = 0, pauseFrom = 0, pauseTo = 0;
  for (size_t i = 0; i < recs.size(); ++i)
    if (recs[i][0] != 0) {
      values.push_back(recs[i][0]);
      CHECK(recs[i][1] == -recs[i][0]);
      last = i;
      if (recs[i][0] == 10) pauseFrom = i + 1;
      if (recs[i][0] == 11) pauseTo = i;
    }
  REQUIRE(values.size() == 20);
  for (size_t i = 0; i < values.size(); ++i) CHECK(values[i] == int32_t(i + 1));
  const int inPause = nullRecords({recs.begin() + long(pauseFrom), recs.begin() + long(pauseTo)});
  CHECK(inPause >= 3);
  CHECK(nullRecords({recs.begin(), recs.begin() + long(last)}) == inPause);
  // The misses counted are the NULL records of s (q may not hold s's newest).
  const int total = nullRecords(recs);
  const std::string out = d.read("run.out");
  const auto at = out.find("device: s 20 reads, ");
  REQUIRE(at != std::string::npos);
  const int misses = std::stoi(out.substr(at + 20));
  CHECK(misses >= total);
  CHECK(misses <= total + 1);
  CHECK_THAT(d.read("detail.out"), Catch::Contains("misses"));
  // The text stream in the same plan kept every slot: 1..7 over and over.
  auto qt = d.ints("qt");
  REQUIRE(qt.size() >= recs.size() - 1);
  for (size_t i = 0; i < qt.size(); ++i) CHECK(qt[i] == int32_t(i % 7 + 1));
}

TEST_CASE("DEVICE TIMEOUT: a record cut off by the writer going away is dropped", "[engine][sources][fifo]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql",
          "STORAGE '.'\n" + std::string(kTwoInts) + "DEVICE 'pipe' TIMEOUT 0.09\nSELECT * STREAM q FROM s\n");
  // The writer starts once the engine serves from its run loop (its FIFO is
  // open by then; the lock comes earlier): a writer that closed before a slow
  // start (a sanitizer build) would take its unread records with it. Its five
  // records are in the FIFO at once (no slot can miss one, however busy the
  // machine), then half a record, then it goes.
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  CHECK(eventually([&] { return xqry(d, "-d") == 0; }));
  pid_t w = startWriter(d.dir / "pipe", {.count = 5, .halfAtEnd = true, .prefilled = 5});
  // The run goes on until three slots after the last whole record are stored.
  CHECK(eventually([&] {
    auto recs = d.records("q", 2);
    for (size_t i = 0; i < recs.size(); ++i)
      if (recs[i][0] == 5) return recs.size() >= i + 4;
    return false;
  }));
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 30s) == 0);
  stopWriter(w);
  auto recs = d.records("q", 2);
  REQUIRE(recs.size() >= 8);
  // The whole records, then NULL only: the half record (999) never shows.
  // A slow start (a sanitizer build on a busy machine) may miss the first slots.
  size_t i = 0;
  while (i < recs.size() && recs[i][0] == 0) ++i;
  const size_t first = i;
  while (i < recs.size() && recs[i][0] != 0) {
    CHECK(recs[i][0] == recs[first][0] + int32_t(i - first));
    ++i;
  }
  REQUIRE(i - first >= 4);
  CHECK(recs[i - 1][0] == 5);
  for (; i < recs.size(); ++i) {
    CHECK(recs[i][0] == 0);
    CHECK(recs[i][1] == 0);
  }
}

TEST_CASE("DEVICE TIMEOUT: SIGTERM during a long wait on a silent writer ends the run promptly",
          "[engine][sources][fifo]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql",
          "STORAGE '.'\nDECLARE a INTEGER, b INTEGER STREAM s, 1 DEVICE 'pipe' TIMEOUT 30\n"
          "SELECT * STREAM q FROM s\n");
  pid_t w = startWriter(d.dir / "pipe", {.count = 1, .prefilled = 1});
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  // Record 1 read: the engine runs (however slowly it started) and handles SIGTERM.
  CHECK(eventually([&] { return deviceReads(d, "s") >= 1; }));
  std::this_thread::sleep_for(1500ms);  // slot 1 (at 1 s) now waits up to 31 s
  const auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 30s) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);  // not the 30 s wait (a busy machine is slower to exit)
  stopWriter(w);
  auto recs = d.records("q", 2);
  REQUIRE(recs.size() >= 1);
  CHECK(recs[0][0] == 1);
}

TEST_CASE("DEVICE TIMEOUT is refused elsewhere, and HOLD or DISPOSABLE on a DEVICE, with the place",
          "[engine][sources]") {
  testing::RunDir d;
  d.write("t.txt", "1\n");
  CHECK(d.run("STORAGE '.'\nDECLARE a INTEGER STREAM s, 1 TEXTFILE 't.txt' TIMEOUT 1\nSELECT * STREAM q FROM s\n",
              "-c") != 0);
  CHECK_THAT(d.read("run.err"), Catch::Contains("query.rql:2:") && Catch::Contains("TIMEOUT"));
  CHECK(d.run("STORAGE '.'\nDECLARE a INTEGER STREAM s, 1 DEVICE 'p' HOLD\nSELECT * STREAM q FROM s\n", "-c") != 0);
  CHECK_THAT(d.read("run.err"), Catch::Contains("query.rql:2:") && Catch::Contains("HOLD"));
  CHECK(d.run("STORAGE '.'\nDECLARE a INTEGER STREAM s, 1 DEVICE 'p' TIMEOUT 1/4 ONESHOT\nSELECT * STREAM q FROM s\n",
              "-c") == 0);
}

// ------------------------------------------------------------ HOLD
TEST_CASE(
    "HOLD: a consumer from the start sees record 0 as zeros, then the file from its start; windows do not "
    "release it",
    "[engine][sources][hold]") {
  testing::RunDir d;
  d.write("data.txt", testing::sequence(30, 16));
  REQUIRE(d.run("STORAGE '.'\nDECLARE a INTEGER STREAM core, 1/10 FILE 'data.txt' HOLD\n"
                "SELECT core[0] + 1 STREAM ping FROM core\n",
                "-f -m 8") == 0);
  // + 1: a zero record gives 1, a NULL one would give NULL (stored as 0).
  auto ping = d.ints("ping");
  REQUIRE(ping.size() >= 5);
  CHECK(ping[0] == 1);
  for (size_t i = 1; i < ping.size(); ++i) CHECK(ping[i] == int32_t(30 + i));
  // Only a window reads it: it stays held, every record zero (and not NULL).
  testing::RunDir w;
  w.write("data.txt", testing::sequence(30, 16));
  REQUIRE(w.run("STORAGE '.'\nDECLARE a INTEGER STREAM core, 1/10 FILE 'data.txt' HOLD\n"
                "SELECT win[0] + 1, win[1] + 1 STREAM win FROM core@(1,2)\n",
                "-f -m 8") == 0);
  auto win = w.ints("win");
  REQUIRE(win.size() >= 4);
  for (auto v : win) CHECK(v == 1);
}

TEST_CASE("HOLD: a consumer attached ad hoc to a running instance releases it, the file is read from its start",
          "[engine][sources][hold]") {
  testing::RunDir d;
  d.write("data.txt", testing::sequence(30, 16));
  d.write("query.rql",
          "STORAGE '.'\nDECLARE a INTEGER STREAM core, 1/10 FILE 'data.txt' HOLD\n"
          "SELECT * STREAM win FROM core@(1,2)\n");
  pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  // core has read nothing but zeros for a while: eight windows of them stored.
  CHECK(eventually([&] { return testing::sizeOf(d.dir / "win") >= 8 * 8; }));
  CHECK(xqry(d, "-a \"SELECT * STREAM ping FROM core\"", "adhoc.out") == 0);
  // Zeros until it joined, then 30, 31, ... from the file's first record.
  auto joined = [&] {
    auto ping = d.ints("ping");
    size_t i = 0;
    while (i < ping.size() && ping[i] == 0) ++i;
    return ping.size() - i;
  };
  CHECK(eventually([&] { return joined() >= 4; }));
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 30s) == 0);
  auto ping = d.ints("ping");
  size_t i = 0;
  while (i < ping.size() && ping[i] == 0) ++i;
  REQUIRE(ping.size() - i >= 4);
  for (size_t k = i; k < ping.size(); ++k) CHECK(ping[k] == int32_t(30 + (k - i) % 16));
}
