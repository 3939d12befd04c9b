#include "msr/msr_register.h"

#include <gtest/gtest.h>

namespace vperf::msr {
namespace {

TEST(MsrRegister, TableIsSortedAndUnique) {
  auto regs = known_registers();
  ASSERT_GE(regs.size(), 5u);
  for (size_t i = 1; i < regs.size(); ++i) EXPECT_LT(regs[i - 1].address, regs[i].address) << regs[i].name;
}

TEST(MsrRegister, FieldsLieInsideSixtyFourBits) {
  for (const MsrRegister& reg : known_registers())
    for (const MsrField& f : reg.fields) {
      EXPECT_LE(0, f.low) << reg.name << "." << f.name;
      EXPECT_LE(f.low, f.high) << reg.name << "." << f.name;
      EXPECT_LT(f.high, 64) << reg.name << "." << f.name;
    }
}

TEST(MsrRegister, FindsByAddressAndName) {
  ASSERT_NE(find_register(0xE7), nullptr);
  EXPECT_EQ(find_register(0xE7)->name, "IA32_MPERF");
  EXPECT_EQ(find_register(0xE8)->name, "IA32_APERF");
  EXPECT_EQ(find_register("msr_platform_info")->address, 0xCEu);
  EXPECT_EQ(find_register("IA32_PERF_STATUS")->address, 0x198u);
  EXPECT_EQ(find_register("IA32_PERF_CAPABILITIES")->address, 0x345u);
  EXPECT_EQ(find_register(0x10)->name, "IA32_TIME_STAMP_COUNTER");
  EXPECT_EQ(find_register(0x11), nullptr);
  EXPECT_EQ(find_register("IA32_NOPE"), nullptr);
}

TEST(MsrRegister, PlatformInfoMaxNonTurboRatio) {
  // Ratio 0x22 = 34 (3.4 GHz at 100 MHz), efficiency ratio 8, both programmable bits set.
  const MsrRegister& reg = *find_register(address::kPlatformInfo);
  const uint64_t value = 0x0000080830012200ull;
  EXPECT_EQ(field_value(reg, "max_non_turbo_ratio", value), 0x22u);
  EXPECT_EQ(field_value(reg, "max_efficiency_ratio", value), 0x08u);
  EXPECT_EQ(field_value(reg, "programmable_ratio_limit_turbo", value), 1u);
  EXPECT_EQ(field_value(reg, "programmable_tdp_limit_turbo", value), 1u);
  EXPECT_EQ(field_value(reg, "no_such_field", value), std::nullopt);
}

TEST(MsrRegister, PerfCapabilitiesLbrAndPebs) {
  // 0xf3c5, bit by bit: LBR format 5, PEBS trap, arch regs, record format 3, SMM freeze,
  // full-width writes, baseline, perf metrics; bit 16 clear.
  const MsrRegister& reg = *find_register(address::kPerfCapabilities);
  const uint64_t value = 0xf3c5;
  EXPECT_EQ(field_value(reg, "lbr_format", value), 5u);
  EXPECT_EQ(field_value(reg, "pebs_trap", value), 1u);
  EXPECT_EQ(field_value(reg, "pebs_arch_regs", value), 1u);
  EXPECT_EQ(field_value(reg, "pebs_record_format", value), 3u);
  EXPECT_EQ(field_value(reg, "freeze_while_smm", value), 1u);
  EXPECT_EQ(field_value(reg, "full_width_write", value), 1u);
  EXPECT_EQ(field_value(reg, "pebs_baseline", value), 1u);
  EXPECT_EQ(field_value(reg, "perf_metrics", value), 1u);
  EXPECT_EQ(field_value(reg, "pebs_output_pt", value), 0u);
}

TEST(MsrRegister, DecodeFieldsKeepsTableOrder) {
  const MsrRegister& reg = *find_register(address::kPerfStatus);
  auto fields = decode_fields(reg, 0x1c00);
  ASSERT_EQ(fields.size(), reg.fields.size());
  EXPECT_EQ(fields[0].name, "current_performance_state");
  EXPECT_EQ(fields[0].value, 0x1c00u);
  EXPECT_EQ(fields[1].name, "current_ratio");
  EXPECT_EQ(fields[1].value, 0x1cu);
  EXPECT_TRUE(decode_fields(*find_register(address::kAperf), 12345).empty());
}

// Values as the SDM lays them out: a Skylake-SP part with TjMax 100 C, readout 47 C below it.
TEST(MsrRegister, ThermalAndTurboFields) {
  const MsrRegister& therm = *find_register(address::kThermStatus);
  const uint64_t therm_value = (uint64_t{1} << 31) | (uint64_t{1} << 27) | (uint64_t{47} << 16) | 0x2;
  EXPECT_EQ(field_value(therm, "digital_readout", therm_value), 47u);
  EXPECT_EQ(field_value(therm, "reading_valid", therm_value), 1u);
  EXPECT_EQ(field_value(therm, "resolution_c", therm_value), 1u);
  EXPECT_EQ(field_value(therm, "thermal_status_log", therm_value), 1u);
  EXPECT_EQ(field_value(*find_register(address::kTemperatureTarget), "temperature_target", 0x00640000), 100u);
  // 1 core 3.7 GHz, 2 cores 3.7, 3-4 cores 3.5, 5-8 cores 3.3.
  const MsrRegister& turbo = *find_register("MSR_TURBO_RATIO_LIMIT");
  const uint64_t limits = 0x2121212123232525ull;
  EXPECT_EQ(field_value(turbo, "max_ratio_group_1", limits), 0x25u);
  EXPECT_EQ(field_value(turbo, "max_ratio_group_3", limits), 0x23u);
  EXPECT_EQ(field_value(turbo, "max_ratio_group_8", limits), 0x21u);
  EXPECT_EQ(find_register(0x1AE)->name, "MSR_TURBO_RATIO_LIMIT1");
}

TEST(MsrField, ExtractsFullWidth) {
  MsrField all{"all", 0, 63, ""};
  EXPECT_EQ(all.extract(~uint64_t{0}), ~uint64_t{0});
  MsrField top{"top", 63, 63, ""};
  EXPECT_EQ(top.extract(uint64_t{1} << 63), 1u);
}

}  // namespace
}  // namespace vperf::msr
