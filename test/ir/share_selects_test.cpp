// shareEquivalentSelectComputations (compiler.md §5.10; seeds/substrates.txt,
// "Sharing equivalent SELECT computations").
#include "../unit_helpers.hpp"

namespace {

const char* kAB =
    "DECLARE x INTEGER, y INTEGER STREAM a, 1 FILE 'a.dat'\n"
    "DECLARE x INTEGER, y INTEGER STREAM b, 1/2 FILE 'b.dat'\n";

const char* kPQR =
    "DECLARE v INTEGER STREAM p, 1 FILE 'p.dat'\n"
    "DECLARE v INTEGER STREAM q, 1/2 FILE 'q.dat'\n"
    "DECLARE v INTEGER STREAM r, 1/3 FILE 'r.dat'\n";

// The shared substrate a public stream reads, or "" when it computes on its own.
std::string sharedOf(const ir::Plan& p, const std::string& id) {
  REQUIRE(testing::has(p, id));
  const ir::Program& prog = p.get(id).program;
  if (prog.size() == 1 && prog[0].op == ir::Op::PUSH_STREAM) {
    const std::string& s = std::get<std::string>(prog[0].v);
    if (s.rfind("STREAM_SELECT_", 0) == 0) return s;
  }
  return "";
}

}  // namespace

TEST_CASE("c1 FROM a+b and c2 FROM b+a share one computation", "[share]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT a[_] * b[_] STREAM c1 FROM a+b\n"
                                    "SELECT a[_] * b[_] STREAM c2 FROM b+a\n");
  REQUIRE(testing::has(p, "STREAM_SELECT_c1"));
  CHECK(sharedOf(p, "c1") == "STREAM_SELECT_c1");
  CHECK(sharedOf(p, "c2") == "STREAM_SELECT_c1");
  const ir::Query& s = p.get("STREAM_SELECT_c1");
  CHECK(s.isSubstrat);
  CHECK(ut::str(s.program) == "PUSH_STREAM(a) PUSH_STREAM(b) STREAM_ADD");
  REQUIRE(s.schema.size() == 2);
  CHECK(ut::str(s.schema[0].program) == "PUSH_ID(STREAM_SELECT_c1[0]) PUSH_ID(STREAM_SELECT_c1[2]) MULTIPLY");
  CHECK(ut::str(s.schema[1].program) == "PUSH_ID(STREAM_SELECT_c1[1]) PUSH_ID(STREAM_SELECT_c1[3]) MULTIPLY");
  // The public streams stay, with their own names, field names and shapes, as projections.
  for (const char* id : {"c1", "c2"}) {
    INFO(id);
    const ir::Query& q = p.get(id);
    REQUIRE(q.schema.size() == 2);
    CHECK(q.schema[0].name == std::string(id) + "_0");
    CHECK(q.schema[1].name == std::string(id) + "_1");
    CHECK(ut::str(q.schema[0].program) == "PUSH_ID(" + std::string(id) + "[0])");
    CHECK(ut::str(q.schema[1].program) == "PUSH_ID(" + std::string(id) + "[1])");
    CHECK(q.interval == ir::Rational(1, 2));
    CHECK_FALSE(q.isSubstrat);
  }
}

TEST_CASE("x1 (p+q)+r and x2 (q+p)+r share; x3 (r+q)+p does not", "[share]") {
  ir::Plan p = testing::compileText(std::string(kPQR) +
                                    "SELECT p[_] * q[_] + r[_] STREAM x1 FROM (p+q)+r\n"
                                    "SELECT p[_] * q[_] + r[_] STREAM x2 FROM (q+p)+r\n"
                                    "SELECT p[_] * q[_] + r[_] STREAM x3 FROM (r+q)+p\n");
  CHECK(sharedOf(p, "x1") == "STREAM_SELECT_x1");
  CHECK(sharedOf(p, "x2") == "STREAM_SELECT_x1");
  CHECK(sharedOf(p, "x3") == "");
  CHECK(ut::from(p, "STREAM_SELECT_x1") == "PUSH_STREAM(STREAM_ADD_p_q) PUSH_STREAM(r) STREAM_ADD");
  CHECK(ut::from(p, "x3") == "PUSH_STREAM(STREAM_ADD_r_q) PUSH_STREAM(p) STREAM_ADD");
  CHECK(ut::field(p, "x3") == "PUSH_ID(x3[2]) PUSH_ID(x3[1]) MULTIPLY PUSH_ID(x3[0]) ADD");
  // x2's own inner sum q+p became an orphan and was removed.
  CHECK_FALSE(testing::has(p, "STREAM_ADD_q_p"));
  CHECK(testing::has(p, "STREAM_ADD_p_q"));
  CHECK(ut::countPrefix(p, "STREAM_SELECT_") == 1);
}

TEST_CASE("SELECT * over a+b and b+a is not shared (d1, d2)", "[share]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT * STREAM d1 FROM a+b\n"
                                    "SELECT * STREAM d2 FROM b+a\n");
  CHECK(ut::countPrefix(p, "STREAM_SELECT_") == 0);
  CHECK(ut::from(p, "d1") == "PUSH_STREAM(a) PUSH_STREAM(b) STREAM_ADD");
  CHECK(ut::from(p, "d2") == "PUSH_STREAM(b) PUSH_STREAM(a) STREAM_ADD");
}

TEST_CASE("reordered projections are not shared (n1, n2)", "[share]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT a[0], b[1] STREAM n1 FROM a+b\n"
                                    "SELECT b[1], a[0] STREAM n2 FROM b+a\n");
  CHECK(ut::countPrefix(p, "STREAM_SELECT_") == 0);
  CHECK(ut::field(p, "n1", 0) == "PUSH_ID(n1[0])");
  CHECK(ut::field(p, "n1", 1) == "PUSH_ID(n1[3])");
  CHECK(ut::field(p, "n2", 0) == "PUSH_ID(n2[1])");
  CHECK(ut::field(p, "n2", 1) == "PUSH_ID(n2[2])");
}

TEST_CASE("the same projection in the same order is shared even across a+b / b+a", "[share]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT a[0], b[1] STREAM m1 FROM a+b\n"
                                    "SELECT a[0], b[1] STREAM m2 FROM b+a\n");
  CHECK(sharedOf(p, "m1") == "STREAM_SELECT_m1");
  CHECK(sharedOf(p, "m2") == "STREAM_SELECT_m1");
}

TEST_CASE("only FROM trees with a sum are considered", "[share]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT a[0]*2 STREAM k1 FROM a\n"
                                    "SELECT a[0]*2 STREAM k2 FROM a\n"
                                    "SELECT a[0] STREAM k3 FROM a>1\n"
                                    "SELECT a[0] STREAM k4 FROM a>1\n");
  CHECK(ut::countPrefix(p, "STREAM_SELECT_") == 0);
}

TEST_CASE("different field programs, shapes or intervals are not shared", "[share]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "DECLARE x INTEGER, y INTEGER STREAM c, 1/3 FILE 'c.dat'\n"
                                    "SELECT a[0]*2 STREAM e1 FROM a+b\n"
                                    "SELECT a[0]*3 STREAM e2 FROM b+a\n"
                                    "SELECT to_float(a[0]) STREAM e3 FROM a+b\n"
                                    "SELECT a[0] STREAM e4 FROM a+c\n"
                                    "SELECT a[0] STREAM e5 FROM a+b\n");
  CHECK(ut::countPrefix(p, "STREAM_SELECT_") == 0);
}

TEST_CASE("public streams keep their files, rules and storage; the shared copy has none", "[share]") {
  ir::Plan p = testing::compileText(std::string("SUBSTRAT 'memory'\n") + kAB +
                                    "SELECT a[_] * b[_] STREAM c1 FROM a+b FILE 'c1.dat' RETENTION 9 2\n"
                                    "SELECT a[_] * b[_] STREAM c2 FROM b+a\n"
                                    "RULE big ON c2 WHEN c2[0] > 100 DO DUMP -1 TO 1\n");
  const ir::Query& s = p.get("STREAM_SELECT_c1");
  CHECK(s.filename.empty());
  CHECK(s.rules.empty());
  CHECK(s.retentionCapacity == 0);
  CHECK(s.policyProfile == "MEMORY");
  CHECK(p.get("c1").filename == "c1.dat");
  CHECK(p.get("c1").retentionCapacity == 9);
  REQUIRE(p.get("c2").rules.size() == 1);
  CHECK(p.get("c2").rules[0].name == "big");
}

TEST_CASE("the shared name avoids existing names", "[share]") {
  ir::Plan p = testing::compileText(std::string(kAB) +
                                    "SELECT a[_] * b[_] STREAM c1 FROM a+b\n"
                                    "SELECT a[_] * b[_] STREAM c2 FROM b+a\n"
                                    "SELECT * STREAM STREAM_SELECT_c1 FROM a\n");
  CHECK(sharedOf(p, "c1") == "STREAM_SELECT_c1_2");
  CHECK(sharedOf(p, "c2") == "STREAM_SELECT_c1_2");
  CHECK(ut::from(p, "STREAM_SELECT_c1") == "PUSH_STREAM(a)");
}

TEST_CASE("restricted sharing (ad hoc import) only fingerprints new ids", "[share]") {
  const std::string text = std::string(kAB) +
                           "SELECT a[_] * b[_] STREAM c1 FROM a+b\n"
                           "SELECT a[_] * b[_] STREAM c2 FROM b+a\n";
  ir::Plan p = ut::rawPlan(text);
  p.restrictedSharing = true;
  p.newIds = {"c2"};
  ir::compilePlan(p);
  CHECK(ut::countPrefix(p, "STREAM_SELECT_") == 0);

  ir::Plan q = ut::rawPlan(text);
  q.restrictedSharing = true;
  q.newIds = {"c1", "c2"};
  ir::compilePlan(q);
  CHECK(ut::countPrefix(q, "STREAM_SELECT_") == 1);
}
