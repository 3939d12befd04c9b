// Choosing the base frequency; register values are recorded from turbostat output of real parts.
#include "msr/base_frequency.h"

#include <gtest/gtest.h>

namespace vperf::msr {
namespace {

// i7-2600K (Sandy Bridge): "cpu0: MSR_PLATFORM_INFO: 0x100070012200 ... 34 * 100.0 = 3400.0 MHz base".
constexpr uint64_t kSandyBridgePlatformInfo = 0x100070012200ull;
// Alder Lake: MSR_PLATFORM_INFO 0x804083cf1811f00 (31 x 100 MHz), CPUID(0x16) base_mhz 3100.
constexpr uint64_t kAlderLakePlatformInfo = 0x804083cf1811f00ull;

TEST(BaseFrequency, PlatformInfoComesFirst) {
  auto base = choose_base_frequency({kSandyBridgePlatformInfo, 2000, 1600.0});
  ASSERT_TRUE(base.ok()) << base.error().describe();
  EXPECT_EQ(base->mhz, 3400.0);
  EXPECT_EQ(base->source, BaseFrequencySource::PlatformInfo);
  EXPECT_EQ(base->derivation, "MSR_PLATFORM_INFO[15:8] = 34 x 100 MHz");
  EXPECT_EQ(source_key(base->source), "msr_platform_info");

  auto alder = choose_base_frequency({kAlderLakePlatformInfo, std::nullopt, std::nullopt});
  ASSERT_TRUE(alder.ok());
  EXPECT_EQ(alder->mhz, 3100.0);
}

TEST(BaseFrequency, CpuidLeaf16WhenTheMsrIsUnreadableOrZero) {
  // Alder Lake's leaf 0x16: EAX = 3100 (base), upper half reserved.
  auto base = choose_base_frequency({std::nullopt, 0x00000c1c, 1600.0});
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->mhz, 3100.0);
  EXPECT_EQ(base->source, BaseFrequencySource::CpuidLeaf16);
  EXPECT_EQ(base->derivation, "CPUID.16H:EAX");
  EXPECT_EQ(source_key(base->source), "cpuid_0x16");
  // A VM that answers MSR_PLATFORM_INFO with 0 falls through to CPUID as well.
  EXPECT_EQ(choose_base_frequency({0, 0xabcd0c1c, std::nullopt})->source, BaseFrequencySource::CpuidLeaf16);
}

TEST(BaseFrequency, ProcCpuinfoIsTheLastResort) {
  // A Skylake-SP guest: "CPUID(0x16): base_mhz: 0 max_mhz: 0 bus_mhz: 0", no MSRs.
  auto base = choose_base_frequency({std::nullopt, 0, 2000.0});
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->mhz, 2000.0);
  EXPECT_EQ(base->source, BaseFrequencySource::ProcCpuinfo);
  EXPECT_EQ(base->derivation, "/proc/cpuinfo cpu MHz");
  EXPECT_EQ(source_key(base->source), "proc_cpuinfo");
}

TEST(BaseFrequency, NothingKnownIsAnErrorNamingEachSource) {
  auto none = choose_base_frequency({std::nullopt, std::nullopt, std::nullopt});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "no base frequency: MSR_PLATFORM_INFO unreadable, no CPUID leaf 0x16, no cpu MHz in /proc/cpuinfo");
  auto zeros = choose_base_frequency({0, 0, 0.0});
  ASSERT_FALSE(zeros.ok());
  EXPECT_EQ(zeros.error().message,
            "no base frequency: MSR_PLATFORM_INFO[15:8] is 0, CPUID.16H:EAX is 0, /proc/cpuinfo cpu MHz is 0");
}

TEST(CpuinfoMhz, FirstCpuOnly) {
  const char* cpuinfo =
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n"
      "cpu MHz\t\t: 2000.000\ncache size\t: 16384 KB\n\n"
      "processor\t: 1\ncpu MHz\t\t: 1234.567\n";
  EXPECT_EQ(parse_cpuinfo_mhz(cpuinfo), 2000.0);
  EXPECT_EQ(parse_cpuinfo_mhz("processor : 0\ncpu MHz : 3392.146\n"), 3392.146);
  EXPECT_EQ(parse_cpuinfo_mhz("processor : 0\nBogoMIPS : 50.00\n"), std::nullopt) << "ARM has no cpu MHz";
  EXPECT_EQ(parse_cpuinfo_mhz("cpu MHz : fast\n"), std::nullopt);
  EXPECT_EQ(parse_cpuinfo_mhz("cpu MHz dynamic : 1000\ncpu MHz : 1500\n"), 1500.0) << "the key must match exactly";
}

}  // namespace
}  // namespace vperf::msr
