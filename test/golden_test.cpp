// Golden plans: test/golden/NAME.rql must compile to exactly NAME.plan.
#include <catch2/catch.hpp>

#include <filesystem>

#include "support.hpp"

TEST_CASE("golden plans reproduce byte for byte", "[golden]") {
  namespace fs = std::filesystem;
  int n = 0;
  for (auto& e : fs::directory_iterator(fs::path(RDB_TEST_DATA) / "golden")) {
    if (e.path().extension() != ".rql") continue;
    auto planPath = e.path();
    planPath.replace_extension(".plan");
    INFO("golden case " << e.path().filename().string());
    REQUIRE(fs::exists(planPath));
    CHECK(testing::planOf(testing::readFile(e.path())) == testing::readFile(planPath));
    ++n;
  }
  CHECK(n >= 3);
}
