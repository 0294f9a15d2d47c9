// TEXTFILE numbers: what each token of a text source reads as (storage/source.cpp).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "ir/layout.hpp"
#include "storage/source.hpp"

namespace {

// A new file under /tmp holding `text`; its path.
std::string tempFile(const std::string& text) {
  char path[] = "/tmp/rdb-text-source-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

// Reads `token` as the only field of a one-field text source of type `t`;
// nullopt when the field is NULL. `outOfRange` gets the source's count.
template <class T>
std::optional<T> readAs(ir::Type t, const std::string& token, uint64_t* outOfRange = nullptr) {
  const std::string path = tempFile(token + "\n");
  ir::Field f;
  f.type = t;
  const ir::Layout layout = ir::Layout::of({f});
  auto src = storage::openSource(storage::SourceFormat::TEXT, path, layout, {});
  uint8_t rec[16] = {}, nulls[4] = {};
  src->next(rec, nulls);
  std::remove(path.c_str());
  if (outOfRange) *outOfRange = src->outOfRange();
  if (nulls[0]) return std::nullopt;
  T v;
  memcpy(&v, rec, sizeof v);
  return v;
}

}  // namespace

// A value outside its type is NULL and counted, never clamped or wrapped into
// a value that looks like data.
TEST_CASE("text source integers: decimal, signs, out of range, junk", "[storage][sources]") {
  using ir::Type;
  CHECK(readAs<int32_t>(Type::INTEGER, "42") == 42);
  CHECK(readAs<int32_t>(Type::INTEGER, "-2147483648") == INT32_MIN);
  CHECK(readAs<int32_t>(Type::INTEGER, "2147483647") == INT32_MAX);
  uint64_t counted = 0;
  CHECK(readAs<int32_t>(Type::INTEGER, "2147483648", &counted) == std::nullopt);
  CHECK(counted == 1);
  CHECK(readAs<int32_t>(Type::INTEGER, "-2147483649") == std::nullopt);
  CHECK(readAs<int32_t>(Type::INTEGER, "-99999999999") == std::nullopt);
  CHECK(readAs<int32_t>(Type::INTEGER, "+7") == 7);
  CHECK(readAs<int32_t>(Type::INTEGER, "+99999999999999999999999") == std::nullopt);
  CHECK(readAs<int32_t>(Type::INTEGER, "12abc", &counted) == 12);
  CHECK(counted == 0);
  CHECK(readAs<int32_t>(Type::INTEGER, "abc") == 0);
  CHECK(readAs<uint32_t>(Type::UINT, "4294967295") == UINT32_MAX);
  CHECK(readAs<uint32_t>(Type::UINT, "4294967296") == std::nullopt);
  CHECK(readAs<uint32_t>(Type::UINT, "+9") == 9);
  CHECK(readAs<uint32_t>(Type::UINT, "-5") == std::nullopt);
  CHECK(readAs<uint32_t>(Type::UINT, "-0") == 0u);
  CHECK(readAs<uint32_t>(Type::UINT, "-99999999999") == std::nullopt);
  CHECK(readAs<uint32_t>(Type::UINT, "x") == 0u);
  CHECK(readAs<uint8_t>(Type::BYTE, "255") == 255);
  CHECK(readAs<uint8_t>(Type::BYTE, "256", &counted) == std::nullopt);
  CHECK(counted == 1);
  CHECK(readAs<uint8_t>(Type::BYTE, "-1") == std::nullopt);
}

// The file is read through a 256 KiB buffer: tokens and quoted strings that
// straddle a refill read whole, and a file wraps to its start.
TEST_CASE("text source: tokens and strings across buffer refills, and the wrap", "[storage][sources]") {
  const std::string path = tempFile("");
  // 7-byte numbers, then 9-byte strings: neither lines up with 2^18, so one of each straddles a refill.
  const int numbers = 40000, strings = 40000;
  {
    std::ofstream f(path);
    for (int i = 0; i < numbers; ++i) f << 100000 + i % 900000 << ' ';
    for (int i = 0; i < strings; ++i) f << "\"abc" << char('A' + i % 26) << "efg\" ";
  }
  ir::Field n, s;
  n.type = ir::Type::INTEGER;
  s.type = ir::Type::STRING;
  s.rlen = 1;
  s.rarray = 8;
  const ir::Layout numLayout = ir::Layout::of({n}), strLayout = ir::Layout::of({s});
  auto src = storage::openSource(storage::SourceFormat::TEXT, path, numLayout, {});
  uint8_t rec[16] = {}, nulls[2] = {};
  int wrong = 0;
  for (int i = 0; i < numbers; ++i) {
    src->next(rec, nulls);
    int32_t v;
    memcpy(&v, rec, 4);
    wrong += nulls[0] || v != 100000 + i;
  }
  CHECK(wrong == 0);
  // Past the numbers the strings come: bare words to an INTEGER read as 0.
  src->next(rec, nulls);
  CHECK(nulls[0] == 0);
  auto text = storage::openSource(storage::SourceFormat::TEXT, path, strLayout, {});
  for (int pass = 0; pass < 2; ++pass)  // the second pass after the wrap
    for (int i = 0; i < strings; ++i) {
      text->next(rec, nulls);
      const std::string want = std::string("abc") + char('A' + i % 26) + "efg";
      wrong += nulls[0] || std::string(reinterpret_cast<char*>(rec), 7) != want;
    }
  CHECK(wrong == 0);
  std::remove(path.c_str());
}

// A ONESHOT file in a clocked run is followed: a record the data ends in is
// NULL until its line is whole, then read whole (not split across records).
TEST_CASE("text source followed: a record is read whole once its line is, a bare word at the end never loops",
          "[storage][sources]") {
  const std::string path = tempFile("1 2 3\n4 ");
  ir::Field f;
  f.type = ir::Type::INTEGER;
  const ir::Layout three = ir::Layout::of({f, f, f});
  storage::SourceOptions follow;
  follow.oneShot = true;
  auto src = storage::openSource(storage::SourceFormat::TEXT, path, three, follow);
  int32_t rec[3];
  uint8_t nulls[3];
  auto read = [&] {
    src->next(reinterpret_cast<uint8_t*>(rec), nulls);
    return std::vector<int32_t>{nulls[0] ? -1 : rec[0], nulls[1] ? -1 : rec[1], nulls[2] ? -1 : rec[2]};
  };
  CHECK(read() == std::vector<int32_t>{1, 2, 3});
  CHECK(read() == std::vector<int32_t>{-1, -1, -1});  // "4 " is not a whole record yet
  std::ofstream(path, std::ios::app) << "5 6\n7 8 9";
  CHECK(read() == std::vector<int32_t>{4, 5, 6});
  CHECK(read() == std::vector<int32_t>{-1, -1, -1});  // "9" may still be growing
  std::ofstream(path, std::ios::app) << "\n";
  CHECK(read() == std::vector<int32_t>{7, 8, 9});
  CHECK(!src->exhausted());
  // A STRING field over a file ending in a bare word: NULL, at once (it looped forever).
  std::ofstream(path) << "foo";
  ir::Field s;
  s.type = ir::Type::STRING;
  s.rlen = 1;
  s.rarray = 8;
  auto text = storage::openSource(storage::SourceFormat::TEXT, path, ir::Layout::of({s}), follow);
  uint8_t str[8], null = 0;
  text->next(str, &null);
  CHECK(null == 1);
  std::remove(path.c_str());
}

namespace {

// This process's read system calls so far (/proc/self/io), or -1.
long readCalls() {
  std::ifstream io("/proc/self/io");
  std::string key;
  long v;
  while (io >> key >> v)
    if (key == "syscr:") return v;
  return -1;
}

}  // namespace

// A small file wrapped over and over is read from its buffer: no read (and
// no end-of-file read) a pass. Changes are still seen (the file is looked at
// every 10 ms): lines appended are read from a pass's start, and a file cut
// shorter is read from its start.
TEST_CASE("text source: a small file wraps within its buffer and still sees changes", "[storage][sources]") {
  const std::string path = tempFile("1 2 3\n");
  ir::Field f;
  f.type = ir::Type::INTEGER;
  auto src = storage::openSource(storage::SourceFormat::TEXT, path, ir::Layout::of({f}), {});
  uint8_t rec[4] = {}, nulls[1] = {};
  auto next = [&] {
    src->next(rec, nulls);
    int32_t v;
    memcpy(&v, rec, 4);
    return nulls[0] ? -1 : v;
  };
  const long before = readCalls();
  int wrong = 0;
  for (int i = 0; i < 30000; ++i) wrong += next() != 1 + i % 3;  // ends with a pass
  CHECK(wrong == 0);
  if (before >= 0) CHECK(readCalls() - before < 10);  // was one a pass: 10,000
  std::ofstream(path, std::ios::app) << "4\n";
  // Passes of 1 2 3 until the file is looked at again, then 1 2 3 4 from a pass's start.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int v = 3, before4 = 0;
  while (v != 4 && std::chrono::steady_clock::now() < deadline) {
    const int want = v == 3 ? 1 : v + 1;
    before4 = v;
    v = next();
    wrong += v != want && !(v == 4 && before4 == 3);
  }
  CHECK(wrong == 0);
  REQUIRE(v == 4);
  std::vector<int> seen;
  for (int i = 0; i < 8; ++i) seen.push_back(next());
  CHECK(seen == std::vector<int>{1, 2, 3, 4, 1, 2, 3, 4});
  std::ofstream(path) << "7\n";  // cut shorter: read from its start
  int sevens = 0;
  while (sevens < 3 && std::chrono::steady_clock::now() < deadline) sevens += next() == 7;
  CHECK(sevens == 3);
  std::remove(path.c_str());
}
