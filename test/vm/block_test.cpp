// The VM runs a block of records an instruction at a time; each record of the
// block must come out as it does alone, strings included, and blocks longer
// than the machine's lanes too.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <set>

#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "vm/vm.hpp"

using ir::Op;
using ir::Token;
using ir::Type;

namespace {

ir::Field field(const std::string& name, Type t, int rlen, ir::Program p = {}) {
  ir::Field f;
  f.name = name;
  f.type = t;
  f.rlen = rlen;
  f.program = std::move(p);
  return f;
}

}  // namespace

TEST_CASE("a block of records gives each record's own bytes, strings included", "[vm][block]") {
  ir::Query q;
  q.id = "q";
  auto id = [](int e) { return Token(Op::PUSH_ID, ir::IdxPair("q", e)); };
  // n INTEGER, s STRING[8], r RATIONAL.
  const ir::Layout in =
      ir::Layout::of({field("n", Type::INTEGER, 4), field("s", Type::STRING, 8), field("r", Type::RATIONAL, 8)});
  q.schema = {
      field("cat", Type::STRING, 12, {id(1), id(1), Token(Op::ADD)}),  // concatenation, cut to 12
      field("text", Type::STRING, 6, {id(0)}),                         // INTEGER as text
      field("len", Type::INTEGER, 4, {id(1), Token(Op::CALL, std::string("Length"))}),
      field("sq", Type::INTEGER, 4, {id(0), id(0), Token(Op::MULTIPLY)}),
      field("q", Type::RATIONAL, 8, {id(2), id(0), Token(Op::DIVIDE)}),  // NULL where n = 0
      field("lt", Type::INTEGER, 4, {id(1), id(0), Token(Op::CMP_LT)}),  // text against a number
  };
  const ir::Layout out = ir::Layout::of(q.schema);
  const vm::Program prog = vm::lowerFields(q, in, out);

  // More records than the machine's lanes, so the block is run in parts.
  const int k = 700;
  std::mt19937 rng(20261206);
  std::vector<std::vector<uint8_t>> recs(k, std::vector<uint8_t>(size_t(in.recordSize))),
      flags(k, std::vector<uint8_t>(in.elems.size()));
  std::vector<const uint8_t*> d(k), nl(k);
  for (int i = 0; i < k; ++i) {
    const int32_t n = int32_t(rng() % 41) - 20;
    memcpy(recs[size_t(i)].data() + in.elems[0].offset, &n, 4);
    const std::string s = std::to_string(rng() % 100000).substr(0, 1 + rng() % 6);
    memcpy(recs[size_t(i)].data() + in.elems[1].offset, s.data(), s.size());
    const int32_t r[2] = {int32_t(rng() % 99) - 49, int32_t(1 + rng() % 9)};
    memcpy(recs[size_t(i)].data() + in.elems[2].offset, r, 8);
    for (auto& f : flags[size_t(i)]) f = rng() % 7 == 0;
    d[size_t(i)] = recs[size_t(i)].data();
    nl[size_t(i)] = flags[size_t(i)].data();
  }
  const size_t rec = size_t(out.recordSize), ne = out.elems.size();
  std::vector<uint8_t> one(rec * k, 0xAA), oneNull(ne * k), all(rec * k, 0x55), allNull(ne * k);
  vm::Machine m;
  for (int i = 0; i < k; ++i)
    REQUIRE(m.run(prog, in, vm::RecordIn{d[size_t(i)], nl[size_t(i)]}, out,
                  vm::RecordOut{one.data() + size_t(i) * rec, oneNull.data() + size_t(i) * ne}));
  REQUIRE(m.run(prog, in, vm::BlockIn{d.data(), nl.data(), {}}, out, {all.data(), allNull.data()}, k));
  CHECK(one == all);
  CHECK(oneNull == allNull);
  // Not all of one kind: some records NULL in each field, some not.
  for (size_t e = 0; e < ne; ++e) {
    int nulls = 0;
    for (int i = 0; i < k; ++i) nulls += allNull[size_t(i) * ne + e];
    CHECK(nulls > 0);
    CHECK(nulls < k);
  }
}

TEST_CASE("operands read in place give the bytes of the whole record", "[vm][block]") {
  // Two operand records (n INTEGER, s STRING[6]) and (m INTEGER, t STRING[6]),
  // as a join's: the whole input record is the two side by side.
  ir::Query q;
  q.id = "q";
  auto id = [](int e) { return Token(Op::PUSH_ID, ir::IdxPair("q", e)); };
  const ir::Layout in = ir::Layout::of({field("n", Type::INTEGER, 4), field("s", Type::STRING, 6),
                                        field("m", Type::INTEGER, 4), field("t", Type::STRING, 6)});
  q.schema = {
      field("cat", Type::STRING, 10, {id(1), id(3), Token(Op::ADD)}),
      field("sum", Type::INTEGER, 4, {id(0), id(2), Token(Op::ADD)}),
      field("lt", Type::INTEGER, 4, {id(3), id(0), Token(Op::CMP_LT)}),
      field("len", Type::INTEGER, 4, {id(1), Token(Op::CALL, std::string("Length"))}),
  };
  const ir::Layout out = ir::Layout::of(q.schema);
  const vm::Program prog = vm::lowerFields(q, in, out);
  const int operands[] = {0, 2};
  const int bOffset = in.elems[2].offset;

  const int k = 600;  // more than the lanes
  std::mt19937 rng(61206);
  std::vector<std::vector<uint8_t>> whole(k, std::vector<uint8_t>(size_t(in.recordSize))),
      wholeNull(k, std::vector<uint8_t>(in.elems.size()));
  for (int i = 0; i < k; ++i) {
    for (int e : {0, 2}) {
      const int32_t n = int32_t(rng() % 2001) - 1000;
      memcpy(whole[size_t(i)].data() + in.elems[size_t(e)].offset, &n, 4);
      const std::string s = std::to_string(rng() % 1000000).substr(0, rng() % 7);
      memcpy(whole[size_t(i)].data() + in.elems[size_t(e) + 1].offset, s.data(), s.size());
    }
    for (auto& f : wholeNull[size_t(i)]) f = rng() % 5 == 0;
  }
  // The same records apart, as each operand's stream holds them.
  std::vector<const uint8_t*> d(k), nl(k), parts(2 * k), partNulls(2 * k);
  for (int i = 0; i < k; ++i) {
    d[size_t(i)] = whole[size_t(i)].data();
    nl[size_t(i)] = wholeNull[size_t(i)].data();
    parts[size_t(2 * i)] = whole[size_t(i)].data();
    parts[size_t(2 * i + 1)] = whole[size_t(i)].data() + bOffset;
    partNulls[size_t(2 * i)] = wholeNull[size_t(i)].data();
    partNulls[size_t(2 * i + 1)] = wholeNull[size_t(i)].data() + 2;
  }
  const size_t rec = size_t(out.recordSize), ne = out.elems.size();
  std::vector<uint8_t> a(rec * k, 0xAA), aNull(ne * k), b(rec * k, 0x55), bNull(ne * k);
  vm::Machine m;
  REQUIRE(m.run(prog, in, vm::BlockIn{d.data(), nl.data(), {}}, out, {a.data(), aNull.data()}, k));
  REQUIRE(m.run(prog, in, vm::BlockIn{parts.data(), partNulls.data(), operands}, out, {b.data(), bNull.data()}, k));
  CHECK(a == b);
  CHECK(aNull == bNull);
  // The concatenations differ from record to record (not one lane's bytes everywhere).
  std::set<std::string> cats;
  for (int i = 0; i < k; ++i) cats.insert(std::string(reinterpret_cast<const char*>(a.data()) + size_t(i) * rec, 10));
  CHECK(cats.size() > size_t(k / 2));
}
