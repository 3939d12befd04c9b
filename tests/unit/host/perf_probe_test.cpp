#include "host/perf_probe.h"

#include <gtest/gtest.h>

#include "fake_host.h"
#include "support/capability.h"

namespace vperf::host {
namespace {

using test::FakePerfEventOpener;

TEST(PerfProbe, KernelWithoutPmuFailsEveryHardwareProbe) {
  FakePerfEventOpener opener;
  opener.errno_for = test::no_pmu_kernel;
  PerfProbeReport r = probe_perf(opener);
  EXPECT_TRUE(r.software_control.opened);
  EXPECT_EQ(r.software_control.count, 1000u);
  ASSERT_EQ(r.hardware.size(), 8u);
  for (const auto& p : r.hardware) {
    EXPECT_FALSE(p.outcome.opened) << p.name;
    EXPECT_EQ(p.outcome.errno_value, ENOENT) << p.name;
    EXPECT_FALSE(p.counted());
  }
  EXPECT_FALSE(r.any_hardware_opened());
  EXPECT_EQ(r.max_precise(), -1);
  EXPECT_FALSE(r.branch_stack.opened);
  ASSERT_EQ(r.precise.size(), 4u);
}

TEST(PerfProbe, ProbesTheSevenArchitecturalEventsAndRefCycles) {
  FakePerfEventOpener opener;
  opener.errno_for = [](const perf_event_attr&) { return 0; };
  PerfProbeReport r = probe_perf(opener);
  std::vector<std::string> names;
  for (const auto& p : r.hardware) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cycles", "instructions", "bus-cycles", "cache-references", "cache-misses",
                                             "branches", "branch-misses", "ref-cycles"}));
  EXPECT_EQ(r.find("ref-cycles")->config, static_cast<uint64_t>(PERF_COUNT_HW_REF_CPU_CYCLES));
  EXPECT_TRUE(r.find("instructions")->counted());
  EXPECT_EQ(r.max_precise(), 3);
  EXPECT_TRUE(r.branch_stack.opened);
}

TEST(PerfProbe, AttrsAreUserOnlyAndPreciseLevelsAreSet) {
  FakePerfEventOpener opener;
  opener.errno_for = [](const perf_event_attr&) { return 0; };
  (void)probe_perf(opener);
  std::vector<int> precise_levels;
  bool saw_branch_stack = false;
  for (const auto& attr : opener.opened) {
    EXPECT_EQ(attr.size, sizeof(perf_event_attr));
    EXPECT_EQ(attr.exclude_kernel, 1u) << "paranoid 2 allows only user-space counting";
    if (attr.sample_period) precise_levels.push_back(static_cast<int>(attr.precise_ip));
    if (attr.sample_type & PERF_SAMPLE_BRANCH_STACK) {
      saw_branch_stack = true;
      EXPECT_TRUE(attr.branch_sample_type & PERF_SAMPLE_BRANCH_ANY);
    }
  }
  // Then the branch-stack probe and the two sampling probes (cycles, instructions).
  EXPECT_EQ(precise_levels, (std::vector<int>{0, 1, 2, 3, 0, 0, 0}));
  EXPECT_TRUE(saw_branch_stack);
}

TEST(PerfProbe, PmuWithoutPebs) {
  FakePerfEventOpener opener;
  opener.errno_for = test::pmu_without_pebs;
  PerfProbeReport r = probe_perf(opener);
  EXPECT_EQ(r.max_precise(), 0);
  EXPECT_EQ(r.precise[1].errno_value, EOPNOTSUPP);
  EXPECT_FALSE(r.branch_stack.opened);
}

TEST(PerfProbe, OpenThatCountsZeroIsNotCounted) {
  FakePerfEventOpener opener;
  opener.errno_for = [](const perf_event_attr&) { return 0; };
  opener.count = 0;
  PerfProbeReport r = probe_perf(opener);
  EXPECT_TRUE(r.find("cycles")->outcome.opened);
  EXPECT_FALSE(r.find("cycles")->counted());
}

// The real kernel: the probe must agree with a direct perf_event_open of instructions.
TEST(PerfProbe, RealKernelAgreesWithCapabilityHelper) {
  perf::KernelPerfEventOpener opener;
  PerfProbeReport r = probe_perf(opener);
  EXPECT_TRUE(r.software_control.opened) << r.software_control.error;
  EXPECT_EQ(r.find("instructions")->outcome.opened, vperf::test::has_hardware_pmu());
  if (!r.any_hardware_opened()) {
    EXPECT_EQ(r.max_precise(), -1);
  }
}

TEST(PerfProbe, GroupCapacityIsTheMemberBeforeTheFirstRefusal) {
  FakePerfEventOpener opener;
  opener.errno_for = [](const perf_event_attr&) { return 0; };
  opener.group_limit = 7;  // arm64 under QEMU: the cycle counter and six general ones
  PerfProbeReport r = probe_perf(opener);
  ASSERT_TRUE(r.group_capacity);
  EXPECT_EQ(*r.group_capacity, 7u);
  EXPECT_FALSE(r.group_capacity_limited);
  EXPECT_EQ(r.group_refusal_errno, EINVAL);
}

TEST(PerfProbe, GroupCapacityUnknownWithoutCyclesAndBoundedWithoutRefusal) {
  FakePerfEventOpener none;
  none.errno_for = test::no_pmu_kernel;
  EXPECT_FALSE(probe_perf(none).group_capacity);
  FakePerfEventOpener endless;
  endless.errno_for = [](const perf_event_attr&) { return 0; };
  PerfProbeReport r = probe_perf(endless);
  ASSERT_TRUE(r.group_capacity);
  EXPECT_EQ(*r.group_capacity, kGroupProbeLimit);
  EXPECT_TRUE(r.group_capacity_limited);
}

SamplingProbe judged(uint64_t count, uint64_t period, uint64_t samples) {
  SamplingProbe p;
  p.event = "instructions";
  p.period = period;
  p.outcome.opened = true;
  p.outcome.count = count;
  p.samples = samples;
  return p;
}

TEST(PerfProbe, SamplesFollowThePeriodWithinHalfToTwice) {
  EXPECT_EQ(judged(6400192, 100003, 64).follows_period(), true);
  EXPECT_EQ(judged(6400192, 100003, 33).follows_period(), true);
  EXPECT_EQ(judged(6400192, 100003, 31).follows_period(), false);
  EXPECT_EQ(judged(6400192, 100003, 129).follows_period(), false);
  // QEMU TCG's instructions: one sample per timer tick, whatever the period.
  EXPECT_EQ(judged(6400192, 100003, 2).follows_period(), false);
  // Too few periods to judge, throttled by the kernel, or nothing read: not judged.
  EXPECT_EQ(judged(1500000, 100003, 1).follows_period(), std::nullopt);
  SamplingProbe throttled = judged(6400192, 100003, 20);
  throttled.throttled = 1;
  EXPECT_EQ(throttled.follows_period(), std::nullopt);
  SamplingProbe unread = judged(6400192, 100003, 0);
  unread.samples.reset();
  EXPECT_EQ(unread.follows_period(), std::nullopt);
}

// The real kernel: the probe's ring buffer and its arithmetic on the software clock, which
// samples every period on every machine (cpu-clock's period is in nanoseconds).
TEST(PerfProbe, RealKernelCpuClockSamplesFollowThePeriod) {
  perf::KernelPerfEventOpener opener;
  SamplingProbe p = probe_sampling(opener, "cpu-clock", perf::user_space_probe_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK),
                                   100000);
  ASSERT_TRUE(p.outcome.opened) << p.outcome.error;
  ASSERT_TRUE(p.samples) << p.ring_error;
  EXPECT_GE(p.expected(), SamplingProbe::kMinimumPeriods * 4) << "the probe works until enough periods passed";
  EXPECT_EQ(p.follows_period(), true) << *p.samples << " samples for " << p.expected() << " periods";
}

}  // namespace
}  // namespace vperf::host
