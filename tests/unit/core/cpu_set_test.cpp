#include "core/cpu_set.h"

#include <gtest/gtest.h>

namespace vperf {
namespace {

TEST(CpuList, ParsesSysfsFormat) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11").value(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5,1,1-2\n").value(), (std::vector<int>{1, 2, 5}));
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
}

TEST(CpuList, RejectsBadRangesNamingThem) {
  for (const char* bad : {"", "3-1", "a", "1,,2", "-1", "0-99999999", "1-"}) {
    auto r = parse_cpu_list(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(parse_cpu_list("0,3-1").error().message.find("'3-1'"), std::string::npos);
}

TEST(CpuList, OnlineCpusOfThisMachine) {
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok()) << cpus.error().describe();
  EXPECT_FALSE(cpus->empty());
  EXPECT_EQ(cpus->front(), 0);
}

}  // namespace
}  // namespace vperf
