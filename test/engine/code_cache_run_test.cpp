// xretractor with a code cache: the second run of a plan takes its code, the
// chains' too, from the cache and writes the same records as the first run
// and as the VM.
#include <catch2/catch.hpp>

#include <filesystem>

#include "build_config.h"
#include "run_support.hpp"

#if RDB_WITH_JIT
TEST_CASE("a plan's second run takes its code from the cache and writes the same records", "[engine][jit][cache]") {
  testing::RunDir d;
  d.write("a.txt", testing::sequence(-40, 3000, 7));
  std::filesystem::create_directory(d.dir / "out");
  // A chain (map, window, fold) and a stream of its own.
  const std::string q =
      "STORAGE 'out'\nDECLARE x INTEGER STREAM a, 1/100 TEXTFILE 'a.txt'\n"
      "SELECT a[0] * 3 - 5 STREAM m FROM a VOLATILE\n"
      "SELECT * STREAM w FROM m@(1,8) VOLATILE\n"
      "SELECT to_integer(s[0]) STREAM s FROM SUMC(w)\n"
      "SELECT a[0] / 4 STREAM q FROM a\n";
  const std::string args = "--no-clock -m 2990 -v --jit-tier optimised --jit-cache '" + (d.dir / "jc").string() + "'";
  auto records = [&] { return d.read("out/s") + "|" + d.read("out/q"); };
  REQUIRE(d.run(q, args) == 0);
  const std::string first = d.read("run.out");
  CHECK_THAT(first, !Catch::Contains("from the cache") && Catch::Contains("chains run as one loop"));
  const std::string cold = records();
  REQUIRE(cold.size() > 2000);
  REQUIRE(d.run(q, args) == 0);
  const std::string second = d.read("run.out");
  CHECK_THAT(second, Catch::Contains("(code from the cache)") && Catch::Contains("chains run as one loop"));
  CHECK(records() == cold);
  REQUIRE(d.run(q, "--no-clock -m 2990 --interpret") == 0);
  CHECK(records() == cold);
  // off: compiled again, nothing taken from the cache.
  REQUIRE(d.run(q, "--no-clock -m 2990 -v --jit-tier optimised --jit-cache off") == 0);
  CHECK_THAT(d.read("run.out"), !Catch::Contains("from the cache"));
  CHECK(records() == cold);
}
#endif
