// The interval sweeps against the reference algorithm written out plainly
// (sort the whole plan, sweep, sort twice, ...) on generated plans: the same
// intervals, the same final order, the same errors.
#include <random>

#include "../unit_helpers.hpp"

namespace passes = ir::passes;

namespace {

// compiler.md §5.4 as written, on whole queries.
void referenceIntervals(ir::Plan& p) {
  auto sortAll = [&] {
    std::sort(p.queries.begin(), p.queries.end(),
              [](const ir::Query& a, const ir::Query& b) { return a.interval < b.interval; });
  };
  // Every Δ from the operator table, with the operands' current Δ.
  auto delta = [&](const ir::Query& q) -> ir::Rational {
    using ir::Op;
    using ir::Rational;
    const ir::Program& prog = q.program;
    const ir::Query& s1 = p.get(std::get<std::string>(prog[0].v));
    const Rational d1 = s1.interval;
    if (prog.size() == 1) return d1;
    const ir::Token& op = prog.back();
    if (op.op == Op::STREAM_SUBTRACT) return std::get<Rational>(op.v);
    if (d1.isZero()) return Rational(0);
    switch (op.op) {
      case Op::STREAM_ADD:
      case Op::STREAM_HASH: {
        const Rational d2 = p.get(std::get<std::string>(prog[1].v)).interval;
        if (d2.isZero()) return Rational(0);
        return op.op == Op::STREAM_ADD ? (d1 < d2 ? d1 : d2) : d1 * d2 / (d1 + d2);
      }
      case Op::STREAM_DEHASH_DIV:
      case Op::STREAM_DEHASH_MOD: {
        Rational r = std::get<Rational>(prog[1].v);
        if (r == d1) throw ir::RefError("equal");
        Rational d = d1 * r / abs(d1 - r);
        if (d < d1) throw ir::RefError("faster");
        return d;
      }
      case Op::STREAM_AGSE: {
        auto [k, w] = std::get<std::pair<int32_t, int32_t>>(op.v);
        return d1 * Rational(k) / Rational(ir::flatWidth(s1));
      }
      default: return d1;
    }
  };
  for (;;) {
    sortAll();
    bool again = false;
    int resolvedNow = 0;
    for (auto& q : p.queries) {
      if (q.program.empty()) continue;
      ir::Rational d = delta(q);
      if (d.isZero()) {
        again = true;
        continue;
      }
      if (q.interval.isZero()) ++resolvedNow;
      q.interval = d;
    }
    if (!again) break;
    if (resolvedNow == 0) throw ir::CompileError("cycle");
    sortAll();
  }
  sortAll();
}

// A plan of streams over a few sources, with every operator and many equal intervals.
std::string generate(std::mt19937& g, int streams) {
  auto pick = [&](int n) { return int(g() % unsigned(n)); };
  const char* intervals[] = {"1", "1/2", "1/3", "2", "1/10", "3/2", "1/4"};
  std::vector<std::string> names;
  std::string t;
  for (int i = 0; i < 4; ++i) {
    names.push_back("d" + std::to_string(i));
    t += "DECLARE a INTEGER, b INTEGER STREAM d" + std::to_string(i) + ", " + intervals[pick(7)] + " FILE 'x.dat'\n";
  }
  std::vector<std::string> stmts;
  for (int i = 0; i < streams; ++i) {
    const std::string a = names[size_t(pick(int(names.size())))], b = names[size_t(pick(int(names.size())))];
    std::string from;
    switch (pick(7)) {
      case 0: from = a + "+" + b; break;
      case 1: from = "(" + a + ">1)#(" + b + ">1)"; break;
      case 2: from = a + ">" + std::to_string(pick(3)); break;
      case 3: from = "(" + a + "+" + b + ")@(1,2)"; break;
      case 4: from = a + "-10"; break;
      case 5: from = a + "&7"; break;
      default: from = a; break;
    }
    stmts.push_back("SELECT * STREAM q" + std::to_string(i) + " FROM " + from + "\n");
    names.push_back("q" + std::to_string(i));
  }
  std::shuffle(stmts.begin(), stmts.end(), g);  // consumers before producers too
  for (auto& s : stmts) t += s;
  return t;
}

}  // namespace

TEST_CASE("interval sweeps: the same intervals, order and errors as the plain algorithm", "[intervals][sweeps]") {
  std::mt19937 g(11);
  int compared = 0, errors = 0;
  for (int round = 0; round < 300; ++round) {
    const std::string text = generate(g, 5 + round % 60);
    ir::Plan p = ut::rawPlan(text);
    try {
      passes::snapshotNamedSourceRefs(p);
      passes::extractIntermediateStreams(p);
      passes::expandSchemaWildcards(p);
    } catch (const std::exception&) {
      continue;  // not a plan for this comparison
    }
    ir::Plan ref = p;
    std::string want, got;
    try {
      referenceIntervals(ref);
    } catch (const std::exception& e) {
      want = "error";
    }
    try {
      passes::resolveStreamIntervals(p);
    } catch (const std::exception& e) {
      got = "error";
    }
    INFO(text);
    REQUIRE(got == want);
    if (!want.empty()) {
      ++errors;
      continue;
    }
    REQUIRE(ut::order(p) == ut::order(ref));
    for (size_t i = 0; i < p.queries.size(); ++i) REQUIRE(p.queries[i].interval == ref.queries[i].interval);
    ++compared;
  }
  CHECK(compared > 100);
}
