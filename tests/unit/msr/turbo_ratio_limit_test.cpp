// MSR_TURBO_RATIO_LIMIT(1) decoding, checked against turbostat's decoding of the same
// recorded register values.
#include "msr/turbo_ratio_limit.h"

#include <gtest/gtest.h>

namespace vperf::msr {
namespace {

TEST(TurboRatioLimit, SandyBridgeFourCores) {
  // i7-2600K: "cpu0: MSR_TURBO_RATIO_LIMIT: 0x23242526" -> 38, 37, 36, 35 for 1..4 active cores.
  const uint64_t value = 0x23242526;
  ASSERT_EQ(infer_turbo_limit_layout(value, std::nullopt), TurboLimitLayout::ActiveCores);
  auto steps = decode_turbo_ratio_limits(value, std::nullopt, TurboLimitLayout::ActiveCores);
  ASSERT_EQ(steps.size(), 4u) << "zero bytes are limits the part does not have";
  EXPECT_EQ(steps[0], (TurboStep{1, 38, 3800}));
  EXPECT_EQ(steps[1], (TurboStep{2, 37, 3700}));
  EXPECT_EQ(steps[2], (TurboStep{3, 36, 3600}));
  EXPECT_EQ(steps[3], (TurboStep{4, 35, 3500}));
  EXPECT_EQ(describe(steps[0]), "1 active core: 38 -> 3800 MHz");
  EXPECT_EQ(describe(steps[3]), "4 active cores: 35 -> 3500 MHz");
}

TEST(TurboRatioLimit, SixCoreDesktopDefinesEightBytes) {
  // "0x2b2b2e2e2e2e2e2e": 46 for 1..6 cores, 43 for 7 and 8 (which that part does not have).
  auto steps = decode_turbo_ratio_limits(0x2b2b2e2e2e2e2e2eull, std::nullopt, TurboLimitLayout::ActiveCores);
  ASSERT_EQ(steps.size(), 8u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(steps[i].ratio, 46u) << i;
  EXPECT_EQ(steps[6], (TurboStep{7, 43, 4300}));
  EXPECT_EQ(steps[7], (TurboStep{8, 43, 4300}));
}

TEST(TurboRatioLimit, AlderLakeLowBytesFirst) {
  // "0x3434343434343636": 54 for 1-2 active cores, 52 for 3..8.
  auto steps = decode_turbo_ratio_limits(0x3434343434343636ull, std::nullopt, TurboLimitLayout::ActiveCores);
  ASSERT_EQ(steps.size(), 8u);
  EXPECT_EQ(describe(steps[0]), "1 active core: 54 -> 5400 MHz");
  EXPECT_EQ(describe(steps[1]), "2 active cores: 54 -> 5400 MHz");
  EXPECT_EQ(describe(steps[2]), "3 active cores: 52 -> 5200 MHz");
}

TEST(TurboRatioLimit, SkylakeSpGroupsTakeCoreCountsFromLimit1) {
  // A 48-core Xeon: MSR_TURBO_RATIO_LIMIT 0x2020212123242526, MSR_TURBO_RATIO_LIMIT1
  // 0x302e2c2a26221e18; turbostat: 38 up to 24 cores, 37 to 30, 36 to 34, 35 to 38, 33 to 42
  // and 44, 32 to 46 and 48.
  const uint64_t limit = 0x2020212123242526ull;
  const uint64_t limit1 = 0x302e2c2a26221e18ull;
  ASSERT_EQ(infer_turbo_limit_layout(limit, limit1), TurboLimitLayout::CoreGroups);
  auto steps = decode_turbo_ratio_limits(limit, limit1, TurboLimitLayout::CoreGroups);
  ASSERT_EQ(steps.size(), 8u);
  EXPECT_EQ(steps[0], (TurboStep{24, 38, 3800}));
  EXPECT_EQ(steps[1], (TurboStep{30, 37, 3700}));
  EXPECT_EQ(steps[2], (TurboStep{34, 36, 3600}));
  EXPECT_EQ(steps[3], (TurboStep{38, 35, 3500}));
  EXPECT_EQ(steps[4], (TurboStep{42, 33, 3300}));
  EXPECT_EQ(steps[5], (TurboStep{44, 33, 3300}));
  EXPECT_EQ(steps[6], (TurboStep{46, 32, 3200}));
  EXPECT_EQ(steps[7], (TurboStep{48, 32, 3200}));
  EXPECT_EQ(describe(steps[7]), "48 active cores: 32 -> 3200 MHz");
}

TEST(TurboRatioLimit, Limit1AsMoreActiveCoreRatios) {
  // An 18-core Haswell-EP style pair: 0x1AE continues with 9..16 cores, ratios falling.
  const uint64_t limit = 0x1f1f202021212223ull;
  const uint64_t limit1 = 0x1c1c1c1c1d1d1e1eull;
  ASSERT_EQ(infer_turbo_limit_layout(limit, limit1), TurboLimitLayout::ActiveCores);
  auto steps = decode_turbo_ratio_limits(limit, limit1, TurboLimitLayout::ActiveCores);
  ASSERT_EQ(steps.size(), 16u);
  EXPECT_EQ(steps[0], (TurboStep{1, 0x23, 3500}));
  EXPECT_EQ(steps[8], (TurboStep{9, 0x1e, 3000}));
  EXPECT_EQ(steps[15], (TurboStep{16, 0x1c, 2800}));
  // One nonzero byte says nothing about the layout.
  EXPECT_EQ(infer_turbo_limit_layout(limit, 0x18), TurboLimitLayout::ActiveCores);
}

TEST(TurboRatioLimit, NoTurboIsNoSteps) {
  EXPECT_TRUE(decode_turbo_ratio_limits(0, std::nullopt, TurboLimitLayout::ActiveCores).empty());
}

}  // namespace
}  // namespace vperf::msr
