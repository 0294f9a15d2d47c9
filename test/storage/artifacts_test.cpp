// The artifact family's names, scans and removal, descriptors from queries, and the element formatter.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "../engine/run_support.hpp"
#include "storage/artifacts.hpp"
#include "storage/element_text.hpp"

namespace {

namespace fs = std::filesystem;
using storage::ArtifactPaths;

void touch(const fs::path& p, size_t bytes = 0) { std::ofstream(p, std::ios::binary) << std::string(bytes, 'x'); }

}  // namespace

TEST_CASE("artifact names of a run's stream, a declared source and an inspected file", "[storage]") {
  auto s = ArtifactPaths::forStream("out/", "S", "data");
  CHECK(s.data() == "out/data");
  CHECK(s.desc() == "out/S.desc");
  CHECK(s.meta() == "out/data.meta");
  CHECK(s.shadow() == "out/data.shadow");
  CHECK(s.metaShadow() == "out/data.meta.shadow");
  CHECK(s.segment(3) == "out/data_segment_3");
  CHECK(ArtifactPaths::rotatedOf(s.data(), 2) == "out/data.old2");
  ir::Query q;
  q.id = "D";
  q.filename = "in.txt";
  CHECK(ArtifactPaths::forQuery("out/", q).data() == "in.txt");  // a declaration reads its source as written
  CHECK(ArtifactPaths::forQuery("out/", q).desc() == "out/D.desc");
  auto f = ArtifactPaths::forFile("dir", "x.old4");
  CHECK(f.data() == "dir/x.old4");
  CHECK(f.desc() == "dir/x.desc");
  CHECK(ArtifactPaths::forFile("", "x").desc() == "x.desc");
  CHECK(ArtifactPaths::atBase("b.old1").desc() == "b.old1.desc");
  CHECK(storage::shadowEntrySize(12) == 20);
}

TEST_CASE("segments, rotated files, the next rotation and removal", "[storage]") {
  testing::RunDir d;
  const std::string dir = d.dir.string() + "/";
  auto p = ArtifactPaths::forStream(dir, "S", "S");
  for (const char* n : {"S", "S.desc", "S.meta", "S.shadow", "S.meta.shadow", "S_segment_2", "S_segment_10",
                        "S_segment_2.shadow", "S_segment_x", "S.old3", "S.meta.old3", "Sx.old7", "T"})
    touch(d.dir / n);
  auto segs = p.segments();
  REQUIRE(segs.size() == 2);
  CHECK(segs[0].index == 2);
  CHECK(segs[1].index == 10);
  auto rot = p.rotated();
  REQUIRE(rot.size() == 3);  // the storage map's rule: any name that starts with the stem
  CHECK(rot[0].name == "Sx.old7");
  CHECK(rot[1].ext == "");
  CHECK(rot[2].ext == ".meta");
  CHECK(p.nextRotation(0) == 4);  // the engine's rule: a '.' or '_' after the stem
  CHECK(p.nextRotation(9) == 9);
  p.remove(storage::kAllArtifacts);
  std::set<std::string> left;
  for (auto& e : fs::directory_iterator(d.dir)) left.insert(e.path().filename().string());
  CHECK(left == std::set<std::string>{"S.old3", "S.meta.old3", "Sx.old7", "T"});
}

TEST_CASE("a directory listed once answers the scans as the directory does", "[storage]") {
  testing::RunDir d;
  const std::string dir = d.dir.string() + "/";
  auto p = ArtifactPaths::forStream(dir, "S", "S");
  for (const char* n : {"S", "S.desc", "S_segment_2", "S_segment_10", "S_segment_2.shadow", "S_segment_x", "S.old3",
                        "S.meta.old3", "Sx.old7", "R_segment_1", "T"})
    touch(d.dir / n);
  const storage::DirectoryListing listed(dir);  // "dir/" and "dir" are one directory
  CHECK(listed.lists(d.dir.string()));
  CHECK(listed.withPrefix("S_segment_").size() == 4);
  auto segs = p.segments(&listed);
  REQUIRE(segs.size() == 2);
  CHECK(segs[0].index == 2);
  CHECK(segs[1].index == 10);
  CHECK(segs[0].path == p.segments()[0].path);
  CHECK(p.nextRotation(0, &listed) == 4);
  // A listing of another directory is not taken for this one.
  testing::RunDir other;
  const storage::DirectoryListing elsewhere(other.dir.string());
  CHECK_FALSE(elsewhere.lists(dir));
  CHECK(p.segments(&elsewhere).size() == 2);
  CHECK(p.nextRotation(0, &elsewhere) == 4);
  p.remove(storage::kAllArtifacts, &listed);
  std::set<std::string> left;
  for (auto& e : fs::directory_iterator(d.dir)) left.insert(e.path().filename().string());
  CHECK(left == std::set<std::string>{"S.old3", "S.meta.old3", "Sx.old7", "R_segment_1", "T"});
}

TEST_CASE("the descriptor of a query", "[storage]") {
  ir::Query q;
  q.program.push_back(ir::Token{});  // a computed stream
  ir::Field f;
  f.name = "a";
  f.type = ir::Type::STRING;
  f.rlen = 4;
  f.rarray = 2;
  q.schema.push_back(f);
  q.retentionCapacity = 10;
  q.retentionSegments = 2;
  q.storageProfile = "posix";
  CHECK(storage::descriptorFor(q).textLine() == "{ STRING a[8] RETENTION 10 2 TYPE POSIX }");
  q.policyCapacity = 5;
  q.policyProfile = "memory";
  CHECK(storage::descriptorFor(q).textLine() == "{ STRING a[8] RETENTION 10 2 RETMEMORY 5 TYPE POSIX }");
  q.isVolatile = true;
  CHECK(storage::descriptorFor(q).profile() == "MEMORY");
  ir::Query decl;
  decl.filename = "in.txt";
  decl.sourceKind = ir::SourceKind::TEXTSOURCE;
  CHECK(storage::descriptorFor(decl).textLine() == "{ REF \"in.txt\" TYPE TEXTSOURCE }");
  CHECK(storage::schemaOf(storage::descriptorFor(q)).at(0).rlen == 8);
}

TEST_CASE("entry texts: arrays, hex, strings", "[storage]") {
  storage::DescEntry e;
  e.type = ir::Type::INTEGER;
  e.count = 2;
  int32_t v[2] = {-1, 26};
  CHECK(storage::entryText(e, reinterpret_cast<uint8_t*>(v)) == "-1 26");
  CHECK(storage::entryText(e, reinterpret_cast<uint8_t*>(v), storage::IntBase::HEX) == "ffffffff 0000001a");
  e.type = ir::Type::BYTE;
  e.count = 1;
  CHECK(storage::entryText(e, reinterpret_cast<uint8_t*>(v) + 4, storage::IntBase::HEX) == "1a");
  double dv = 0.1;
  CHECK(storage::elementText(ir::Type::DOUBLE, reinterpret_cast<uint8_t*>(&dv), 8, storage::IntBase::HEX) == "0.1");
  CHECK(storage::elementText(ir::Type::DOUBLE, reinterpret_cast<uint8_t*>(&dv), 4).empty());  // short of the type
  e.type = ir::Type::STRING;
  e.count = 3;
  CHECK(storage::entryText(e, reinterpret_cast<const uint8_t*>("abcdef")) == "abc");
}
