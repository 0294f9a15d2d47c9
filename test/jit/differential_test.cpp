// Differential test: random well-typed field programs run on the VM (the
// oracle) and on the JIT over the same random records, edge values and NULLs
// included; every output byte and NULL flag must agree.
// RDB_DIFF_PROGRAMS=N sets how many programs (default 10000); RDB_DIFF_SEED the seed.
#include <catch2/catch.hpp>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "build_config.h"
#include "ir/functions.hpp"
#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "ir/values.hpp"
#include "vm/vm.hpp"
#if RDB_WITH_JIT
#include "jit/jit.hpp"
#endif

#if RDB_WITH_JIT
namespace {

using ir::Op;
using ir::Token;
using ir::Type;

const Type kTypes[] = {Type::BYTE, Type::INTEGER, Type::UINT, Type::RATIONAL, Type::FLOAT, Type::DOUBLE};
// Every function the JIT lowers, from the function table.
std::vector<std::string> jitFunctions() {
  std::vector<std::string> names;
  for (int id = 0; id < ir::functionCount(); ++id)
    if (ir::functionById(id).jit != ir::JitImpl::NONE) names.push_back(ir::functionById(id).name);
  return names;
}
const std::vector<std::string> kFunctions = jitFunctions();

struct Gen {
  std::mt19937_64 rng;
  int inputs = 1;

  int pick(int n) { return int(rng() % uint64_t(n)); }

  ir::Value constant() {
    switch (pick(6)) {
      case 0: {
        static const int32_t edge[] = {INT32_MIN, INT32_MAX, -1, 0, 1, 2, 7, 1000, -1000};
        return pick(2) ? ir::Value(edge[pick(9)]) : ir::Value(int32_t(rng()));
      }
      case 1: {
        static const float edge[] = {0.0f, -0.0f, 1.5f, -2.5f, 1e30f, -1e-30f, INFINITY, -INFINITY, NAN, FLT_MAX};
        return pick(2) ? ir::Value(edge[pick(10)]) : ir::Value(float(int32_t(rng() % 2000) - 1000) / 8.0f);
      }
      case 2: {
        static const double edge[] = {0.0, -0.0, 0.1, -7.25, 1e300, -1e-300, INFINITY, NAN, DBL_MAX, 2147483648.0};
        return ir::Value(edge[pick(10)]);
      }
      case 3: return ir::Value(uint32_t(pick(2) ? rng() : uint64_t(pick(4))));
      case 4: return ir::Value(uint8_t(rng()));
      default: {
        if (pick(3) == 0) {  // near the bounds: results round
          static const int64_t edge[][2] = {{2147483647, 1},  {-2147483647, 1},         {1, 2147483647},
                                            {-1, 2147483646}, {2147483646, 2147483647}, {46341, 46340},
                                            {1000003, 999983}};
          auto& e = edge[pick(7)];
          return ir::Value(ir::Rational(e[0], e[1]));
        }
        int32_t d = 1 + pick(12);
        return ir::Value(ir::Rational(int32_t(pick(41)) - 20, d));
      }
    }
  }

  // Appends a random expression of at most `depth` levels.
  void expr(ir::Program& p, int depth) {
    if (depth == 0 || pick(4) == 0) {
      if (pick(3) == 0) p.push_back(Token(Op::PUSH_VAL, constant()));
      else p.push_back(Token(Op::PUSH_ID, ir::IdxPair("q", pick(inputs))));
      return;
    }
    switch (pick(7)) {
      case 0:
      case 1:
      case 2: {
        static const Op ops[] = {Op::ADD, Op::SUBTRACT, Op::MULTIPLY, Op::DIVIDE, Op::POWER};
        expr(p, depth - 1);
        expr(p, depth - 1);
        p.push_back(Token(ops[pick(5)]));
        return;
      }
      case 3: {
        static const Op ops[] = {Op::CMP_EQUAL, Op::CMP_NOT_EQUAL, Op::CMP_LT, Op::CMP_GT,
                                 Op::CMP_LE,    Op::CMP_GE,        Op::AND,    Op::OR};
        expr(p, depth - 1);
        expr(p, depth - 1);
        p.push_back(Token(ops[pick(8)]));
        return;
      }
      case 4:
        expr(p, depth - 1);
        p.push_back(Token(pick(2) ? Op::NEGATE : Op::NOT));
        return;
      default:
        expr(p, depth - 1);
        p.push_back(Token(Op::CALL, kFunctions[size_t(pick(int(kFunctions.size())))]));
        return;
    }
  }

  // A query of 1..5 input elements and 1..3 fields of random programs.
  void query(ir::Query& q, ir::Layout& in, ir::Layout& out) {
    q.id = "q";
    inputs = 1 + pick(5);
    std::vector<ir::Field> inSchema;
    for (int i = 0; i < inputs; ++i) {
      ir::Field f;
      f.type = kTypes[pick(6)];
      f.rlen = ir::typeSize(f.type);
      inSchema.push_back(f);
    }
    for (int i = 0, fields = 1 + pick(3); i < fields; ++i) {
      ir::Field f;
      f.name = "f" + std::to_string(i);
      f.type = kTypes[pick(6)];
      f.rlen = ir::typeSize(f.type);
      expr(f.program, 1 + pick(4));
      q.schema.push_back(f);
    }
    in = ir::Layout::of(inSchema);
    out = ir::Layout::of(q.schema);
  }

  void value(Type t, uint8_t* d) {
    switch (t) {
      case Type::BYTE: *d = uint8_t(rng()); break;
      case Type::INTEGER: {
        static const int32_t edge[] = {INT32_MIN, INT32_MAX, -1, 0, 1};
        int32_t v = pick(3) ? int32_t(int64_t(rng() % 20001) - 10000) : (pick(2) ? edge[pick(5)] : int32_t(rng()));
        memcpy(d, &v, 4);
        break;
      }
      case Type::UINT: {
        uint32_t v = pick(2) ? uint32_t(rng() % 1000) : uint32_t(rng());
        memcpy(d, &v, 4);
        break;
      }
      case Type::FLOAT: {
        static const float edge[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, FLT_MIN, 3.5f};
        float v = pick(3) ? float(int32_t(rng() % 20001) - 10000) / 16.0f : edge[pick(8)];
        memcpy(d, &v, 4);
        break;
      }
      case Type::DOUBLE: {
        static const double edge[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, DBL_MAX, 1e-310, -3.25};
        double v = pick(3) ? double(int64_t(rng() % 2000001) - 1000000) / 1024.0 : edge[pick(8)];
        memcpy(d, &v, 8);
        break;
      }
      case Type::RATIONAL: {
        ir::val::Rat r = pick(4) ? ir::val::ratNorm(int64_t(rng() % 2001) - 1000, 1 + int64_t(rng() % 50))
                                 : ir::val::ratNorm(int64_t(rng() % 4294967295ull) - 2147483647,
                                                    1 + int64_t(rng() % 2147483647));  // anywhere in range
        memcpy(d, &r, 8);
        break;
      }
      default: break;
    }
  }
};

}  // namespace

TEST_CASE("JIT and VM write identical bytes for random programs", "[jit][differential]") {
  std::string err;
  auto j = jit::Jit::create(err);
  REQUIRE(j);
  const char* env = getenv("RDB_DIFF_PROGRAMS");
  const int programs = env ? atoi(env) : 10000;
  const char* seedEnv = getenv("RDB_DIFF_SEED");
  Gen g{std::mt19937_64(seedEnv ? strtoull(seedEnv, nullptr, 10) : 20261130ULL)};
  const int batch = 250, recordsEach = 24;
  int compared = 0, nativeCount = 0;
  for (int base = 0; base < programs; base += batch) {
    struct Case {
      ir::Query q;
      ir::Layout in, out;
      vm::Program prog;
    };
    std::vector<Case> cases;
    for (int k = 0; k < batch && base + k < programs; ++k) {
      Case c;
      g.query(c.q, c.in, c.out);
      try {
        c.prog = vm::lowerFields(c.q, c.in, c.out);
      } catch (const ir::CompileError&) {
        continue;  // e.g. a string-only operation; not a JIT question
      }
      cases.push_back(std::move(c));
    }
    std::vector<jit::Request> reqs;
    for (size_t i = 0; i < cases.size(); ++i)
      reqs.push_back({"diff_" + std::to_string(base) + "_" + std::to_string(i),
                      &cases[i].prog,
                      &cases[i].in,
                      &cases[i].out,
                      false,
                      {}});
    auto res = j->compile("batch" + std::to_string(base), reqs);
    vm::Machine m;
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      INFO("program:\n" << vm::disassemble(c.prog) << "why not native: " << res[i].why);
      REQUIRE(res[i].fn != nullptr);
      ++nativeCount;
      std::vector<uint8_t> in(size_t(c.in.recordSize)), inNull(c.in.elems.size());
      std::vector<uint8_t> o1(size_t(c.out.recordSize)), n1(c.out.elems.size()), o2(o1.size()), n2(n1.size());
      for (int r = 0; r < recordsEach; ++r) {
        for (size_t e = 0; e < c.in.elems.size(); ++e) {
          g.value(c.in.elems[e].type, in.data() + c.in.elems[e].offset);
          inNull[e] = g.pick(8) == 0;
        }
        std::fill(o1.begin(), o1.end(), 0xAA);
        std::fill(o2.begin(), o2.end(), 0x55);
        // The roundings each counts (xretractor -v, /metrics) must agree too.
        const uint64_t r0 = ir::val::ratRounded();
        REQUIRE(m.run(c.prog, c.in, {in.data(), inNull.data()}, c.out, {o1.data(), n1.data()}));
        const uint64_t r1 = ir::val::ratRounded();
        res[i].fn(in.data(), inNull.data(), o2.data(), n2.data());
        const uint64_t r2 = ir::val::ratRounded();
        if (r1 - r0 != r2 - r1) {
          INFO("VM rounded " << r1 - r0 << ", JIT rounded " << r2 - r1);
          CHECK(r1 - r0 == r2 - r1);
        }
        if (o1 != o2 || n1 != n2) {
          std::ostringstream s;
          for (auto b : in) s << int(b) << ' ';
          INFO("input bytes: " << s.str());
          CHECK(o1 == o2);
          CHECK(n1 == n2);
        }
        ++compared;
      }
    }
    j->removeUnit("batch" + std::to_string(base));
  }
  INFO(nativeCount << " programs compiled natively, " << compared << " records compared");
  CHECK(nativeCount >= programs * 9 / 10);
  WARN("differential: " << nativeCount << " programs, " << compared << " records, no mismatch");
}

// The block form: a stream step over a run of records whose operands lie in
// separate records (in place in their producers' rings), against the VM on
// the joined input record, byte for byte; the VM's own block runs too.
TEST_CASE("JIT stream steps over runs of records agree with the VM", "[jit][differential][block]") {
  std::string err;
  auto j = jit::Jit::create(err);
  REQUIRE(j);
  const char* env = getenv("RDB_DIFF_PROGRAMS");
  const int programs = env ? atoi(env) / 4 : 2500;
  Gen g{std::mt19937_64(20261201ULL)};
  const int batch = 250, run = 17;
  int compared = 0;
  for (int base = 0; base < programs; base += batch) {
    struct Case {
      ir::Query q;
      ir::Layout in, out;
      vm::Program prog;
      std::vector<int> operands;  // first element of each operand
    };
    std::vector<Case> cases;
    for (int k = 0; k < batch && base + k < programs; ++k) {
      Case c;
      g.query(c.q, c.in, c.out);
      c.operands = {0};
      for (int e = 1; e < g.inputs; ++e)
        if (g.pick(2)) c.operands.push_back(e);
      try {
        c.prog = vm::lowerFields(c.q, c.in, c.out);
      } catch (const ir::CompileError&) {
        continue;
      }
      cases.push_back(std::move(c));
    }
    std::vector<jit::Request> reqs;
    for (size_t i = 0; i < cases.size(); ++i)
      reqs.push_back({"blk_" + std::to_string(base) + "_" + std::to_string(i), &cases[i].prog, &cases[i].in,
                      &cases[i].out, true, cases[i].operands});
    // Both tiers: the quick code the plan starts on and the optimised code it switches to.
    auto res = j->compile("blocks" + std::to_string(base), reqs);
    auto quick = j->compile("blocks" + std::to_string(base), reqs, jit::Tier::Quick);
    vm::Machine m;
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      INFO("program:\n" << vm::disassemble(c.prog) << "why not native: " << res[i].why);
      REQUIRE(res[i].block != nullptr);
      const size_t K = c.operands.size(), rec = size_t(c.in.recordSize), ne = c.in.elems.size();
      // Each record's operands are copied apart, each to its own buffer.
      std::vector<std::vector<uint8_t>> joined(run), joinedNull(run);
      std::vector<std::vector<uint8_t>> parts(size_t(run) * K), partNulls(size_t(run) * K);
      std::vector<const uint8_t*> d(size_t(run) * K), nl(size_t(run) * K);
      for (int r = 0; r < run; ++r) {
        joined[size_t(r)].resize(rec);
        joinedNull[size_t(r)].resize(ne);
        for (size_t e = 0; e < ne; ++e) {
          g.value(c.in.elems[e].type, joined[size_t(r)].data() + c.in.elems[e].offset);
          joinedNull[size_t(r)][e] = g.pick(8) == 0;
        }
        for (size_t k = 0; k < K; ++k) {
          const size_t first = size_t(c.operands[k]), last = k + 1 < K ? size_t(c.operands[k + 1]) : ne;
          const size_t from = size_t(c.in.elems[first].offset), to = last < ne ? size_t(c.in.elems[last].offset) : rec;
          auto& part = parts[size_t(r) * K + k];
          part.assign(joined[size_t(r)].begin() + long(from), joined[size_t(r)].begin() + long(to));
          auto& pn = partNulls[size_t(r) * K + k];
          pn.assign(joinedNull[size_t(r)].begin() + long(first), joinedNull[size_t(r)].begin() + long(last));
          d[size_t(r) * K + k] = part.data();
          nl[size_t(r) * K + k] = pn.data();
        }
      }
      const size_t orec = size_t(c.out.recordSize), one = c.out.elems.size();
      std::vector<uint8_t> o1(orec * run, 0xAA), n1(one * run), o2(orec * run, 0x55), n2(one * run);
      for (int r = 0; r < run; ++r)
        REQUIRE(m.run(c.prog, c.in, {joined[size_t(r)].data(), joinedNull[size_t(r)].data()}, c.out,
                      {o1.data() + size_t(r) * orec, n1.data() + size_t(r) * one}));
      res[i].block(d.data(), nl.data(), o2.data(), n2.data(), run);
      CHECK(o1 == o2);
      CHECK(n1 == n2);
      // The VM over the whole run at once: operands in place, and whole records.
      std::vector<uint8_t> o4(orec * run, 0x44), n4(one * run), o5(orec * run, 0x55), n5(one * run);
      REQUIRE(m.run(c.prog, c.in, vm::BlockIn{d.data(), nl.data(), c.operands}, c.out, {o4.data(), n4.data()}, run));
      CHECK(o1 == o4);
      CHECK(n1 == n4);
      std::vector<const uint8_t*> wd(static_cast<size_t>(run)), wn(static_cast<size_t>(run));
      for (int r = 0; r < run; ++r)
        wd[size_t(r)] = joined[size_t(r)].data(), wn[size_t(r)] = joinedNull[size_t(r)].data();
      REQUIRE(m.run(c.prog, c.in, vm::BlockIn{wd.data(), wn.data(), {}}, c.out, {o5.data(), n5.data()}, run));
      CHECK(o1 == o5);
      CHECK(n1 == n5);
      REQUIRE(quick[i].block != nullptr);
      std::vector<uint8_t> o3(orec * run, 0x33), n3(one * run);
      quick[i].block(d.data(), nl.data(), o3.data(), n3.data(), run);
      CHECK(o1 == o3);
      CHECK(n1 == n3);
      compared += run;
    }
    j->removeUnit("blocks" + std::to_string(base));
    j->removeUnit("blocks" + std::to_string(base), jit::Tier::Quick);
  }
  WARN("block differential: " << compared << " records, no mismatch");
}
// The function table's JIT column says which calls the JIT takes.
TEST_CASE("JIT support of each function is its table row's", "[jit]") {
  for (int id = 0; id < ir::functionCount(); ++id) {
    const ir::FunctionInfo& f = ir::functionById(id);
    ir::Query q;
    q.id = "q";
    ir::Field in, out;
    in.type = f.arg == ir::ArgRule::STRING ? Type::STRING : Type::INTEGER;
    in.rlen = in.type == Type::STRING ? 8 : ir::typeSize(in.type);
    out.name = "f0";
    out.type = ir::resultType(f, in.type);
    out.rlen = out.type == Type::STRING ? 32 : ir::typeSize(out.type);
    out.program = {Token(Op::PUSH_ID, ir::IdxPair("q", 0)), Token(Op::CALL, std::string(f.name))};
    q.schema = {out};
    vm::Program prog = vm::lowerFields(q, ir::Layout::of({in}), ir::Layout::of(q.schema));
    std::string why;
    INFO(f.name << ":\n" << vm::disassemble(prog));
    CHECK(jit::Jit::supports(prog, why) == (f.jit != ir::JitImpl::NONE));
  }
}

#endif
