// record --switch-output's values and file names, as perf 6.1 reads and writes them.
#include "session/switch_output.h"

#include <gtest/gtest.h>

#include <ctime>

namespace vperf::session {
namespace {

TEST(SwitchOutput, ReadsPerfsSignalSizesAndTimes) {
  Result<SwitchOutput> signal = parse_switch_output("signal");
  ASSERT_TRUE(signal.ok());
  EXPECT_EQ(signal->trigger, SwitchOutput::Trigger::signal);
  EXPECT_EQ(parse_switch_output("")->trigger, SwitchOutput::Trigger::signal);

  Result<SwitchOutput> size = parse_switch_output("100K");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->trigger, SwitchOutput::Trigger::size);
  EXPECT_EQ(size->bytes, 100u * 1024);
  EXPECT_EQ(parse_switch_output("3M")->bytes, 3u << 20);
  EXPECT_EQ(parse_switch_output("2G")->bytes, uint64_t{2} << 30);
  EXPECT_EQ(parse_switch_output("512B")->bytes, 512u);

  Result<SwitchOutput> time = parse_switch_output("30s");
  ASSERT_TRUE(time.ok());
  EXPECT_EQ(time->trigger, SwitchOutput::Trigger::time);
  EXPECT_EQ(time->every, std::chrono::seconds(30));
  // perf's tags are case-sensitive: "5m" is minutes, "5M" megabytes.
  EXPECT_EQ(parse_switch_output("5m")->every, std::chrono::minutes(5));
  EXPECT_EQ(parse_switch_output("5M")->trigger, SwitchOutput::Trigger::size);
  EXPECT_EQ(parse_switch_output("2h")->every, std::chrono::hours(2));
  EXPECT_EQ(parse_switch_output("1d")->every, std::chrono::hours(24));

  for (const char* bad : {"100", "100k", "5S", "0M", "M", "10MB", "-1s", "signals", "99999999999999999999G", "18446744073709551615G"}) {
    Result<SwitchOutput> refused = parse_switch_output(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("--switch-output"), std::string::npos) << refused.error().message;
  }
}

TEST(SwitchOutput, FileNamesCarryLocalTimeToTheHundredth) {
  std::tm local{};
  local.tm_year = 2026 - 1900;
  local.tm_mon = 10;
  local.tm_mday = 30;
  local.tm_hour = 7;
  local.tm_min = 4;
  local.tm_sec = 25;
  local.tm_isdst = -1;
  const auto when = std::chrono::system_clock::from_time_t(std::mktime(&local)) + std::chrono::milliseconds(959);
  EXPECT_EQ(switched_file_name("perf.data", when), "perf.data.2026113007042595");
  EXPECT_EQ(switched_file_name("/tmp/x.data", when - std::chrono::milliseconds(959)), "/tmp/x.data.2026113007042500");
}

}  // namespace
}  // namespace vperf::session
