// The arithmetic of probe costs: a calibration's median and a rate's share of a CPU.
#include "probes/probe_cost.h"

#include <gtest/gtest.h>

namespace vperf::probes {
namespace {

TEST(ProbeCost, OneHitIsTheMedianPairsDifferenceOverTheHits) {
  // 1000 hits; the pairs differ by 1.0, 1.2 and 5.0 ms (one noisy): the median 1.2 ms is 1200 ns a hit.
  Result<double> cost = hit_cost_from_runs({{0.010, 0.0110}, {0.010, 0.0112}, {0.010, 0.0150}}, 1000);
  ASSERT_TRUE(cost) << cost.error().message;
  EXPECT_NEAR(*cost, 1200.0, 1e-6);
}

TEST(ProbeCost, RunsThatShowNoCostAreAnError) {
  EXPECT_FALSE(hit_cost_from_runs({{0.010, 0.010}, {0.011, 0.010}, {0.010, 0.009}}, 1000));
  EXPECT_FALSE(hit_cost_from_runs({}, 1000));
  EXPECT_FALSE(hit_cost_from_runs({{0.010, 0.020}}, 0));
}

TEST(ProbeCost, WarnsOnlyOverTheBudgetAndSaysHowItEstimated) {
  const ProbeHitCost measured{1000.0, true};
  // 100000 hits a second at 1 us: 10% of a CPU.
  EXPECT_FALSE(probe_overhead_warning("p:x", 100000, 1.0, measured, 0.20));
  std::optional<std::string> over = probe_overhead_warning("p:x", 100000, 1.0, measured, 0.05);
  ASSERT_TRUE(over);
  EXPECT_NE(over->find("p:x fired 100000 times a second; at 1.00 us a hit (measured on this machine) that is 10% of a CPU, over the 5% budget"),
            std::string::npos)
      << *over;
  std::optional<std::string> typical = probe_overhead_warning("p:x", 100000, 1.0, ProbeHitCost{}, 0.05);
  ASSERT_TRUE(typical);
  EXPECT_NE(typical->find("a typical figure"), std::string::npos) << *typical;
  EXPECT_FALSE(probe_overhead_warning("p:x", 0, 1.0, measured, 0.0));
  EXPECT_FALSE(probe_overhead_warning("p:x", 10, 0.0, measured, 0.0));
}

// -l -v's cost so far: hits times one hit's cost, in ms, and where the cost came from.
TEST(ProbeCost, CostSoFarIsHitsTimesOneHit) {
  EXPECT_EQ(probe_cost_so_far(1000, ProbeHitCost{1340, true}), "(~1.34 ms of the probed tasks' CPU at 1.34 us a hit, measured here)");
  EXPECT_EQ(probe_cost_so_far(100000, ProbeHitCost{1500, false}),
            "(~150 ms of the probed tasks' CPU at 1.50 us a hit, a typical figure; vperf probe --calibrate measures this machine)");
}

}  // namespace
}  // namespace vperf::probes
