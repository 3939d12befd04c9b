#include "host/pmu_inventory.h"

#include <gtest/gtest.h>

#include "fake_host.h"

namespace vperf::host {
namespace {

TEST(PmuInventory, ClassifiesKernelPmuNames) {
  EXPECT_EQ(classify_pmu("cpu"), PmuKind::Core);
  EXPECT_EQ(classify_pmu("cpu_atom"), PmuKind::Core);
  EXPECT_EQ(classify_pmu("uncore_imc_0"), PmuKind::Uncore);
  EXPECT_EQ(classify_pmu("amd_l3"), PmuKind::Uncore);
  EXPECT_EQ(classify_pmu("msr"), PmuKind::Msr);
  EXPECT_EQ(classify_pmu("cstate_core"), PmuKind::Msr);
  EXPECT_EQ(classify_pmu("power"), PmuKind::Power);
  EXPECT_EQ(classify_pmu("uprobe"), PmuKind::Tracing);
  EXPECT_EQ(classify_pmu("software"), PmuKind::Software);
  EXPECT_EQ(classify_pmu("cpuxyz"), PmuKind::Other);
  EXPECT_EQ(pmu_kind_name(PmuKind::Uncore), "uncore");
}

TEST(PmuInventory, ReadsAFakeSysfsTree) {
  test::TempTree tree("pmus");
  tree.write("cpu/type", "4\n");
  tree.write("cpu/caps/max_precise", "3\n");
  tree.write("cpu/caps/pmu_name", "sapphire_rapids\n");
  tree.write("cpu/events/cpu-cycles", "event=0x3c\n");
  tree.write("cpu/format/event", "config:0-7\n");
  tree.write("msr/type", "10\n");
  tree.write("msr/events/tsc", "event=0x00\n");
  tree.write("msr/events/aperf", "event=0x01\n");
  tree.write("msr/format/event", "config:0-63\n");
  std::vector<PmuInfo> pmus = probe_pmus(tree.root());
  ASSERT_EQ(pmus.size(), 2u);
  EXPECT_EQ(pmus[0].name, "cpu");
  EXPECT_EQ(pmus[0].kind, PmuKind::Core);
  EXPECT_EQ(pmus[0].type, 4u);
  EXPECT_EQ(pmus[0].caps.at("max_precise"), "3");
  EXPECT_EQ(pmus[1].name, "msr");
  EXPECT_EQ(pmus[1].kind, PmuKind::Msr);
  EXPECT_EQ(pmus[1].events.size(), 2u);
}

TEST(PmuInventory, RealSysfsListsSoftwarePmu) {
  std::vector<PmuInfo> pmus = probe_pmus("/sys/bus/event_source/devices");
  bool software = false;
  for (const auto& p : pmus) software |= p.name == "software" && p.type == PERF_TYPE_SOFTWARE;
  EXPECT_TRUE(software) << "every Linux kernel with perf_events registers the software PMU";
}

}  // namespace
}  // namespace vperf::host
