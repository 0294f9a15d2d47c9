// Hostile command lines and query files: a clear message and a non-zero exit,
// never an endless read or a silently accepted value.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "run_support.hpp"

namespace {
int runCmd(const testing::RunDir& d, const std::string& args) {
  std::string cmd = "cd '" + d.dir.string() + "' && TMPDIR='" + d.dir.string() +
                    "' timeout -s KILL 20 '" RDB_XRETRACTOR "' " + args + " >run.out 2>run.err </dev/null";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
}  // namespace

TEST_CASE("a query file that is a device, a FIFO, a directory or too big is refused", "[cli][input]") {
  testing::RunDir d;
  REQUIRE(mkfifo((d.dir / "q.fifo").c_str(), 0600) == 0);
  std::filesystem::create_directory(d.dir / "adir");
  {
    std::ofstream big(d.dir / "big.rql", std::ios::binary);
    big << "DECLARE a INTEGER STREAM s, 1 TEXTFILE 's.txt'\n";
    big << std::string(17 << 20, ' ') << "\n";
  }
  struct Case {
    std::string file, message;
  };
  for (const Case& c :
       {Case{"/dev/zero", "not a regular file"}, Case{"/dev/urandom", "not a regular file"},
        Case{"q.fifo", "not a regular file"}, Case{"adir", "is a directory"}, Case{"big.rql", "the limit is"}}) {
    for (const std::string mode : {"-c ", ""}) {
      INFO(mode << c.file);
      CHECK(runCmd(d, mode + c.file) == 71);
      CHECK_THAT(d.read("run.err"), Catch::Contains(c.message));
    }
  }
}

TEST_CASE("-m takes a whole number of slots; negative or overflowing values are refused", "[cli][input]") {
  testing::RunDir d;
  d.write("s.txt", testing::sequence(1, 10));
  d.write("query.rql", "STORAGE '.'\nDECLARE a INTEGER STREAM s, 1/10 TEXTFILE 's.txt'\nSELECT * STREAM q FROM s\n");
  for (const std::string bad : {"-5", "99999999999999999999", "5x", "1e3", ""}) {
    INFO("-m '" << bad << "'");
    CHECK(runCmd(d, "query.rql --no-clock -k -m '" + bad + "'") == 22);
    CHECK_THAT(d.read("run.err"), Catch::Contains("-m needs a whole number"));
  }
  CHECK(runCmd(d, "query.rql --no-clock -k -m 4") == 0);
  CHECK(d.read("q").size() == 3 * 4);
}
