// Turbo arithmetic on recorded counter values.
#include "msr/turbo.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace vperf::msr {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(Turbo, FullyBusyCoreAboveBase) {
  // base 2500 MHz, one CPU busy for 1 s at 2.9 GHz: MPERF ticks 2.5e9 times, APERF 2.9e9.
  const ActivitySample before{1'000'000, 2'000'000, 3'000'000};
  const ActivitySample after{1'000'000 + 2'900'000'000ull, 2'000'000 + 2'500'000'000ull, 3'000'000 + 2'500'000'000ull};
  const ActivityDelta d = activity_delta(before, after);
  EXPECT_EQ(d.aperf, 2'900'000'000u);
  EXPECT_EQ(d.mperf, 2'500'000'000u);
  EXPECT_EQ(d.tsc, 2'500'000'000u);
  EXPECT_EQ(d.cpus, 1);
  const TurboRow row = turbo_row(d, 2500, 1.0);
  EXPECT_EQ(row.c0_mcyc, 2'500'000'000u);
  EXPECT_EQ(row.c0_acyc, 2'900'000'000u);
  EXPECT_DOUBLE_EQ(row.util_percent, 100.0);
  ASSERT_TRUE(row.ratio_percent.has_value());
  EXPECT_DOUBLE_EQ(*row.ratio_percent, 116.0);
  ASSERT_TRUE(row.mhz.has_value());
  EXPECT_DOUBLE_EQ(*row.mhz, 2900.0);
}

TEST(Turbo, PartlyBusyCoreBelowBase) {
  // Half of 1 s in C0, and while busy clocked down to 2.0 GHz (power saving): util 50%, ratio 80%.
  const TurboRow row = turbo_row({1'000'000'000, 1'250'000'000, 2'500'000'000, 1}, 2500, 1.0);
  EXPECT_DOUBLE_EQ(row.util_percent, 50.0);
  EXPECT_DOUBLE_EQ(*row.ratio_percent, 80.0);
  EXPECT_DOUBLE_EQ(*row.mhz, 2000.0);
}

// Brendan Gregg's showboost README, an EC2 Ivy Bridge (E5-2670 v2, base 2500 MHz), 5 s intervals:
//   TIME       C0_MCYC      C0_ACYC        UTIL  RATIO    MHz
//   17:28:03   4226511637   4902783333      33%   116%   2900
//   17:28:18   4680962051   5429605341      37%   115%   2899
// showboost truncates with shell integers; vperf keeps the fractions (and rounds when printing).
TEST(Turbo, RecordedShowboostRows) {
  TurboRow first = turbo_row({4902783333ull, 4226511637ull, 0, 1}, 2500, 5.0);
  EXPECT_NEAR(first.util_percent, 33.812, 0.001);
  EXPECT_NEAR(*first.ratio_percent, 116.001, 0.001);
  EXPECT_NEAR(*first.mhz, 2900.02, 0.01);
  TurboRow fourth = turbo_row({5429605341ull, 4680962051ull, 0, 1}, 2500, 5.0);
  EXPECT_NEAR(fourth.util_percent, 37.448, 0.001);
  EXPECT_NEAR(*fourth.ratio_percent, 115.993, 0.001);
  EXPECT_NEAR(*fourth.mhz, 2899.8, 0.1);
}

TEST(Turbo, IdleCpuHasNoRatioRatherThanZero) {
  const TurboRow row = turbo_row({0, 0, 2'500'000'000, 1}, 2500, 1.0);
  EXPECT_EQ(row.util_percent, 0.0);
  EXPECT_FALSE(row.ratio_percent.has_value());
  EXPECT_FALSE(row.mhz.has_value());
}

TEST(Turbo, CountersThatWrapGiveTheTrueDelta) {
  EXPECT_EQ(counter_delta(kMax - 99, 100), 200u);
  EXPECT_EQ(counter_delta(5, 5), 0u);
  const ActivitySample before{kMax - 1'000'000'000 + 1, kMax - 499'999'999, 7};
  const ActivitySample after{1'900'000'000, 2'000'000'000, 7 + 2'500'000'000ull};
  const ActivityDelta d = activity_delta(before, after);
  EXPECT_EQ(d.aperf, 2'900'000'000u);
  EXPECT_EQ(d.mperf, 2'500'000'000u);
  const TurboRow row = turbo_row(d, 2500, 1.0);
  EXPECT_DOUBLE_EQ(*row.ratio_percent, 116.0);
}

TEST(Turbo, SummedCpusAverageUtilisationAndWeightRatioByBusyTime) {
  // Four CPUs over 2 s at base 2500: two fully busy at 3.0 GHz, one a quarter busy at 2.5 GHz,
  // one idle. Utilisation is the average over the four; the ratio is that of all C0 cycles.
  std::vector<ActivityDelta> per_cpu{
      {6'000'000'000, 5'000'000'000, 5'000'000'000, 1},
      {6'000'000'000, 5'000'000'000, 5'000'000'000, 1},
      {1'250'000'000, 1'250'000'000, 5'000'000'000, 1},
      {0, 0, 5'000'000'000, 1},
  };
  const ActivityDelta sum = sum_deltas(per_cpu);
  EXPECT_EQ(sum.cpus, 4);
  EXPECT_EQ(sum.mperf, 11'250'000'000u);
  EXPECT_EQ(sum.aperf, 13'250'000'000u);
  EXPECT_EQ(sum.tsc, 20'000'000'000u);
  const TurboRow row = turbo_row(sum, 2500, 2.0);
  EXPECT_DOUBLE_EQ(row.util_percent, 56.25);
  EXPECT_NEAR(*row.ratio_percent, 117.778, 0.001);
  EXPECT_NEAR(*row.mhz, 2944.44, 0.01);
}

TEST(Turbo, SumSaturatesInsteadOfWrapping) {
  std::vector<ActivityDelta> huge{{kMax - 1, kMax - 1, 1, 1}, {5, 5, 1, 1}};
  const ActivityDelta sum = sum_deltas(huge);
  EXPECT_EQ(sum.aperf, kMax);
  EXPECT_EQ(sum.mperf, kMax);
  EXPECT_EQ(sum.tsc, 2u);
}

TEST(Turbo, ShorterIntervalsScaleUtilisation) {
  const TurboRow row = turbo_row({600'000'000, 500'000'000, 0, 1}, 2500, 0.25);
  EXPECT_DOUBLE_EQ(row.util_percent, 80.0);
  EXPECT_DOUBLE_EQ(*row.mhz, 3000.0);
}

}  // namespace
}  // namespace vperf::msr
