// Checkpoint files (storage/checkpoint.hpp): a torn or corrupt current file
// falls back to `.prev`; both bad is an error naming them, never a crash.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../engine/run_support.hpp"
#include "storage/checkpoint.hpp"

namespace {

namespace fs = std::filesystem;
using storage::CheckpointPaths;

std::vector<uint8_t> payloadOf(const std::string& s) { return {s.begin(), s.end()}; }

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

}  // namespace

TEST_CASE("checkpoint files: written durably, read back; a bad current file gives way to .prev", "[checkpoint]") {
  testing::RunDir d;
  const CheckpointPaths p = CheckpointPaths::in(d.dir.string());
  CHECK(!storage::readCheckpoint(p).found);  // none yet: a fresh start

  storage::writeCheckpoint(p, payloadOf("first"));
  storage::writeCheckpoint(p, payloadOf("second"));
  auto got = storage::readCheckpoint(p);
  REQUIRE(got.found);
  CHECK(got.payload == payloadOf("second"));
  CHECK(got.fellBack.empty());
  CHECK(!fs::exists(p.temporary()));

  SECTION("torn") {
    const std::string whole = bytesOf(p.current);
    put(p.current, whole.substr(0, whole.size() / 2));
    got = storage::readCheckpoint(p);
    CHECK(got.payload == payloadOf("first"));
    CHECK(got.path == p.previous);
    CHECK_THAT(got.fellBack, Catch::Contains("torn"));
  }
  SECTION("a flipped byte") {
    std::string whole = bytesOf(p.current);
    whole[whole.size() - 6] ^= 0x10;
    put(p.current, whole);
    got = storage::readCheckpoint(p);
    CHECK(got.payload == payloadOf("first"));
    CHECK_THAT(got.fellBack, Catch::Contains("checksum"));
  }
  SECTION("killed between the renames: only .prev is there") {
    fs::remove(p.current);
    got = storage::readCheckpoint(p);
    CHECK(got.payload == payloadOf("first"));
    CHECK_THAT(got.fellBack, Catch::Contains("missing"));
  }
  SECTION("both bad: an error naming both, the files left as they are") {
    put(p.current, "RDBCKPT\n garbage");
    put(p.previous, "");
    try {
      storage::readCheckpoint(p);
      FAIL("a corrupt pair was read");
    } catch (const storage::CheckpointError& e) {
      CHECK_THAT(e.what(), Catch::Contains(p.current) && Catch::Contains(p.previous));
    }
    CHECK(bytesOf(p.current) == "RDBCKPT\n garbage");
  }
}

TEST_CASE("checkpoint payloads: a reader never reads past the end", "[checkpoint]") {
  storage::ByteWriter w;
  w.u64(7);
  w.text("stream");
  w.i64(-3);
  const auto& b = w.bytes();
  storage::ByteReader r(b.data(), b.size(), "payload");
  CHECK(r.u64() == 7);
  CHECK(r.text() == "stream");
  CHECK(r.i64() == -3);
  CHECK(r.atEnd());
  CHECK_THROWS_AS(r.u8(), storage::CheckpointError);
  // A length that claims more than is there is refused before anything is allocated.
  storage::ByteWriter bad;
  bad.u64(uint64_t(1) << 60);
  storage::ByteReader rb(bad.bytes().data(), bad.bytes().size(), "payload");
  CHECK_THROWS_AS(rb.text(), storage::CheckpointError);
  storage::ByteReader rc(bad.bytes().data(), bad.bytes().size(), "payload");
  CHECK_THROWS_AS(rc.count(8), storage::CheckpointError);
}
