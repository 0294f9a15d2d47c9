// Small helpers for the per-pass unit tests (test/front/*_test.cpp, test/ir/*_test.cpp):
// compact renderings of token programs and plan orders, and access to the
// plan between passes.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ir/passes/passes.hpp"
#include "lexer/lexer.hpp"
#include "support.hpp"

namespace Catch {
template <>
struct StringMaker<ir::Rational> {
  static std::string convert(const ir::Rational& r) { return r.str(); }
};
}  // namespace Catch

namespace ut {

// Tokens whose value carries meaning; every other token is rendered by name only.
inline bool showsValue(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::PUSH_ID:
    case Op::PUSH_ID1:
    case Op::PUSH_ID2:
    case Op::PUSH_ID3:
    case Op::PUSH_IDX:
    case Op::PUSH_VAL:
    case Op::PUSH_TSCAN:
    case Op::PUSH_STREAM:
    case Op::CALL:
    case Op::CALL2:
    case Op::STREAM_TIMEMOVE:
    case Op::STREAM_SUBTRACT:
    case Op::STREAM_AGSE: return true;
    default: return false;
  }
}

inline std::string tok(const ir::Token& t) { return showsValue(t.op) ? t.print() : ir::opName(t.op); }

// "PUSH_STREAM(core0) PUSH_STREAM(core1) STREAM_ADD"
inline std::string str(const ir::Program& p) {
  std::string out;
  for (auto& t : p) {
    if (!out.empty()) out += ' ';
    out += tok(t);
  }
  return out;
}

// Plan order as "a b c".
inline std::string order(const std::vector<ir::Query>& qs) {
  std::string out;
  for (auto& q : qs) {
    if (!out.empty()) out += ' ';
    out += q.id;
  }
  return out;
}
inline std::string order(const ir::Plan& p) { return order(p.queries); }

// The statements of a text, as the parser lowers them (no compilation).
inline std::vector<ir::Query> parse(const std::string& text) { return rql::parseText(text); }

// The message of the E a text's parse throws, or "" when it parses.
template <class E>
std::string errorOf(const std::string& text) {
  try {
    parse(text);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// Three INTEGER fields a b c of stream s, and the token program of the single
// field of `SELECT <e> STREAM t FROM s` over it.
inline const char* kDecl = "DECLARE a INTEGER, b INTEGER, c INTEGER STREAM s, 1 FILE 'x.dat'\n";
std::string expr(const std::string& e);

inline const ir::Query& stmt(const std::vector<ir::Query>& qs, const std::string& id) {
  for (auto& q : qs)
    if (q.id == id) return q;
  FAIL("statement '" << id << "' not found");
  throw std::logic_error("unreachable");
}

// Program of field i of statement/stream id.
inline std::string field(const std::vector<ir::Query>& qs, const std::string& id, size_t i = 0) {
  const ir::Query& q = stmt(qs, id);
  REQUIRE(i < q.schema.size());
  return str(q.schema[i].program);
}
inline std::string expr(const std::string& e) {
  auto qs = parse(std::string(kDecl) + "SELECT " + e + " STREAM t FROM s\n");
  return field(qs, "t", 0);
}
inline std::string field(const ir::Plan& p, const std::string& id, size_t i = 0) {
  REQUIRE(p.find(id) != nullptr);
  const ir::Query& q = p.get(id);
  REQUIRE(i < q.schema.size());
  return str(q.schema[i].program);
}
inline std::string from(const ir::Plan& p, const std::string& id) {
  REQUIRE(p.find(id) != nullptr);
  return str(p.get(id).program);
}

// A plan holding the parsed statements, before any pass has run.
inline ir::Plan rawPlan(const std::string& text, ir::Options opt = ir::defaultOptions()) {
  ir::Plan p;
  p.options = opt;
  p.queries = rql::parseText(text);
  return p;
}

// Number of plan entries whose id starts with prefix.
inline int countPrefix(const ir::Plan& p, const std::string& prefix) {
  int n = 0;
  for (auto& q : p.queries)
    if (q.id.rfind(prefix, 0) == 0) ++n;
  return n;
}

// Field shape "TYPE rlen x rarray".
inline std::string shape(const ir::Field& f) {
  return std::string(ir::typeName(f.type)) + " " + std::to_string(f.rlen) + "x" + std::to_string(f.rarray);
}
inline std::string shape(const ir::Plan& p, const std::string& id, size_t i = 0) {
  REQUIRE(p.find(id) != nullptr);
  const ir::Query& q = p.get(id);
  REQUIRE(i < q.schema.size());
  return shape(q.schema[i]);
}

inline ir::Options allOff() {
  ir::Options o;
  o.dedupSubstrates = o.shareEquivalentSelects = o.commutativeAdd = o.factorHashTimemoves = o.simplifyExpressions =
      false;
  return o;
}

// Message of the exception compiling text throws ("" when it compiles).
template <class E = std::exception>
std::string compileError(const std::string& text, ir::Options opt = ir::defaultOptions()) {
  try {
    testing::compileText(text, opt);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace ut
