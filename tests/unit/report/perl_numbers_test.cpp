// The flame graph's number printers against glibc's printf, which flamegraph.pl's sprintf and
// perl's stringification use: every value a graph prints and the ones built to sit on a
// rounding tie or a hair beside one.
#include "report/perl_numbers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace vperf::report {
namespace {

std::string printf_fixed(double value, int precision) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", precision, value);
  return buf;
}

std::string printf_g15(double value) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.15g", value);
  return buf;
}

std::string perl_number(double value) {
  std::string out;
  append_perl_number(out, value);
  return out;
}

// Values on and beside the halves that %.1f, %.2f and %.3f round (x.x5, x.xx5, ...), the
// tenths the y coordinates sit on, and their neighbours an ulp or two away.
std::vector<double> tricky_values() {
  std::vector<double> values{0.0, -0.0, 0.05, 0.15, 0.25, 0.35, 0.45, 1.005, 2.675, 1e-9, 0.5, 1.5, 2.5, 1e6 + 0.05};
  for (int k = 0; k < 20000; ++k) {
    for (double base : {k / 10.0, k / 100.0, k / 1000.0, k / 10.0 + 0.05, k / 100.0 + 0.005, k / 1000.0 + 0.0005}) {
      double down = base, up = base;
      for (int step = 0; step < 3; ++step) {
        values.push_back(down);
        values.push_back(up);
        down = std::nextafter(down, 0.0);
        up = std::nextafter(up, 1e300);
      }
    }
  }
  return values;
}

TEST(PerlNumbers, FixedMatchesPrintfOnTiesAndNeighbours) {
  int checked = 0;
  for (double value : tricky_values())
    for (int precision : {0, 1, 2, 3}) {
      ASSERT_EQ(std::string(fixed_number(value, precision).view()), printf_fixed(value, precision))
          << "value " << value << " precision " << precision;
      ++checked;
    }
  EXPECT_GT(checked, 1'000'000);
}

TEST(PerlNumbers, FixedMatchesPrintfOnRandomCoordinates) {
  std::mt19937_64 random(20261129);
  std::uniform_real_distribution<double> width(0, 1e6), percent(0, 100);
  for (int i = 0; i < 300000; ++i) {
    const double x = width(random), p = percent(random);
    ASSERT_EQ(std::string(fixed_number(x, 1).view()), printf_fixed(x, 1)) << x;
    ASSERT_EQ(std::string(fixed_number(p, 2).view()), printf_fixed(p, 2)) << p;
  }
}

TEST(PerlNumbers, FixedOutsideTheFastRangeStillMatchesPrintf) {
  for (double value : {-0.05, -1.25, -0.0, 1e20, 3e15 + 0.5, 9.9e39, std::ldexp(1.0, 60)})
    for (int precision : {0, 1, 2, 5})
      EXPECT_EQ(std::string(fixed_number(value, precision).view()), printf_fixed(value, precision)) << value;
}

TEST(PerlNumbers, StringificationMatchesPercent15g) {
  for (double value : tricky_values()) ASSERT_EQ(perl_number(value), printf_g15(value)) << value;
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> any(-1e7, 1e7);
  for (int i = 0; i < 200000; ++i) {
    const double value = any(random);
    ASSERT_EQ(perl_number(value), printf_g15(value)) << value;
  }
  for (double value : {1e15, 1e14 + 0.5, 99999999999999.9, 123456789012345.6, 0.1 + 0.2, 1.0 / 3, -0.0, -2.5, 1e-300, 1e300})
    EXPECT_EQ(perl_number(value), printf_g15(value)) << value;
}

}  // namespace
}  // namespace vperf::report
