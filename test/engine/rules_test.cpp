// RULE actions end to end: dump windows around triggers (near the start and
// the end of a run), retention file names, NULL conditions, and SYSTEM
// commands that hang or fail without holding up the slots.
#include <catch2/catch.hpp>

#include <chrono>

#include "run_support.hpp"

using testing::RunDir;

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
