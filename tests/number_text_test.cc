// Tests of the shared number formatter and reader: the text of every double reads back to the
// same bits, -0 reads "0", non-finite values are refused, message numbers match printf's %g, and
// a cell reads as a decimal number or says why not.
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <doctest/doctest.h>

#include "src/common/error.h"
#include "src/common/number_text.h"

namespace rlfit {
namespace {

std::uint64_t Bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

// Parses `text` with both std::from_chars and strtod (what other readers use) and checks
// each gives exactly `v`'s bits (+0 for -0).
void CheckReadsBack(double v) {
  const std::string text = ShortestText(v);
  CAPTURE(text);
  REQUIRE(text.size() <= 24u);
  const double expected = v + 0.0;
  double parsed = 1.0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), parsed);
  REQUIRE(r.ec == std::errc());
  CHECK(r.ptr == text.data() + text.size());
  CHECK(Bits(parsed) == Bits(expected));
  CHECK(Bits(std::strtod(text.c_str(), nullptr)) == Bits(expected));
  // Never longer than the 17 significant digits it replaces.
  char old[40];
  std::snprintf(old, sizeof(old), "%.17g", expected);
  CHECK(text.size() <= std::strlen(old));
}

TEST_CASE("number text: edge cases read back bit for bit") {
  const double cases[] = {0.0,
                          1.0,
                          -1.0,
                          42.0,
                          9007199254740992.0,  // 2^53
                          9007199254740993.0,  // rounds to 2^53
                          -1e22,
                          1e23,
                          0.1,
                          0.10000000000000001,
                          1.0 / 3.0,
                          2.0 / 3.0,
                          1e308,
                          -1e308,
                          DBL_MAX,
                          -DBL_MAX,
                          DBL_MIN,
                          std::nextafter(DBL_MIN, 0.0),     // largest denormal
                          std::numeric_limits<double>::denorm_min(),
                          -std::numeric_limits<double>::denorm_min(),
                          5e-324,
                          2.2250738585072011e-308,
                          1.0 / 60.96,
                          1.0 / 120.0,
                          17.01,
                          -4096.000000000001,
                          3.141592653589793};
  for (double v : cases) {
    CAPTURE(v);
    CheckReadsBack(v);
  }
  CHECK(ShortestText(0.10000000000000001) == "0.1");
  CHECK(ShortestText(42.0) == "42");
  CHECK(ShortestText(-1.5) == "-1.5");
  CHECK(ShortestText(1e308) == "1e+308");
  CHECK(ShortestText(std::numeric_limits<double>::denorm_min()) == "5e-324");
}

TEST_CASE("number text: -0 is written 0") {
  CHECK(ShortestText(-0.0) == "0");
  CHECK(ShortestText(std::atan2(-0.0, 1.0)) == "0");
  std::string out = "x,";
  AppendShortest(&out, -0.0);
  CHECK(out == "x,0");
}

TEST_CASE("number text: random bit patterns and random physics-scale values read back") {
  std::mt19937_64 rng(20261126);  // fixed seed
  int tested = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t b = rng();
    double v;
    std::memcpy(&v, &b, sizeof(v));
    if (!std::isfinite(v)) continue;
    CheckReadsBack(v);
    ++tested;
  }
  CHECK(tested > 190000);
  std::uniform_real_distribution<double> uu(-6000.0, 6000.0);
  for (int i = 0; i < 100000; ++i) CheckReadsBack(uu(rng));
}

TEST_CASE("number text: non-finite values are never written") {
  CHECK_THROWS_AS(ShortestText(std::numeric_limits<double>::quiet_NaN()), InternalError);
  CHECK_THROWS_AS(ShortestText(std::numeric_limits<double>::infinity()), InternalError);
  std::string out;
  CHECK_THROWS_AS(AppendShortest(&out, -std::numeric_limits<double>::infinity()), InternalError);
  CHECK(out.empty());
}

TEST_CASE("number text: message numbers print as printf's %g") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-12.0, 12.0);
  for (int digits : {3, 6, 9}) {
    for (double v : {0.0, -0.0, 1.0, 600.0, 0.001, 1e6, 123456.5, 1e-5, 2300.0000001,
                     std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity(), DBL_MAX,
                     std::numeric_limits<double>::denorm_min()}) {
      char want[64];
      std::snprintf(want, sizeof(want), "%.*g", digits, v);
      CAPTURE(v);
      CHECK(MessageNumber(v, digits) == want);
    }
    for (int i = 0; i < 20000; ++i) {
      const double v = (rng() % 2 ? -1.0 : 1.0) * std::pow(10.0, exponent(rng));
      char want[64];
      std::snprintf(want, sizeof(want), "%.*g", digits, v);
      CAPTURE(v);
      CHECK(MessageNumber(v, digits) == want);
    }
  }
  CHECK(MessageNumber(0.001) == "0.001");
  CHECK(MessageNumber(600) == "600");
  CHECK(MessageNumber(std::nan("")) == "nan");
}

TEST_CASE("ReadNumberText reads decimal numbers and says why other text is not one") {
  double v = -1.0;
  CHECK(ReadNumberText("4.0394", &v).empty());
  CHECK(v == 4.0394);
  CHECK(ReadNumberText("+12", &v).empty());
  CHECK(v == 12.0);
  CHECK(ReadNumberText("-9.*^-6", &v).empty());  // Mathematica's exponent (.txt exports)
  CHECK(v == -9e-6);
  CHECK(ReadNumberText("1e-400", &v).empty());  // underflow reads as 0
  CHECK(v == 0.0);
  CHECK(ReadNumberText("abc", &v) == "'abc' is not a number");
  CHECK(ReadNumberText("1.5x", &v) == "'1.5x' is not a number");
  // C's hexadecimal floats, which strtod reads (0x10 as 16), are not a recording's numbers.
  CHECK(ReadNumberText("0x10", &v) == "'0x10' is not a number");
  CHECK(ReadNumberText("-0X1p3", &v) == "'-0X1p3' is not a number");
  CHECK(ReadNumberText("nan", &v) == "'nan' is not a finite number");
  CHECK(ReadNumberText("-Infinity", &v) == "'-Infinity' is not a finite number");
  CHECK(ReadNumberText("1e400", &v) == "'1e400' is not a finite number");
  // Quoted at most 40 bytes, other bytes than printable ASCII as '?'.
  CHECK(ReadNumberText("\xEF\xBB\xBF" "5", &v) == "'???5' is not a number");
  CHECK(QuoteText(std::string(50, '7').append("z").c_str()) == "'" + std::string(40, '7') + "...'");
}

}  // namespace
}  // namespace rlfit
