// TEXTFILE numbers: what each token of a text source reads as (storage/source.cpp).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "ir/layout.hpp"
#include "storage/source.hpp"

namespace {

// Reads `token` as the only field of a one-field text source of type `t`.
template <class T>
T readAs(ir::Type t, const std::string& token) {
  char path[] = "/tmp/rdb-text-source-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << token << "\n";
  ir::Field f;
  f.type = t;
  const ir::Layout layout = ir::Layout::of({f});
  auto src = storage::openSource(storage::SourceFormat::TEXT, path, layout, {});
  uint8_t rec[16] = {}, nulls[4] = {};
  src->next(rec, nulls);
  std::remove(path);
  T v;
  memcpy(&v, rec, sizeof v);
  return v;
}

}  // namespace

TEST_CASE("text source integers: decimal, signs, saturation, junk", "[storage][sources]") {
  using ir::Type;
  CHECK(readAs<int32_t>(Type::INTEGER, "42") == 42);
  CHECK(readAs<int32_t>(Type::INTEGER, "-2147483648") == INT32_MIN);
  CHECK(readAs<int32_t>(Type::INTEGER, "2147483648") == INT32_MAX);
  CHECK(readAs<int32_t>(Type::INTEGER, "-99999999999") == INT32_MIN);
  CHECK(readAs<int32_t>(Type::INTEGER, "+7") == 7);
  CHECK(readAs<int32_t>(Type::INTEGER, "+99999999999") == INT32_MAX);
  CHECK(readAs<int32_t>(Type::INTEGER, "12abc") == 12);
  CHECK(readAs<int32_t>(Type::INTEGER, "abc") == 0);
  CHECK(readAs<uint32_t>(Type::UINT, "4294967295") == UINT32_MAX);
  CHECK(readAs<uint32_t>(Type::UINT, "4294967296") == UINT32_MAX);
  CHECK(readAs<uint32_t>(Type::UINT, "+9") == 9);
  CHECK(readAs<uint32_t>(Type::UINT, "-5") == uint32_t(0u - 5u));
  CHECK(readAs<uint32_t>(Type::UINT, "-99999999999") == UINT32_MAX);
  CHECK(readAs<uint32_t>(Type::UINT, "x") == 0);
}
