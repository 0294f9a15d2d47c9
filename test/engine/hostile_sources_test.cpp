// Sources under hostile conditions: an offline FIFO with no writer, a DEVICE
// that is a directory, a TEXTFILE far larger than memory should hold, and a
// text file that grows or is cut while the engine reads it.
#include <catch2/catch.hpp>

#include <sys/ioctl.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include "../eventually.hpp"
#include "spawn_support.hpp"

using namespace std::chrono_literals;
using testing::eventually;

namespace {

using Clock = std::chrono::steady_clock;

// Waits up to `limit` for the child (its peak RSS in KiB into `maxRssKib`);
// kills it and returns -1 when it is still running.
int waitFor(pid_t pid, std::chrono::milliseconds limit, long* maxRssKib = nullptr) {
  const auto until = Clock::now() + limit;
  int st = 0;
  struct rusage ru {};
  for (;;) {
    const pid_t r = wait4(pid, &st, Clock::now() < until ? WNOHANG : 0, &ru);
    if (r == pid) break;
    if (Clock::now() >= until) {
      kill(pid, SIGKILL);
      wait4(pid, &st, 0, &ru);
      return -1;
    }
    std::this_thread::sleep_for(10ms);
  }
  if (maxRssKib) *maxRssKib = ru.ru_maxrss;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// Writes records of two INTEGERs to the FIFO as one writer, then closes it.
void writeRecords(const std::filesystem::path& fifo, std::initializer_list<int32_t> values) {
  const int w = ::open(fifo.c_str(), O_WRONLY);  // blocks until the engine reads: it has the FIFO open
  REQUIRE(w >= 0);
  std::vector<int32_t> v(values);
  REQUIRE(::write(w, v.data(), v.size() * 4) == ssize_t(v.size() * 4));
  // Closed once the engine has read every byte (the last record's slot runs as it is read).
  CHECK(eventually([&] {
    int unread = -1;
    return ioctl(w, FIONREAD, &unread) == 0 && unread == 0;
  }));
  ::close(w);
}

bool contains(const std::vector<int32_t>& v, int32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

TEST_CASE("offline, a FIFO with no writer is waited for: no record is made up, --until-eof ends when it leaves",
          "[engine][sources][fifo][offline]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql",
          "STORAGE '.'\nDECLARE a INTEGER, b INTEGER STREAM s, 1/10 DEVICE 'pipe'\nSELECT * STREAM q FROM s\n");
  const pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "--no-clock", "--until-eof"});
  REQUIRE(eventually([&] { return testing::sizeOf(d.dir / "q.desc") > 0; }));
  // No writer for a while: a run that makes NULL records up writes thousands meanwhile.
  std::this_thread::sleep_for(300ms);
  writeRecords(d.dir / "pipe", {11, 12, 13, 14, 15, 16});
  CHECK(waitFor(pid, 60s) == 0);  // the writer left: the run ends by itself
  const auto recs = d.records("q", 2);
  INFO(recs.size() << " records");
  CHECK(recs.size() <= 5);  // the zero step, three records, the slot that found the end
  const std::vector<std::vector<int32_t>> want{{11, 12}, {13, 14}, {15, 16}};
  CHECK(std::search(recs.begin(), recs.end(), want.begin(), want.end()) != recs.end());
}

TEST_CASE("offline, a FIFO whose writer leaves and another comes: their records follow each other, no NULL between",
          "[engine][sources][fifo][offline]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql",
          "STORAGE '.'\nDECLARE a INTEGER, b INTEGER STREAM s, 1/10 DEVICE 'pipe'\nSELECT * STREAM q FROM s\n");
  const pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "--no-clock"});
  REQUIRE(eventually([&] { return testing::sizeOf(d.dir / "q.desc") > 0; }));
  writeRecords(d.dir / "pipe", {1, 2, 3, 4});
  std::this_thread::sleep_for(300ms);  // the writer is gone: a FIFO reports a hang-up from now on
  writeRecords(d.dir / "pipe", {5, 6, 7, 8, 9, 10});
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 60s) == 0);
  auto recs = d.records("q", 2);
  INFO(recs.size() << " records");
  REQUIRE(!recs.empty());
  // The zero step's record is NULL when nothing had come within its 100 ms.
  if (recs[0] == std::vector<int32_t>{0, 0}) recs.erase(recs.begin());
  // A slot's SELECT reads the records before that slot's read: the last one read is seen by the next slot.
  const std::vector<std::vector<int32_t>> want{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}};
  CHECK(recs.size() >= 4);
  CHECK(std::equal(recs.begin(), recs.end(), want.begin(), want.begin() + long(std::min(recs.size(), want.size()))));
}

TEST_CASE("offline, a DEVICE at its end that is no FIFO (/dev/null) gives NULL records, paced; --until-eof ends",
          "[engine][sources][offline]") {
  testing::RunDir d;
  const std::string q = "STORAGE '.'\nDECLARE a INTEGER STREAM s, 1/10 DEVICE '/dev/null'\nSELECT * STREAM q FROM s\n";
  CHECK(d.run(q, "--no-clock -m 5") == 0);  // it waited for data forever, polling at full speed
  CHECK(d.ints("q").size() == 4);           // -m 5 stores four records
  CHECK(d.run(q, "--no-clock --until-eof") == 0);
}

TEST_CASE("a DEVICE that is a directory is refused at start, naming it", "[engine][sources]") {
  for (const char* flags : {"--no-clock --until-eof", "-m 5"}) {
    INFO(flags);
    testing::RunDir d;
    std::filesystem::create_directory(d.dir / "adir");
    CHECK(d.run("STORAGE '.'\nDECLARE a INTEGER STREAM s, 1/10 DEVICE 'adir'\nSELECT * STREAM q FROM s\n", flags) == 1);
    const std::string err = d.read("run.err");
    CHECK_THAT(err, Catch::Contains("FATAL") && Catch::Contains("'adir' is a directory"));
    CHECK(std::count(err.begin(), err.end(), '\n') <= 2);  // one message, not one a slot
    CHECK(testing::sizeOf(d.dir / "q") <= 0);
  }
}

TEST_CASE("a TEXTFILE is read as a stream: memory does not grow with the file", "[engine][sources][textfile]") {
  testing::RunDir d;
  // 512 MiB, nearly all a hole: a few numbers, then NUL bytes (one long token a
  // 64 KiB piece, read as 0), then numbers at the end.
  {
    std::ofstream f(d.dir / "big.txt", std::ios::binary);
    f << "5\n6\n7\n";
  }
  std::filesystem::resize_file(d.dir / "big.txt", 512ull << 20);
  {
    std::ofstream f(d.dir / "big.txt", std::ios::binary | std::ios::app);
    f << "\n8\n";
  }
  d.write("query.rql", "STORAGE '.'\nDECLARE a INTEGER STREAM s, 1/10 TEXTFILE 'big.txt'\nSELECT * STREAM q FROM s\n");
  long rss = 0;
  const pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "--no-clock", "-m", "12"});
  CHECK(waitFor(pid, 120s, &rss) == 0);
  INFO("peak RSS " << rss << " KiB");
  // The whole file in memory is over 512 MiB; ASan's quarantine of freed blocks
  // (256 MiB by default) lifts a streaming run to about 250 MiB, a release run
  // stays near 65 MiB (mostly the JIT).
  CHECK(rss < 400 * 1024);
  const auto q = d.ints("q");
  REQUIRE(q.size() >= 4);
  CHECK(q[0] == 5);
  CHECK(q[1] == 6);
  CHECK(q[2] == 7);
  CHECK(q[3] == 0);  // the first 64 KiB of NUL bytes
}

TEST_CASE("a ONESHOT TEXTFILE is followed as it grows, and read from its start when cut shorter",
          "[engine][sources][textfile]") {
  testing::RunDir d;
  d.write("g.txt", "101\n102\n");
  d.write("query.rql",
          "STORAGE '.'\nDECLARE a INTEGER STREAM s, 1/20 TEXTFILE 'g.txt' ONESHOT\nSELECT * STREAM q FROM s\n");
  const pid_t pid = testing::spawnXretractor(d.dir, {"query.rql"});
  // Clocked runs write every block: the file's end has been read once NULL records follow 102.
  REQUIRE(eventually([&] {
    const auto q = d.ints("q");
    return q.size() >= 5 && contains(q, 102);
  }));
  {
    std::ofstream f(d.dir / "g.txt", std::ios::binary | std::ios::app);
    f << "103\n104\n";
  }
  const bool grown = eventually([&] { return contains(d.ints("q"), 104); });
  CHECK(grown);
  // Cut shorter than what was read, then written anew: read from its start.
  d.write("g.txt", "7\n");
  const bool cut = eventually([&] { return contains(d.ints("q"), 7); });
  CHECK(cut);
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 60s) == 0);
  auto q = d.ints("q");
  // 101 102 NULL... 103 104 NULL... 7 NULL...: each value once, in order.
  std::vector<int32_t> values;
  for (auto v : q)
    if (v != 0) values.push_back(v);
  CHECK(values == std::vector<int32_t>{101, 102, 103, 104, 7});
  CHECK_THAT(d.read("run.err"), Catch::Contains("g.txt was cut"));
}
