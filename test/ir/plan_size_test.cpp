// Plan size: pathological plans either compile to the right plan or are
// refused with a located plan-size error, before the work the limit bounds.
// (No timings here: the sizes are chosen so that the compiler, being
// near-linear, handles each case quickly; a superlinear pass would show as a
// slow test run, and a limit checked too late as memory.)
#include <numeric>
#include <random>

#include "../unit_helpers.hpp"

namespace passes = ir::passes;

namespace {

std::string decl(const std::string& name, const std::string& fields = "a INTEGER") {
  return "DECLARE " + fields + " STREAM " + name + ", 1 FILE '" + name + ".dat'\n";
}

std::string repeat(const std::string& s, int n, const std::string& sep = "") {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? sep : "") + s;
  return out;
}

// Chain of n SELECTs: s1 FROM s0, s2 FROM s1, ...
std::string chain(int n) {
  std::string t = decl("s0");
  for (int i = 1; i <= n; ++i) t += "SELECT * STREAM s" + std::to_string(i) + " FROM s" + std::to_string(i - 1) + "\n";
  return t;
}

struct Refusal {
  std::string message;
  ir::SrcLoc loc;
};

// The CompileError compiling text throws (fails the test when it compiles).
Refusal refusal(const std::string& text) {
  try {
    testing::compileText(text);
  } catch (const ir::CompileError& e) {
    return {e.what(), e.loc};
  }
  FAIL("compiled, expected a plan-size error");
  return {};
}

}  // namespace

TEST_CASE("a chain of 1000 SELECTs compiles, in order; 4000 are refused at the first stream past the limit",
          "[limits][chain]") {
  ir::Plan p = testing::compileText(chain(1000));
  REQUIRE(p.queries.size() == 1001);
  for (int i = 0; i <= 1000; ++i) CHECK(p.queries[size_t(i)].id == "s" + std::to_string(i));
  CHECK(p.get("s1000").interval == ir::Rational(1));
  CHECK(ut::field(p, "s1000") == "PUSH_ID(s1000[0])");

  Refusal r = refusal(chain(4000));
  CHECK(r.message ==
        "stream 's1025' is computed through a chain of 1025 streams from a declared stream; the limit is 1024");
  CHECK(r.loc.line == 1026);
  CHECK(r.loc.col == 1);
  // At the limit exactly, it compiles.
  CHECK(testing::compileText(chain(int(passes::kMaxDepth))).queries.size() == size_t(passes::kMaxDepth) + 1);
}

TEST_CASE("more than 8192 streams are refused at the statement that passes the limit", "[limits][streams]") {
  std::string t;
  for (int i = 0; i < 3000; ++i) t += decl("d" + std::to_string(i));
  for (int i = 0; i < 3000; ++i)
    t += "SELECT * STREAM q" + std::to_string(i) + " FROM (d" + std::to_string(i) + ">1)>1\n";  // 2 streams each
  Refusal r = refusal(t);
  // 3000 declarations + 2 per SELECT: the 2597th SELECT (line 5597) brings the count to 8194.
  CHECK(r.message.find("the plan has more than 8192 streams") == 0);
  CHECK(r.message.find("stream 'q2596'") != std::string::npos);
  CHECK(r.loc.line == 3000 + 2597);
}

TEST_CASE("a FROM sum of 300 streams compiles; of 2000 streams it is refused before the schemas are built",
          "[limits][sum]") {
  auto sum = [](int n) {
    std::string t, from;
    for (int i = 0; i < n; ++i) {
      t += decl("s" + std::to_string(i));
      from += (i ? "+s" : "s") + std::to_string(i);
    }
    return t + "SELECT * STREAM q FROM " + from + "\n";
  };
  ir::Plan p = testing::compileText(sum(300));
  const ir::Query& q = p.get("q");
  REQUIRE(q.schema.size() == 300);
  CHECK(ut::countPrefix(p, "STREAM_ADD_") == 298);
  CHECK(ut::str(q.schema[299].program) == "PUSH_ID(q[299])");
  CHECK(ut::from(p, "q").find("PUSH_STREAM(s299) STREAM_ADD") != std::string::npos);

  // Its partial sums form a chain of 1999 streams (and would hold 2 million elements).
  Refusal r = refusal(sum(2000));
  CHECK(r.message ==
        "an intermediate stream of the FROM expression of this statement is computed through a chain of 1025 "
        "streams from a declared stream; the limit is 1024");
  CHECK(r.loc.line == 2001);
  CHECK(r.loc.col == 1);
}

TEST_CASE("s + s + ... + s: 500 terms compile (every partial sum a substrate), 750 two-field terms are refused",
          "[limits][add]") {
  ir::Plan p = testing::compileText(decl("s") + "SELECT * STREAM q FROM " + repeat("s", 500, "+") + "\n");
  REQUIRE(p.get("q").schema.size() == 500);
  CHECK(ut::countPrefix(p, "STREAM_ADD_") == 498);
  int64_t elements = 0;
  for (auto& s : p.queries) elements += ir::flatWidth(s);
  CHECK(elements == 1 + (500 * 501 / 2 - 1));  // s, then sums of 2..500 elements

  Refusal r = refusal(decl("s", "a INTEGER, b INTEGER") + "SELECT * STREAM q FROM " + repeat("s", 750, "+") + "\n");
  CHECK(r.message.find("an intermediate stream of the FROM expression of this statement brings the total") !=
        std::string::npos);
  CHECK(r.loc.line == 2);
}

TEST_CASE("s # s # ... # s: 500 terms compile; 1026 terms pass the chain limit", "[limits][hash]") {
  ir::Plan p = testing::compileText(decl("s", "a INTEGER, b INTEGER") + "SELECT * STREAM q FROM " +
                                    repeat("s", 500, "#") + "\n");
  CHECK(p.get("q").interval == ir::Rational(1, 500));
  CHECK(p.get("q").schema.size() == 2);
  CHECK(ut::countPrefix(p, "STREAM_HASH_") == 498);
  CHECK(p.queries.back().id == "q");

  Refusal r = refusal(decl("s") + "SELECT * STREAM q FROM " + repeat("s", 1026, "#") + "\n");
  CHECK(r.message ==
        "stream 'q' is computed through a chain of 1025 streams from a declared stream; the limit is 1024");
  CHECK(r.loc.line == 2);
}

TEST_CASE("unary minus: 10^4 fold or stay as written, 10^5 are refused as one oversized expression",
          "[limits][negate]") {
  const std::string s = decl("s");
  // An even number of minus signs over a literal folds away ("-5" is one literal).
  ir::Plan folded = testing::compileText(s + "SELECT " + repeat("- ", 10000) + "5 STREAM q FROM s\n");
  CHECK(ut::field(folded, "q") == "PUSH_VAL(5)");
  // Over a field nothing folds: 10^4 NEGATEs stay.
  ir::Plan kept = testing::compileText(s + "SELECT " + repeat("- ", 10000) + "s[0] STREAM q FROM s\n");
  REQUIRE(kept.get("q").schema[0].program.size() == 10001);
  CHECK(kept.get("q").schema[0].program.back().op == ir::Op::NEGATE);

  Refusal r = refusal(s + "SELECT " + repeat("- ", 100000) + "s[0] STREAM q FROM s\n");
  CHECK(r.message == "the expression of field 'q_0' of stream 'q' has 100001 tokens; the limit is 16384");
  CHECK(r.loc.line == 2);
}

TEST_CASE("nested unary minus: 1000 levels compile, 13827 are refused at the first parenthesis too deep",
          "[limits][nesting]") {
  const std::string s = decl("s");
  auto nested = [](int n, const std::string& inner) { return repeat("-(", n) + inner + repeat(")", n); };
  ir::Plan p = testing::compileText(s + "SELECT " + nested(1000, "7") + " STREAM q FROM s\n");
  CHECK(ut::field(p, "q") == "PUSH_VAL(7)");  // 1000 negations of a constant fold
  ir::Plan f = testing::compileText(s + "SELECT " + nested(999, "s[0]") + " STREAM q FROM s\n");
  CHECK(f.get("q").schema[0].program.size() == 1000);

  Refusal r;
  try {
    testing::compileText(s + "SELECT " + nested(13827, "s[0]") + " STREAM q FROM s\n");
    FAIL("compiled");
  } catch (const ir::CompileError& e) {
    r = {e.what(), e.loc};
  }
  CHECK(r.message == "expression nested more than 1000 parentheses deep; the limit is 1000");
  CHECK(r.loc.line == 2);
  CHECK(r.loc.col == 8 + 2 * 1000 + 1);  // the 1001st "(" of "SELECT -(-(..."
}

TEST_CASE("a long expression nested deep is refused by the parser as it grows past 16384 tokens", "[limits][nesting]") {
  const std::string s = decl("s");
  auto rightNested = [](int terms) {
    std::string inner = repeat("s[0]", terms, "+"), e;
    for (int i = 0; i < 999; ++i) e += inner + "+(";
    return e + "s[0]" + repeat(")", 999);
  };
  ir::Plan p = testing::compileText(s + "SELECT " + rightNested(4) + " STREAM q FROM s\n");
  CHECK(p.get("q").schema[0].program.size() == 999 * 8 + 1);
  Refusal r = refusal(s + "SELECT " + rightNested(40) + " STREAM q FROM s\n");
  CHECK(r.message == "expression of more than 16384 tokens; the limit is 16384");
  CHECK(r.loc.line == 2);
  CHECK(r.loc.col > 1);  // at the operator that makes it too long
}

TEST_CASE("a window of 65536 compiles; the plan's element limit counts all streams together", "[limits][agse]") {
  const std::string s = decl("s", "a BYTE");
  ir::Plan p = testing::compileText(s + "SELECT * STREAM q FROM s@(1,65536)\n");
  const ir::Query& q = p.get("q");
  REQUIRE(q.schema.size() == 65536);
  CHECK(q.interval == ir::Rational(1));
  CHECK(ut::str(q.schema.back().program) == "PUSH_ID(q[65535])");
  CHECK(ut::shape(q.schema.back()) == "BYTE 1x1");

  // Four fields of 65536 elements make a record of 2^18; a copy of it and one more element pass 2^19.
  Refusal r = refusal(decl("s", "a BYTE[65536], b BYTE[65536], c BYTE[65536], d BYTE[65536]") +
                      "SELECT * STREAM q FROM s\nSELECT s[0] STREAM r FROM s\n");
  CHECK(r.message ==
        "the records of all streams together would have 524289 elements (stream 'r' brings the total over the "
        "limit); the limit is 524288");
  CHECK(r.loc.line == 3);
}

TEST_CASE("a field is limited in elements (STRING: bytes), a record in bytes", "[limits][fields]") {
  // The book's cases: 20000 INTEGERs are 80000 bytes, DOUBLE[65536] half a MiB.
  ir::Plan a =
      testing::compileText("DECLARE a INTEGER[20000] STREAM s, 1 BINFILE 'x'\nSELECT s[19999] STREAM q FROM s\n");
  CHECK(a.get("s").schema[0].rarray == 20000);
  ir::Plan b = testing::compileText(decl("core0", "a DOUBLE[65536]") + "SELECT core0[0] STREAM dst FROM core0>2\n");
  CHECK(ut::shape(b.get("dst").schema[0]) == "DOUBLE 8x1");
  CHECK_NOTHROW(testing::compileText(decl("s", "a STRING[65536]") + "SELECT * STREAM q FROM s\n"));

  Refusal e = refusal(decl("s", "a INTEGER[65537]") + "SELECT * STREAM q FROM s\n");
  CHECK(e.message == "field 'a' has 65537 elements; the limit is 65536");
  CHECK(e.loc.line == 1);
  CHECK(e.loc.col == 19);
  Refusal t = refusal(decl("s", "a STRING[65537]") + "SELECT * STREAM q FROM s\n");
  CHECK(t.message == "field 'a' has 65537 bytes; the limit is 65536");
  // The record's 1 MiB stays: three DOUBLE[65536] are 1.5 MiB.
  Refusal m = refusal(decl("s", "a DOUBLE[65536], b DOUBLE[65536], c DOUBLE[65536]") + "SELECT * STREAM q FROM s\n");
  CHECK(m.message == "a record of stream 's' has 1572864 bytes; the limit is 1 MiB");
  // A derived field counts too: two strings of 40000 bytes concatenated.
  Refusal d = refusal(decl("s") + "SELECT to_string(s[0] : 40000) + to_string(s[0] : 40000) STREAM q FROM s\n");
  CHECK(d.message == "field 'q_0' of stream 'q' has 80000 bytes; the limit is 65536");
  CHECK(d.loc.line == 2);
}

TEST_CASE("history reach: shifts, AGSE steps and widths, DUMP bounds up to 65536", "[limits][reach]") {
  const std::string s = decl("s", "a BYTE");
  const std::string rule = "SELECT * STREAM q FROM s\nRULE r ON q WHEN q[0] > 1 DO ";
  for (const std::string& ok :
       std::vector<std::string>{"SELECT * STREAM q FROM s > 65536\n", "SELECT * STREAM q FROM s@(65536,1)\n",
                                "SELECT * STREAM q FROM s@(1,-65536)\n", rule + "DUMP -65536 TO 65536\n",
                                rule + "DUMP 0 TO 1 RETENTION 256\n"}) {
    INFO(ok);
    CHECK_NOTHROW(testing::compileText(s + ok));
  }
  struct Case {
    std::string text, message;
    int line, col;
  };
  for (const Case& c : {
           Case{"SELECT * STREAM q FROM s > 65537\n", "time shift 65537 exceeds the limit 65536", 2, 28},
           Case{"SELECT * STREAM q FROM s@(65537,1)\n", "AGSE step 65537 exceeds the limit 65536", 2, 27},
           Case{"SELECT * STREAM q FROM s@(1,65537)\n", "AGSE window width 65537 exceeds the limit 65536", 2, 29},
           Case{"SELECT * STREAM q FROM s@(1,-65537)\n", "AGSE window width -65537 exceeds the limit 65536", 2, 29},
           Case{rule + "DUMP -65537 TO 0\n", "DUMP bound -65537 exceeds the limit 65536", 3, 35},
           Case{rule + "DUMP 0 TO 65537\n", "DUMP bound 65537 exceeds the limit 65536", 3, 40},
           Case{rule + "DUMP 0 TO 1 RETENTION 257\n", "DUMP RETENTION 257 exceeds the limit 256", 3, 52},
       }) {
    INFO(c.text);
    Refusal r = refusal(s + c.text);
    CHECK(r.message == c.message);
    CHECK(r.loc.line == c.line);
    CHECK(r.loc.col == c.col);
  }
}

TEST_CASE("to_string widths must be positive and within the field limit", "[limits][literals]") {
  const std::string s = decl("s");
  Refusal w = refusal(s + "SELECT to_string(s[0] : 0) STREAM q FROM s\n");
  CHECK(w.message == "to_string width 0 must be greater than zero");
  CHECK(w.loc.col == 25);
  CHECK(refusal(s + "SELECT to_string(s[0] : 65537) STREAM q FROM s\n").message ==
        "to_string width 65537 exceeds the limit 65536");
  CHECK(ut::shape(testing::compileText(s + "SELECT to_string(s[0] : 65536) STREAM q FROM s\n").get("q").schema[0]) ==
        "STRING 1x65536");
}

TEST_CASE("storage RETENTION capacities must be positive", "[limits][retention]") {
  const std::string s = decl("s");
  Refusal c = refusal(s + "SELECT * STREAM q FROM s RETENTION 0 2\n");
  CHECK(c.message == "RETENTION capacity must be greater than zero, got 0");
  CHECK(c.loc.col == 36);
  CHECK(refusal(s + "SELECT * STREAM q FROM s RETENTION 0 STORAGE MEMORY\n").message ==
        "RETENTION capacity must be greater than zero, got 0");
  // Segments may be 0: no limit on disk segments.
  CHECK(testing::compileText(s + "SELECT * STREAM q FROM s RETENTION 5 0\n").get("q").retentionCapacity == 5);
}

TEST_CASE("RETENTION c s segments a file store; a one-number RETENTION sizes a memory ring", "[limits][retention]") {
  const std::string s = decl("s");
  for (const std::string ok : {"RETENTION 100 4", "RETENTION 100 4 STORAGE DIRECT", "RETENTION 100 STORAGE MEMORY",
                               "RETENTION 100 VOLATILE", "RETENTION 100 4 STORAGE POSIX"}) {
    INFO(ok);
    CHECK_NOTHROW(testing::compileText(s + "SELECT * STREAM q FROM s " + ok + "\n"));
  }
  CHECK(ut::parse(s + "SELECT * STREAM q FROM s RETENTION 100 STORAGE MEMORY\n").back().policyCapacity == 100);
  // The one-number form on a file store compiles with a located warning (plans
  // written for the reference use it); --strict makes it an error (test/errors).
  ir::Plan w = testing::compileText(s + "SELECT * STREAM q FROM s RETENTION 100 STORAGE DIRECT\n");
  REQUIRE(w.warnings.size() == 1);
  CHECK(w.warnings[0].message ==
        "RETENTION 100 of stream 'q' has no segment count: on a file store (STORAGE DIRECT) the file keeps every "
        "record and the in-memory history follows the plan's demand; write RETENTION 100 <segments> for a bounded "
        "file");
  CHECK(w.warnings[0].loc.line == 2);
  CHECK(w.get("q").retentionSegments == 0);
  for (const std::string form :
       {"RETENTION 7", "RETENTION 7 STORAGE posix", "RETENTION 7 STORAGE POSIXSHD", "RETENTION 7 STORAGE GENERIC"}) {
    INFO(form);
    CHECK(testing::compileText(s + "SELECT * STREAM q FROM s " + form + "\n").warnings.size() == 1);
  }
  CHECK(testing::compileText(s + "SELECT * STREAM q FROM s RETENTION 7 4\n").warnings.empty());
  CHECK(testing::compileText(s + "SELECT * STREAM q FROM s RETENTION 7 VOLATILE\n").warnings.empty());
  CHECK(refusal(s + "SELECT * STREAM q FROM s RETENTION 100 4 STORAGE MEMORY\n").message ==
        "RETENTION 100 4 of stream 'q' is segmented retention on a RAM store (STORAGE MEMORY); write RETENTION 100 "
        "to size its ring");
  CHECK(refusal(s + "SELECT * STREAM q FROM s RETENTION 100 4 VOLATILE\n").message.find("on a RAM store (VOLATILE)") !=
        std::string::npos);
}

TEST_CASE("storage.default_retention: DEFAULT and DIRECT streams without RETENTION, substrates too",
          "[limits][retention]") {
  ir::Options o = ir::defaultOptions();
  o.defaultRetention = {1000, 4};
  ir::Plan p = ir::compile(ut::parse(decl("s") + decl("t", "b INTEGER") +
                                     "SELECT * STREAM plain FROM s\n"
                                     "SELECT * STREAM dir FROM s STORAGE DIRECT\n"
                                     "SELECT * STREAM own FROM s RETENTION 20 2\n"
                                     "SELECT * STREAM mem FROM s STORAGE MEMORY\n"
                                     "SELECT * STREAM vol FROM s VOLATILE\n"
                                     "SELECT * STREAM px FROM s STORAGE POSIX\n"
                                     "SELECT * STREAM sum FROM (s > 1) + t\n"),
                           o);
  auto retention = [&](const std::string& id) {
    const ir::Query& q = p.get(id);
    return std::to_string(q.retentionCapacity) + " " + std::to_string(q.retentionSegments);
  };
  CHECK(retention("plain") == "1000 4");
  CHECK(retention("dir") == "1000 4");
  CHECK(retention("own") == "20 2");
  CHECK(retention("mem") == "0 0");
  CHECK(retention("vol") == "0 0");
  CHECK(retention("px") == "0 0");
  CHECK(retention("s") == "0 0");  // a declared source has no store
  REQUIRE(testing::has(p, "STREAM_TIMEMOVE_1_s"));
  CHECK(retention("STREAM_TIMEMOVE_1_s") == "1000 4");
  CHECK(retention("sum") == "1000 4");
  // A memory substrate keeps its ring only.
  ir::Plan m = ir::compile(
      ut::parse("SUBSTRAT 'memory'\n" + decl("s") + decl("t", "b INTEGER") + "SELECT * STREAM sum FROM (s > 1) + t\n"),
      o);
  CHECK(m.get("STREAM_TIMEMOVE_1_s").retentionCapacity == 0);
  // Without the key nothing changes.
  CHECK(testing::compileText(decl("s") + "SELECT * STREAM q FROM s\n").get("q").retentionCapacity == 0);
}

TEST_CASE("INTEGER[16384] arrays under wide windows, read by many streams", "[limits][arrays]") {
  std::string t = decl("s", "a INTEGER[16384]") + "SELECT * STREAM w FROM s@(1,65536)\n";
  for (int i = 0; i < 200; ++i)
    t += "SELECT w[" + std::to_string(i * 300) + "]+s[1], w[65535] STREAM r" + std::to_string(i) + " FROM w+s\n";
  ir::Plan p = testing::compileText(t);
  REQUIRE(p.get("w").schema.size() == 65536);
  CHECK(ir::flatWidth(p.get("s")) == 16384);
  CHECK(p.get("w").interval == ir::Rational(1, 16384));
  // r_i reads its input record w + s: w's elements first, then s's.
  CHECK(ut::field(p, "r7", 0) == "PUSH_ID(r7[2100]) PUSH_ID(r7[65537]) ADD");
  CHECK(ut::field(p, "r7", 1) == "PUSH_ID(r7[65535])");
  CHECK(ut::shape(p, "r199", 1) == "INTEGER 4x1");
}

TEST_CASE("[_] over a wide stream is counted before it is expanded", "[limits][index]") {
  const std::string s = decl("s", "a BYTE[60000], b BYTE[60000], c BYTE[60000], d BYTE[20000]");
  ir::Plan p = testing::compileText(s + "SELECT s[_]*2+1 STREAM q FROM s\n");
  REQUIRE(p.get("q").schema.size() == 200000);
  CHECK(ut::field(p, "q", 199999) == "PUSH_ID(q[199999]) PUSH_VAL(2) MULTIPLY PUSH_VAL(1) ADD");
  // 15 tokens for each of 200000 elements pass the plan's token limit before they are built.
  Refusal t = refusal(s + "SELECT s[_]*1+s[_]*2+s[_]*3+s[_]*4 STREAM q FROM s\n");
  CHECK(t.message ==
        "the field expressions of all streams together would have 3000000 tokens (stream 'q' brings the total over "
        "the limit); the limit is 2097152");
  CHECK(t.loc.line == 2);
  // 200000 + 200000 elements, and two such streams would pass the limit.
  Refusal r = refusal(s + "SELECT s[_]*2 STREAM q FROM s\nSELECT s[_]+1 STREAM q2 FROM s\n");
  CHECK(r.message.find("would have 600000 elements (stream 'q2'") != std::string::npos);
  CHECK(r.loc.line == 3);
}

TEST_CASE("window demand in closed form equals the scan over one period", "[limits][capacities]") {
  auto floorDiv = [](int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  };
  auto scan = [&](int64_t F, int64_t k, int64_t w, int64_t origin, int64_t Wq, int64_t Ws) {
    int64_t period = F / std::gcd(F, k), best = 0;
    for (int64_t n = origin; n < origin + period; ++n) {
      int64_t newest = floorDiv((n + 1 + Wq) * k, F) - Ws - 1;
      int64_t oldest = floorDiv(n * k - std::abs(w) + 1, F);
      best = std::max(best, newest - oldest);
    }
    return best;
  };
  std::mt19937 g(7);
  for (int i = 0; i < 20000; ++i) {
    int64_t F = 1 + g() % 300, k = 1 + g() % 40, w = int64_t(g() % 700) - 350, origin = g() % 50, Wq = g() % 20,
            Ws = g() % 20;
    if (w == 0) w = 1;
    INFO("F=" << F << " k=" << k << " w=" << w << " origin=" << origin << " Wq=" << Wq << " Ws=" << Ws);
    REQUIRE(passes::windowDemand(F, k, w, origin, Wq, Ws) == scan(F, k, w, origin, Wq, Ws));
  }
}

TEST_CASE("hash tail in closed form equals the scan over one period", "[limits][tails]") {
  std::mt19937 g(3);
  for (int i = 0; i < 20000; ++i) {
    const ir::Rational dA(1 + g() % 60, 1 + g() % 60), dB(1 + g() % 60, 1 + g() % 60);
    const int64_t wA = g() % 40, wB = g() % 40;
    const ir::Rational dC = dA * dB / (dA + dB);
    INFO("dA=" << dA.str() << " dB=" << dB.str() << " wA=" << wA << " wB=" << wB);
    REQUIRE(passes::hashTail(dA, wA, dB, wB, dC) == passes::hashTailScan(dA, wA, dB, wB, dC));
  }
  // A period near the limit, many times over: the scan would be 10^5 steps each.
  std::string t = decl("a") + "DECLARE a INTEGER STREAM b, 1/50000 FILE 'b.dat'\n";
  t.replace(t.find(", 1 FILE"), 8, ", 1/49999 FILE");
  for (int i = 0; i < 2000; ++i) t += "SELECT * STREAM h" + std::to_string(i) + " FROM a#b\n";
  ir::Plan p = testing::compileText(t);
  CHECK(p.get("h1999").tail ==
        passes::hashTailScan(ir::Rational(1, 49999), 0, ir::Rational(1, 50000), 0, p.get("h1999").interval));
}

TEST_CASE("Plan::find: the first entry of an id, after reordering, growth, removal and renaming", "[limits][find]") {
  ir::Plan p;
  for (int i = 0; i < 50; ++i) {
    ir::Query q;
    q.id = "x" + std::to_string(i % 40);  // x0..x9 twice
    q.tail = i;
    p.queries.push_back(q);
  }
  CHECK(p.find("x3")->tail == 3);
  CHECK(p.find("x45") == nullptr);
  std::reverse(p.queries.begin(), p.queries.end());
  CHECK(p.find("x3")->tail == 43);  // the first in the new order
  CHECK(p.find("x20")->tail == 20);
  p.queries.erase(p.queries.begin());  // tail 49 (x9)
  CHECK(p.find("x9")->tail == 9);
  p.queries[0].id = "renamed";  // in place, same size and buffer
  CHECK(p.find("renamed") == &p.queries[0]);
  CHECK(p.find("x8")->tail == 8);
  ir::Query extra;
  extra.id = "new";
  p.queries.push_back(extra);
  CHECK(p.find("new") == &p.queries.back());
  ir::Plan copy = p;
  CHECK(copy.find("x20") == &copy.queries[size_t(p.find("x20") - p.queries.data())]);
  CHECK_THROWS_AS(copy.get("nope"), ir::RefError);
}
