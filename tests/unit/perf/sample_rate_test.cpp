#include "perf/sample_rate.h"

#include <gtest/gtest.h>

#include "support/fake_event_fs.h"

namespace vperf::perf {
namespace {

TEST(SampleRate, MaxIsTheKernelsLimitAndSaysSo) {
  Result<SampleRateChoice> rate = choose_sample_rate("max", 100000);
  ASSERT_TRUE(rate);
  EXPECT_EQ(rate->hz, 100000u);
  EXPECT_EQ(rate->info, "Using a maximum frequency rate of 100000 Hz");  // perf 6.1's words
  EXPECT_EQ(rate->warning, "");
}

TEST(SampleRate, ARateAboveTheLimitIsLoweredWithAWarning) {
  Result<SampleRateChoice> rate = choose_sample_rate("200000", 100000);
  ASSERT_TRUE(rate);
  EXPECT_EQ(rate->hz, 100000u);
  EXPECT_NE(rate->warning.find("throttling from 200000 Hz to 100000 Hz"), std::string::npos) << rate->warning;
  rate = choose_sample_rate("100000", 100000);
  ASSERT_TRUE(rate);
  EXPECT_EQ(rate->hz, 100000u);
  EXPECT_EQ(rate->warning, "");
}

TEST(SampleRate, AnythingElseIsAnError) {
  for (const char* bad : {"", "0", "-5", "fast", "1e3", "99999999999999999999"}) {
    Result<SampleRateChoice> rate = choose_sample_rate(bad, 100000);
    EXPECT_FALSE(rate) << bad;
    if (!rate) {
      EXPECT_FALSE(rate.error().hint.empty());
    }
  }
}

TEST(SampleRate, ReadsTheLimitFile) {
  test::TempTree tree;
  tree.write("rate", "79800\n");
  Result<uint64_t> limit = max_sample_rate(tree.root() / "rate");
  ASSERT_TRUE(limit) << limit.error().describe();
  EXPECT_EQ(*limit, 79800u);
  tree.write("bad", "lots\n");
  EXPECT_FALSE(max_sample_rate(tree.root() / "bad"));
  EXPECT_FALSE(max_sample_rate(tree.root() / "missing"));
}

}  // namespace
}  // namespace vperf::perf
