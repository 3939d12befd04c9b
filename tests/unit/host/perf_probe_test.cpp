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
  EXPECT_EQ(precise_levels, (std::vector<int>{0, 1, 2, 3, 0}));  // the last one is the branch-stack probe
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

}  // namespace
}  // namespace vperf::host
