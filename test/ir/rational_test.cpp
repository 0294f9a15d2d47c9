// Exact rationals and the continued-fraction conversion of decimal literals (compiler.md §2.4).
#include "../unit_helpers.hpp"

using ir::Rational;

TEST_CASE("rationalize: decimal literals become exact fractions", "[rational]") {
  CHECK(ir::rationalize(0.1) == Rational(1, 10));
  CHECK(ir::rationalize(0.2) == Rational(1, 5));
  CHECK(ir::rationalize(0.3) == Rational(3, 10));
  CHECK(ir::rationalize(0.5) == Rational(1, 2));
  CHECK(ir::rationalize(0.02) == Rational(1, 50));
  CHECK(ir::rationalize(0.05) == Rational(1, 20));
  CHECK(ir::rationalize(1.5) == Rational(3, 2));
  CHECK(ir::rationalize(0.25) == Rational(1, 4));
  CHECK(ir::rationalize(2.0) == Rational(2, 1));
  CHECK(ir::rationalize(1.0) == Rational(1, 1));
  CHECK(ir::rationalize(0.125) == Rational(1, 8));
}

TEST_CASE("rationalize: the printed form is n/d", "[rational]") {
  CHECK(ir::rationalize(0.1).str() == "1/10");
  CHECK(ir::rationalize(0.3).str() == "3/10");
  CHECK(ir::rationalize(0.02).str() == "1/50");
  CHECK(ir::rationalize(1.5).str() == "3/2");
}

TEST_CASE("rationalize: parsed intervals go through the same conversion", "[rational]") {
  auto qs = ut::parse(
      "DECLARE a INTEGER STREAM s1, 0.1 FILE 'x'\n"
      "DECLARE a INTEGER STREAM s2, 0.3 FILE 'x'\n"
      "DECLARE a INTEGER STREAM s3, .02 FILE 'x'\n"
      "DECLARE a INTEGER STREAM s4, 1.5 FILE 'x'\n"
      "DECLARE a INTEGER STREAM s5, 2. FILE 'x'\n");
  CHECK(ut::stmt(qs, "s1").interval.str() == "1/10");
  CHECK(ut::stmt(qs, "s2").interval.str() == "3/10");
  CHECK(ut::stmt(qs, "s3").interval.str() == "1/50");
  CHECK(ut::stmt(qs, "s4").interval.str() == "3/2");
  CHECK(ut::stmt(qs, "s5").interval.str() == "2/1");
}

TEST_CASE("Rational: normalised, with a positive denominator", "[rational]") {
  CHECK(Rational(2, 4) == Rational(1, 2));
  CHECK(Rational(2, 4).num == 1);
  CHECK(Rational(2, 4).den == 2);
  CHECK(Rational(1, -2).num == -1);
  CHECK(Rational(1, -2).den == 2);
  CHECK(Rational(0, 7).den == 1);
  CHECK(Rational(6).str() == "6/1");
  CHECK(Rational(-3, 9).str() == "-1/3");
  CHECK_THROWS(Rational(1, 0));
}

TEST_CASE("Rational: exact arithmetic and comparisons", "[rational]") {
  Rational a(1, 10), b(1, 5);
  CHECK(a + b == Rational(3, 10));
  CHECK(b - a == Rational(1, 10));
  CHECK(a * b == Rational(1, 50));
  CHECK(a / b == Rational(1, 2));
  CHECK(a * b / (a + b) == Rational(1, 15));  // interleave interval of 1/10 # 1/5
  CHECK(a < b);
  CHECK(b > a);
  CHECK(a <= a);
  CHECK(a != b);
  CHECK(ir::abs(Rational(-3, 4)) == Rational(3, 4));
}

TEST_CASE("Rational: floor, ceiling and truncation", "[rational]") {
  CHECK(ir::floorOf(Rational(7, 2)) == 3);
  CHECK(ir::ceilOf(Rational(7, 2)) == 4);
  CHECK(ir::truncOf(Rational(7, 2)) == 3);
  CHECK(ir::floorOf(Rational(-7, 2)) == -4);
  CHECK(ir::ceilOf(Rational(-7, 2)) == -3);
  CHECK(ir::truncOf(Rational(-7, 2)) == -3);
  CHECK(ir::floorOf(Rational(4)) == 4);
  CHECK(ir::ceilOf(Rational(4)) == 4);
}

TEST_CASE("Rational: 32-bit range check", "[rational]") {
  CHECK(Rational(1, 10).fitsInt32());
  CHECK(Rational(int64_t(2147483647), 1).fitsInt32());
  CHECK_FALSE(Rational(int64_t(2147483648), 1).fitsInt32());
  CHECK_FALSE(Rational(1, int64_t(4294967296)).fitsInt32());
}
