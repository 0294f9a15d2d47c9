// The TOML configuration (tools/config.cpp): the keys of the book's table
// that the tools read, their ranges, and which invalid values are warnings
// (the default stays) and which are configuration errors.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tools/config.hpp"

namespace {

struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/rdb_config_XXXXXX";
    int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    close(fd);
    path = tmpl;
    std::ofstream(path) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

tools::Config load(const std::string& text) {
  TempFile f(text);
  return tools::loadConfig(f.path.string());
}

}  // namespace

TEST_CASE("limits.history_memory_mib: 1 .. 2^30; anything else warns and keeps 1024", "[config]") {
  CHECK(load("").historyMemoryMib == 1024);
  CHECK(load("").warnings.empty());
  CHECK(load("[limits]\nhistory_memory_mib = 64\n").historyMemoryMib == 64);
  CHECK(load("[limits]\nhistory_memory_mib = 1073741824\n").historyMemoryMib == int64_t(1) << 30);
  for (const std::string bad : {"0", "-5", "1073741825", "1.5", "\"big\""}) {
    INFO(bad);
    tools::Config c;
    REQUIRE_NOTHROW(c = load("[limits]\nhistory_memory_mib = " + bad + "\n"));
    CHECK(c.historyMemoryMib == 1024);
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("limits.history_memory_mib") && Catch::Contains("using 1024"));
  }
}

TEST_CASE("storage.default_retention: [capacity, segments], both positive; else a warning and unset", "[config]") {
  CHECK(load("").defaultRetention == std::pair<int, int>{0, 0});
  CHECK(load("[storage]\ndefault_retention = [1000, 4]\n").defaultRetention == std::pair<int, int>{1000, 4});
  for (const std::string bad :
       {"[0, 4]", "[1000, 0]", "[-1, 4]", "[1000]", "[1, 2, 3]", "1000", "[1.5, 2]", "[\"a\", 2]", "[2147483648, 2]"}) {
    INFO(bad);
    tools::Config c;
    REQUIRE_NOTHROW(c = load("[storage]\ndefault_retention = " + bad + "\n"));
    CHECK(c.defaultRetention == std::pair<int, int>{0, 0});
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("storage.default_retention") && Catch::Contains("ignored"));
  }
}

TEST_CASE("sources.timeout_s: 0 .. 86400 seconds; anything else is a configuration error", "[config]") {
  CHECK(load("").sourcesTimeoutS == 0);
  CHECK_NOTHROW(tools::validateSourcesTimeout(load("")));
  for (auto [text, value] : std::vector<std::pair<std::string, double>>{
           {"0", 0}, {"0.01", 0.01}, {"5", 5}, {"86400", 86400}, {"86400.0", 86400}}) {
    INFO(text);
    tools::Config c = load("[sources]\ntimeout_s = " + text + "\n");
    CHECK(c.sourcesTimeoutS == value);
    CHECK_NOTHROW(tools::validateSourcesTimeout(c));
  }
  // xqry reads the same file: loading never fails on the key, xretractor's check does.
  for (const std::string bad : {"-1", "-0.5", "86400.5", "100000", "\"ten\"", "true", "nan", "inf", "[1]"}) {
    INFO(bad);
    tools::Config c;
    REQUIRE_NOTHROW(c = load("[sources]\ntimeout_s = " + bad + "\n"));
    CHECK_THROWS_WITH(tools::validateSourcesTimeout(c), Catch::StartsWith("Configuration error: sources.timeout_s "));
  }
}

TEST_CASE("the book's example file loads", "[config]") {
  tools::Config c = load(
      "[storage]\ndefault_retention = [1000, 4]\n[sources]\ntimeout_s = 0.01\n[limits]\nhistory_memory_mib = 1024\n"
      "[ipc]\nqueue_buffer_seconds = 30\n");
  CHECK(c.defaultRetention == std::pair<int, int>{1000, 4});
  CHECK(c.sourcesTimeoutS == 0.01);
  CHECK(c.queueBufferSeconds == 30);
  CHECK(c.warnings.empty());
  CHECK_NOTHROW(tools::validateSourcesTimeout(c));
}

TEST_CASE("mqtt.max_payload_bytes 16 .. 2^28-1 and mqtt.max_json_depth 1 .. 1000; else a warning and the default",
          "[config]") {
  CHECK(load("").mqttMaxPayloadBytes == 1048576);
  CHECK(load("").mqttMaxJsonDepth == 32);
  tools::Config c = load("[mqtt]\nmax_payload_bytes = 4096\nmax_json_depth = 4\n");
  CHECK(c.mqttMaxPayloadBytes == 4096);
  CHECK(c.mqttMaxJsonDepth == 4);
  CHECK(c.warnings.empty());
  for (const std::string bad : {"0", "15", "268435456", "1.5", "\"big\""}) {
    INFO(bad);
    REQUIRE_NOTHROW(c = load("[mqtt]\nmax_payload_bytes = " + bad + "\n"));
    CHECK(c.mqttMaxPayloadBytes == 1048576);
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("mqtt.max_payload_bytes") && Catch::Contains("using 1048576"));
  }
  for (const std::string bad : {"0", "-1", "1001", "2.0", "true"}) {
    INFO(bad);
    REQUIRE_NOTHROW(c = load("[mqtt]\nmax_json_depth = " + bad + "\n"));
    CHECK(c.mqttMaxJsonDepth == 32);
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("mqtt.max_json_depth") && Catch::Contains("using 32"));
  }
}
