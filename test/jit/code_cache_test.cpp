// The JIT's code cache: a unit compiled once comes from the cache the next
// time, with the same results; a damaged entry is compiled again and filed
// anew; a directory that cannot be used leaves the cache off.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "build_config.h"
#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "vm/vm.hpp"

#if RDB_WITH_JIT
#include "jit/code_cache.hpp"
#include "jit/jit.hpp"

namespace fs = std::filesystem;
using ir::Op;
using ir::Token;
using ir::Type;

namespace {

struct Unit {
  ir::Query q;
  ir::Layout in, out;
  vm::Program prog;
  explicit Unit(int32_t k) {
    q.id = "q";
    ir::Field a;
    a.type = Type::INTEGER;
    a.rlen = 4;
    in = ir::Layout::of({a});
    ir::Field f;
    f.name = "f";
    f.type = Type::INTEGER;
    f.rlen = 4;
    // f = a * k + 1
    f.program = {Token(Op::PUSH_ID, ir::IdxPair("q", 0)), Token(Op::PUSH_VAL, ir::Value(k)), Token(Op::MULTIPLY),
                 Token(Op::PUSH_VAL, ir::Value(int32_t(1))), Token(Op::ADD)};
    q.schema = {f};
    out = ir::Layout::of(q.schema);
    prog = vm::lowerFields(q, in, out);
  }
  // One JIT holds one definition of a name: units sharing a JIT name their functions apart.
  std::vector<jit::Request> requests(const std::string& name = "cc_f") { return {{name, &prog, &in, &out, false, {}}}; }
};

int32_t call(jit::FieldFn fn, int32_t a) {
  uint8_t in[4], inNull[1] = {0}, out[4], outNull[1];
  memcpy(in, &a, 4);
  fn(in, inNull, out, outNull);
  int32_t r;
  memcpy(&r, out, 4);
  return r;
}

std::vector<fs::path> objects(const fs::path& dir) {
  std::vector<fs::path> v;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".o" && e.path().filename().string().rfind("rdbjit-", 0) == 0) v.push_back(e.path());
  return v;
}

fs::path freshDir(const char* name) {
  fs::path d = fs::temp_directory_path() / (std::string(name) + "." + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

// A new JIT with the cache in `dir`, as another process's would be, and its
// code of one unit.
struct Compiled {
  std::unique_ptr<jit::Jit> jit;  // keeps the code
  jit::Result r;
};
Compiled compileCached(const fs::path& dir, const std::vector<jit::Request>& reqs,
                       jit::Tier tier = jit::Tier::Optimised) {
  std::string err, why;
  Compiled c{jit::Jit::create(err), {}};
  REQUIRE(c.jit);
  REQUIRE(c.jit->useCache(dir.string(), 1 << 20, why));
  c.r = c.jit->compile("unit", reqs, tier)[0];
  REQUIRE(c.r.fn);
  return c;
}

// The unit is not taken from the cache (compiled afresh) and computes f(a) = want.
void compiledAfresh(const fs::path& dir, const std::vector<jit::Request>& reqs, int32_t a, int32_t want) {
  auto c = compileCached(dir, reqs);
  CHECK_FALSE(c.r.cached);
  CHECK(call(c.r.fn, a) == want);
}

}  // namespace

TEST_CASE("a unit compiled once comes from the code cache with the same code", "[jit][cache]") {
  REQUIRE_FALSE(jit::buildId().empty());
  const fs::path dir = freshDir("rdb-jit-cache");
  std::string err, why;
  for (jit::Tier tier : {jit::Tier::Quick, jit::Tier::Optimised}) {
    Unit u(7);
    auto first = compileCached(dir, u.requests(), tier);
    CHECK_FALSE(first.r.cached);
    CHECK(call(first.r.fn, 6) == 43);
    // Another process asking for the same unit gets it from the cache.
    auto second = compileCached(dir, u.requests(), tier);
    CHECK(second.r.cached);
    CHECK(call(second.r.fn, 6) == 43);
    CHECK(call(second.r.fn, -5) == -34);
    // A different program is a different unit, even under the same names.
    Unit v(9);
    auto third = compileCached(dir, v.requests(), tier);
    CHECK_FALSE(third.r.cached);
    CHECK(call(third.r.fn, 6) == 55);
  }
  CHECK(objects(dir).size() == 4);  // two programs, two tiers
  fs::remove_all(dir);
}

TEST_CASE("a damaged code cache entry is compiled again and filed anew", "[jit][cache]") {
  const fs::path dir = freshDir("rdb-jit-cache-bad");
  Unit u(3);
  compileCached(dir, u.requests());
  auto files = objects(dir);
  REQUIRE(files.size() == 1);
  const auto size = fs::file_size(files[0]);
  for (int damage = 0; damage < 3; ++damage) {
    if (damage == 0) {
      std::ofstream(files[0], std::ios::binary | std::ios::trunc) << "not an object file";
    } else if (damage == 1) {
      fs::resize_file(files[0], size / 2);  // cut short
    } else {
      std::ofstream(files[0], std::ios::binary | std::ios::trunc);  // empty
    }
    compiledAfresh(dir, u.requests(), 5, 16);
    CHECK(fs::file_size(files[0]) == size);  // filed anew, whole
    auto again = compileCached(dir, u.requests());
    CHECK(again.r.cached);
    CHECK(call(again.r.fn, 5) == 16);
  }
  fs::remove_all(dir);
}

TEST_CASE("a code cache over budget drops its least recently used entries", "[jit][cache]") {
  const fs::path dir = freshDir("rdb-jit-cache-budget");
  std::string err, why;
  auto j = jit::Jit::create(err);
  REQUIRE(j->useCache(dir.string(), 1, why));  // every entry is over budget
  for (int k = 2; k < 6; ++k) {
    Unit u(k);
    auto reqs = u.requests("cc_f" + std::to_string(k));
    REQUIRE(j->compile("unit" + std::to_string(k), reqs)[0].fn);
    CHECK(objects(dir).size() <= 1);
  }
  fs::remove_all(dir);
}

TEST_CASE("a code cache directory that cannot be used leaves the cache off", "[jit][cache]") {
  const fs::path file = freshDir("rdb-jit-cache-file");
  std::ofstream(file) << "a file, not a directory";
  std::string err, why;
  auto j = jit::Jit::create(err);
  CHECK_FALSE(j->useCache((file / "jit").string(), 1 << 20, why));
  CHECK_FALSE(why.empty());
  Unit u(2);
  auto reqs = u.requests();
  auto r = j->compile("unit", reqs);
  REQUIRE(r[0].fn);
  CHECK_FALSE(r[0].cached);
  fs::remove(file);
  // A directory others may write (code would be run from it) is refused, and left as it is.
  const fs::path open = freshDir("rdb-jit-cache-open");
  fs::create_directory(open);
  fs::permissions(open, fs::perms::all, fs::perm_options::replace);
  auto k = jit::Jit::create(err);
  why.clear();
  CHECK_FALSE(k->useCache(open.string(), 1 << 20, why));
  CHECK_THAT(why, Catch::Contains("not the user's alone"));
  CHECK((fs::status(open).permissions() & fs::perms::others_write) != fs::perms::none);
  fs::remove_all(open);
}

TEST_CASE("an entry filed under another unit's name is not run", "[jit][cache]") {
  const fs::path dir = freshDir("rdb-jit-cache-swap");
  Unit a(4), b(6);
  compileCached(dir, a.requests());
  const auto aFile = objects(dir).at(0);
  compileCached(dir, b.requests());
  fs::path bFile;
  for (auto& f : objects(dir))
    if (f != aFile) bFile = f;
  REQUIRE_FALSE(bFile.empty());
  // b's entry replaced by a's code, whole and valid: b must still get b's code.
  fs::copy_file(aFile, bFile, fs::copy_options::overwrite_existing);
  compiledAfresh(dir, b.requests(), 5, 31);
  // A link in its place is not followed either.
  fs::remove(bFile);
  fs::create_symlink(aFile, bFile);
  compiledAfresh(dir, b.requests(), 5, 31);
  fs::remove_all(dir);
}

TEST_CASE("a code cache prunes only its own files", "[jit][cache]") {
  const fs::path dir = freshDir("rdb-jit-cache-shared");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  // The user's files beside it: an object file larger than the budget, an old temporary file.
  std::ofstream(dir / "libbig.o") << std::string(4096, 'x');
  std::ofstream(dir / "report.tmp.txt") << "notes";
  fs::last_write_time(dir / "report.tmp.txt", fs::file_time_type::clock::now() - std::chrono::hours(5));
  std::string err, why;
  auto j = jit::Jit::create(err);
  REQUIRE(j->useCache(dir.string(), 1, why));
  for (int k = 2; k < 5; ++k) {
    Unit u(k);
    REQUIRE(j->compile("unit" + std::to_string(k), u.requests("cc_f" + std::to_string(k)))[0].fn);
  }
  CHECK(fs::exists(dir / "libbig.o"));
  CHECK(fs::exists(dir / "report.tmp.txt"));
  fs::remove_all(dir);
}
#endif
