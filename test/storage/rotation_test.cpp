// ROTATION in storage (book rotation.md): the counter file, the archives a
// session's shutdown makes (data, index, shadows) and opening an archive.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "../engine/run_support.hpp"
#include "storage/artifacts.hpp"

namespace {

namespace fs = std::filesystem;
using storage::ArtifactPaths;

std::set<std::string> filesIn(const fs::path& dir) {
  std::set<std::string> out;
  for (auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

storage::Descriptor twoInts() {
  storage::Descriptor d;
  for (const char* n : {"a", "b"}) {
    storage::DescEntry e;
    e.type = ir::Type::INTEGER;
    e.name = n;
    d.entries.push_back(e);
  }
  return d;
}

}  // namespace

TEST_CASE("the rotation counter: missing is 0, a non-negative integer is read, anything else is refused",
          "[storage][rotation]") {
  testing::RunDir d;
  const std::string f = (d.dir / "rot.txt").string();
  CHECK(storage::readRotationCounter(f) == 0);
  for (auto [text, n] : std::vector<std::pair<std::string, int>>{
           {"0", 0}, {"7", 7}, {"12\n", 12}, {" 3 \r\n", 3}, {"0005", 5}, {"999999999", 999999999}}) {
    INFO("'" << text << "'");
    d.write("rot.txt", text);
    CHECK(storage::readRotationCounter(f) == n);
  }
  for (const std::string bad :
       {"", "\n", "abc", "-3", "+3", "1x", "1 2", "1.5", "1000000000", "99999999999999999999"}) {
    INFO("'" << bad << "'");
    d.write("rot.txt", bad);
    try {
      storage::readRotationCounter(f);
      FAIL("accepted");
    } catch (const storage::StorageError& e) {
      CHECK_THAT(e.what(), Catch::StartsWith("rotation counter file '" + f + "' "));
    }
  }
  fs::create_directory(d.dir / "dir");
  CHECK_THROWS_AS(storage::readRotationCounter((d.dir / "dir").string()), storage::StorageError);
}

TEST_CASE("the rotation counter is written through a temp file and a rename", "[storage][rotation]") {
  testing::RunDir d;
  const std::string f = (d.dir / "rot.txt").string();
  d.write("rot.txt", "garbage that is replaced");
  storage::writeRotationCounter(f, 42);
  CHECK(d.read("rot.txt") == "42");
  CHECK(storage::readRotationCounter(f) == 42);
  CHECK(filesIn(d.dir) == std::set<std::string>{"rot.txt"});  // no temp file left
  // A directory that cannot hold the temp file: the error names the counter file.
  CHECK_THROWS_WITH(storage::writeRotationCounter((d.dir / "missing" / "rot.txt").string(), 1),
                    Catch::StartsWith("rotation counter file '" + (d.dir / "missing" / "rot.txt").string() + "'"));
}

TEST_CASE("a session's shutdown archives data, index and shadows under one number", "[storage][rotation]") {
  testing::RunDir d;
  const auto p = ArtifactPaths::forStream(d.dir.string() + "/", "x", "x");
  const storage::Descriptor desc = twoInts();
  {
    auto f = storage::openFamily(p, desc, "DEFAULT", 8);
    int32_t rec[2] = {1, 2};
    f.append(reinterpret_cast<uint8_t*>(rec), {0x2});  // b NULL
    f.append(reinterpret_cast<uint8_t*>(rec), {0x0});
    f.flush();
    f.store->update(0, reinterpret_cast<uint8_t*>(rec));  // a shadow entry
    f.meta->update(0, {0x0});                             // and an index shadow entry
    f.meta->rotate(3);
    f.store->close(3);
  }
  CHECK(filesIn(d.dir) == std::set<std::string>{"x.old3", "x.shadow.old3", "x.meta.old3", "x.meta.shadow.old3"});
  const auto view = storage::readMetaFile((d.dir / "x.meta.old3").string(), 2);
  REQUIRE(view.entries.size() == 2);
  CHECK(view.entries[0].isNull(1));
  CHECK(view.entries[1].count == 1);

  // The inspector opens the archive with the index and shadows of its session, and keeps them.
  const auto a = ArtifactPaths::forFile(d.dir.string(), "x.old3");
  CHECK(a.isArchive());
  CHECK(a.meta() == (d.dir / "x.meta.old3").string());
  CHECK(a.shadow() == (d.dir / "x.shadow.old3").string());
  CHECK(a.metaShadow() == (d.dir / "x.meta.shadow.old3").string());
  CHECK(a.desc() == (d.dir / "x.desc").string());
  CHECK_FALSE(ArtifactPaths::forFile("", "x").isArchive());
  CHECK_FALSE(ArtifactPaths::forFile("", "x.older").isArchive());
  CHECK(ArtifactPaths::forFile("", "x.old").meta() == "x.old.meta");
  const auto shadowBytes = fs::file_size(d.dir / "x.shadow.old3");
  CHECK(shadowBytes == uint64_t(storage::shadowEntrySize(8)));
  {
    auto f = storage::openFamily(a, desc, "DEFAULT", 8);
    CHECK(f.store->count() == 2);
    CHECK(f.meta->records() == 2);
    CHECK(f.meta->bitmapAt(1) == std::vector<uint8_t>{0x0});
    CHECK(f.meta->bitmapAt(0) == std::vector<uint8_t>{0x0});  // the index shadow's entry
  }
  CHECK(fs::file_size(d.dir / "x.shadow.old3") == shadowBytes);
  CHECK(filesIn(d.dir) == std::set<std::string>{"x.old3", "x.shadow.old3", "x.meta.old3", "x.meta.shadow.old3"});
}

TEST_CASE("segments rotate one by one; a store without a shadow leaves none", "[storage][rotation]") {
  testing::RunDir d;
  const auto p = ArtifactPaths::forStream(d.dir.string() + "/", "r", "r");
  storage::Descriptor desc = twoInts();
  storage::DescEntry ret;
  ret.kind = storage::DescEntry::Kind::RETENTION;
  ret.capacity = 2;
  ret.segments = 0;
  desc.entries.push_back(ret);
  {
    auto f = storage::openFamily(p, desc, "DIRECT", 8);
    int32_t rec[2] = {1, 2};
    for (int i = 0; i < 5; ++i) f.append(reinterpret_cast<uint8_t*>(rec), {0x0});
    f.flush();
    f.meta->rotate(0);
    f.store->close(0);
  }
  CHECK(filesIn(d.dir) ==
        std::set<std::string>{"r_segment_0.old0", "r_segment_1.old0", "r_segment_2.old0", "r.meta.old0"});
}

// Files written with another descriptor than the stream's are never continued:
// they are archived whole under one number, the descriptor copied first, and
// the inspector's name for the archive reads with that descriptor.
TEST_CASE("files of another layout are archived whole with their descriptor", "[storage][rotation]") {
  testing::RunDir d;
  const std::string dir = d.dir.string() + "/";
  const auto p = ArtifactPaths::forStream(dir, "x", "x");
  const storage::Descriptor two = twoInts();
  storage::Descriptor three = twoInts();
  three.entries.push_back(three.entries[0]);
  three.entries.back().name = "c";
  CHECK_FALSE(storage::changedLayout(p, two));  // nothing on disk
  {
    auto f = storage::startFamily(p, two, 8, false);
    int32_t rec[2] = {1, 2};
    f.append(reinterpret_cast<uint8_t*>(rec), {0x2});
    f.append(reinterpret_cast<uint8_t*>(rec), {0x0});
    f.flush();
  }
  CHECK_FALSE(storage::changedLayout(p, two));
  REQUIRE(storage::changedLayout(p, three) == std::optional<std::string>("{ INTEGER a INTEGER b }"));
  const auto names = storage::archiveSession(p, 5);
  CHECK(std::set<std::string>(names.begin(), names.end()) ==
        std::set<std::string>{"x.desc.old5", "x.old5", "x.meta.old5", "x.shadow.old5"});
  CHECK(filesIn(d.dir) == std::set<std::string>{"x.desc", "x.desc.old5", "x.old5", "x.meta.old5", "x.shadow.old5"});
  CHECK_FALSE(storage::changedLayout(p, three));  // the stream starts afresh
  CHECK(ArtifactPaths::forFile(d.dir.string(), "x.old5").desc() == dir + "x.desc.old5");
  CHECK(ArtifactPaths::forFile(d.dir.string(), "x.old4").desc() == dir + "x.desc");  // an archive without its own
  const auto a = ArtifactPaths::forFile(d.dir.string(), "x.old5");
  auto f = storage::openFamily(a, storage::Descriptor::load(a.desc()), "DEFAULT", 8);
  CHECK(f.store->count() == 2);
  CHECK(f.meta->bitmapAt(0) == std::vector<uint8_t>{0x2});
  // Data without a descriptor is not continued either.
  fs::remove(d.dir / "x.desc");
  std::ofstream(d.dir / "x") << "12345678";
  CHECK(storage::changedLayout(p, two) == std::optional<std::string>("no descriptor"));
}

// The clean shutdown's copy of the descriptor: what the session's records were written with.
TEST_CASE("a session's descriptor is archived beside its data", "[storage][rotation]") {
  testing::RunDir d;
  const auto p = ArtifactPaths::forStream(d.dir.string() + "/", "s", "data");
  storage::archiveDescriptor(p, twoInts(), 2);
  CHECK(filesIn(d.dir) == std::set<std::string>{"data.desc.old2"});
  CHECK(storage::Descriptor::load((d.dir / "data.desc.old2").string()).text() == twoInts().text());
}
