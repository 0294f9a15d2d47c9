// RULE actions end to end: dump windows around triggers (near the start and
// the end of a run), retention file names, NULL conditions, dump files kept
// open between dumps, and SYSTEM commands that hang or fail without holding
// up the slots.
#include <catch2/catch.hpp>

#include <sys/inotify.h>
#include <sys/stat.h>

#include <chrono>
#include <map>
#include <thread>

#include "../eventually.hpp"
#include "spawn_support.hpp"

using testing::RunDir;
using namespace std::chrono_literals;

namespace {

// Opens and closes after writing of each file in a directory, seen by inotify
// from the moment it is built until count().
struct OpenCounter {
  int fd = -1;
  explicit OpenCounter(const std::filesystem::path& dir) {
    fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd >= 0 && inotify_add_watch(fd, dir.c_str(), IN_OPEN | IN_CLOSE_WRITE) < 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~OpenCounter() {
    if (fd >= 0) ::close(fd);
  }
  struct Counts {
    int opens = 0, closes = 0;
  };
  // Events of the files by name; false when the kernel dropped some (queue overflow).
  bool count(std::map<std::string, Counts>& out) const {
    alignas(inotify_event) char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return n < 0 && errno == EAGAIN;
      for (ssize_t i = 0; i < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + i);
        if (e->mask & IN_Q_OVERFLOW) return false;
        if (e->len > 0) {
          Counts& c = out[e->name];
          if (e->mask & IN_OPEN) ++c.opens;
          if (e->mask & IN_CLOSE_WRITE) ++c.closes;
        }
        i += ssize_t(sizeof(inotify_event) + e->len);
      }
    }
  }
};

template <class F>
bool eventually(F ok, std::chrono::milliseconds limit = 30s) {
  return testing::eventually(ok, limit);
}

}  // namespace

TEST_CASE("DUMP writes the half-open window around each trigger", "[engine][rules]") {
  RunDir d;
  d.write("s.txt", testing::sequence(1, 40));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1 TEXTFILE 's.txt' ONESHOT\n"
                "SELECT src[0] STREAM v FROM src\n"
                "RULE early ON v WHEN v[0] = 2 DO DUMP -3 TO 2\n"
                "RULE ahead ON v WHEN v[0] = 5 DO DUMP 2 TO 5\n"
                "RULE late ON v WHEN v[0] = 9 DO DUMP -1 TO 4\n",
                "--no-clock -m 11") == 0);
  // trigger at record 1 (value 2): records -2 -1 0 1 2 -> two zero records first
  CHECK(d.ints("v_early_dump.tmp") == std::vector<int32_t>{0, 0, 1, 2, 3});
  // trigger at value 5: skip 2 records, then 3
  CHECK(d.ints("v_ahead_dump.tmp") == std::vector<int32_t>{7, 8, 9});
  // trigger at value 9 near the end: the run stops after value 10
  CHECK(d.ints("v_late_dump.tmp") == std::vector<int32_t>{8, 9, 10});
}

TEST_CASE("RETENTION cycles dump files; without it a dump restarts", "[engine][rules]") {
  RunDir d;
  d.write("s.txt", testing::sequence(1, 40));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1 TEXTFILE 's.txt' ONESHOT\n"
                "SELECT src[0] STREAM v FROM src\n"
                "RULE keep ON v WHEN v[0] > 3 AND v[0] < 7 DO DUMP 0 TO 2 RETENTION 2\n"
                "RULE again ON v WHEN v[0] > 3 AND v[0] < 7 DO DUMP 0 TO 3\n",
                "--no-clock -m 12") == 0);
  CHECK(d.ints("v_keep_dump.tmp") == std::vector<int32_t>{4, 5});
  CHECK(d.ints("v_keep_dump_0.tmp") == std::vector<int32_t>{5, 6});
  CHECK(d.ints("v_keep_dump_1.tmp") == std::vector<int32_t>{6, 7});
  CHECK(d.ints("v_again_dump.tmp") == std::vector<int32_t>{6, 7, 8});  // restarted at 5 and at 6
}

// Opening a dump file with O_TRUNC and closing it at every firing made ext4
// write it back at each close and the slot wait on the disk: the file stays
// open from one dump to the next (issue 42).
TEST_CASE("a rule that fires often opens its dump file once, not at each firing", "[engine][rules]") {
  RunDir d;
  d.write("s.txt", testing::sequence(1, 200));
  OpenCounter watch(d.dir);
  REQUIRE(watch.fd >= 0);
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1 TEXTFILE 's.txt' ONESHOT\n"
                "SELECT src[0] STREAM v FROM src\n"
                "RULE often ON v WHEN v[0] > 50 DO DUMP -2 TO 1\n"
                "RULE ring ON v WHEN v[0] > 90 DO DUMP 0 TO 2 RETENTION 3\n",
                "--no-clock -m 101") == 0);
  std::map<std::string, OpenCounter::Counts> seen;
  REQUIRE(watch.count(seen));
  // 50 firings (values 51 to 100), one open and the close at the end of the run
  CHECK(seen["v_often_dump.tmp"].opens == 1);
  CHECK(seen["v_often_dump.tmp"].closes == 1);
  // 10 firings over _dump.tmp and a ring of three files: each opened once
  for (auto name : {"v_ring_dump.tmp", "v_ring_dump_0.tmp", "v_ring_dump_1.tmp", "v_ring_dump_2.tmp"}) {
    INFO(name);
    CHECK(seen[name].opens == 1);
  }
  // What is in them is what reopening every dump wrote: the newest window.
  CHECK(d.ints("v_often_dump.tmp") == std::vector<int32_t>{98, 99, 100});
  CHECK(d.ints("v_ring_dump.tmp") == std::vector<int32_t>{91, 92});
  CHECK(d.ints("v_ring_dump_0.tmp") == std::vector<int32_t>{98, 99});
  CHECK(d.ints("v_ring_dump_1.tmp") == std::vector<int32_t>{99, 100});
  CHECK(d.ints("v_ring_dump_2.tmp") == std::vector<int32_t>{100});  // cut by the end of the run
}

TEST_CASE("more dump files than are kept open: each still holds its newest dump", "[engine][rules]") {
  // RETENTION 100 over 249 firings: more files than the engine keeps open,
  // so some are closed after their dump and opened again by the next.
  RunDir d;
  d.write("s.txt", testing::sequence(1, 300));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1 TEXTFILE 's.txt' ONESHOT\n"
                "SELECT src[0] STREAM v FROM src\n"
                "RULE many ON v WHEN v[0] > 0 DO DUMP -1 TO 1 RETENTION 100\n",
                "--no-clock -m 251") == 0);
  // firing k (value k + 1) writes _dump.tmp first, then _dump_{(k - 1) % 100}.tmp
  CHECK(d.ints("v_many_dump.tmp") == std::vector<int32_t>{0, 1});
  for (int j = 0; j < 100; ++j) {
    const int k = j + 1 + (j + 201 <= 249 ? 200 : 100);
    INFO("file " << j << ", firing " << k);
    CHECK(d.ints("v_many_dump_" + std::to_string(j) + ".tmp") == std::vector<int32_t>{k, k + 1});
  }
}

// A dump file moved away (collected) between two firings: the next dump
// creates a new file at the path and leaves the moved one as it was.
TEST_CASE("a dump file moved away between firings is created again by the next", "[engine][rules]") {
  RunDir d;
  REQUIRE(mkfifo((d.dir / "pipe").c_str(), 0600) == 0);
  d.write("query.rql",
          "STORAGE '.'\n"
          "DECLARE x INTEGER STREAM src, 1/20 DEVICE 'pipe'\n"
          "SELECT src[0] STREAM v FROM src\n"
          "RULE hot ON v WHEN v[0] > 0 DO DUMP 0 TO 1\n");
  // Read-write: the FIFO always has a writer, and the slots without a record are NULL (no firing).
  const int w = ::open((d.dir / "pipe").c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(w >= 0);
  const pid_t pid = testing::spawnXretractor(d.dir, {"query.rql", "-k"});
  REQUIRE(pid > 0);
  auto send = [&](int32_t v) { return ::write(w, &v, 4) == 4; };
  auto holds = [&](const std::string& name, std::vector<int32_t> v) {
    return eventually([&] { return d.ints(name) == v; });
  };
  CHECK(send(5));
  CHECK(holds("v_hot_dump.tmp", {5}));
  std::filesystem::rename(d.dir / "v_hot_dump.tmp", d.dir / "moved.tmp");
  CHECK(send(6));
  CHECK(holds("v_hot_dump.tmp", {6}));
  CHECK(send(7));
  CHECK(holds("v_hot_dump.tmp", {7}));
  kill(pid, SIGTERM);
  int st = -1;
  const bool stopped = eventually([&] { return waitpid(pid, &st, WNOHANG) == pid; });
  if (!stopped) {
    kill(pid, SIGKILL);
    testing::waitChild(pid);
  }
  CHECK((stopped && WIFEXITED(st) && WEXITSTATUS(st) == 0));
  ::close(w);
  CHECK(d.ints("moved.tmp") == std::vector<int32_t>{5});
  CHECK(d.ints("v_hot_dump.tmp") == std::vector<int32_t>{7});
}

TEST_CASE("a NULL condition does not fire", "[engine][rules]") {
  RunDir d;
  d.write("s.txt", "1 NULL 3\n");
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1 TEXTFILE 's.txt' ONESHOT\n"
                "SELECT src[0] STREAM v FROM src\n"
                "RULE r ON v WHEN v[0] > 0 OR v[0] < 0 DO DUMP 0 TO 1 RETENTION 5\n",
                "--no-clock -m 4") == 0);
  CHECK(d.ints("v_r_dump.tmp") == std::vector<int32_t>{1});
  CHECK(d.ints("v_r_dump_0.tmp") == std::vector<int32_t>{3});
  CHECK(d.read("v_r_dump_1.tmp").empty());
}

TEST_CASE("SYSTEM commands that hang or fail do not delay the slots", "[engine][rules]") {
  // No clock involved: if a slot waited for the hanging command, that command
  // would finish (and leave late.flag) before the run could end.
  RunDir d;
  d.write("s.txt", testing::sequence(1, 40));
  REQUIRE(d.run("STORAGE '.'\n"
                "DECLARE x INTEGER STREAM src, 1/20 TEXTFILE 's.txt'\n"
                "SELECT src[0] STREAM v FROM src\n"
                "RULE hang ON v WHEN v[0] < 4 DO SYSTEM 'sleep 30 && touch late.flag'\n"
                "RULE fail ON v WHEN v[0] = 5 DO SYSTEM 'exit 3'\n"
                "RULE mark ON v WHEN v[0] = 6 DO SYSTEM 'touch ran.flag'\n",
                "-m 20") == 0);
  CHECK(d.ints("v").size() == 19);                       // every slot produced its record
  CHECK(!std::filesystem::exists(d.dir / "late.flag"));  // the hanging commands were not waited for
  CHECK(std::filesystem::exists(d.dir / "ran.flag"));    // later commands still ran
  CHECK(d.read("run.err").find("exited with status 3") != std::string::npos);
}
