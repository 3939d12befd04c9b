#include "core/name_filter.h"
#include "core/strings.h"

#include <gtest/gtest.h>

namespace vperf {
namespace {

TEST(ParseU64, AcceptsHexAndDecimalOnly) {
  EXPECT_EQ(parse_u64("0x13c"), 0x13cu);
  EXPECT_EQ(parse_u64("0X1F"), 0x1fu);
  EXPECT_EQ(parse_u64("42"), 42u);
  EXPECT_EQ(parse_u64("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(parse_u64(""));
  EXPECT_FALSE(parse_u64("0x"));
  EXPECT_FALSE(parse_u64("-1"));
  EXPECT_FALSE(parse_u64("12z"));
  EXPECT_FALSE(parse_u64("18446744073709551616"));
  EXPECT_EQ(parse_u64_base("13c", 16), 0x13cu);
}

TEST(Glob, MatchesLikePerf) {
  EXPECT_TRUE(glob_match("sched:*", "sched:sched_switch"));
  EXPECT_TRUE(glob_match("syscalls:sys_enter_*", "syscalls:sys_enter_read"));
  EXPECT_FALSE(glob_match("syscalls:sys_enter_*", "syscalls:sys_exit_read"));
  EXPECT_TRUE(glob_match("*cache*", "L1-dcache-loads"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
}

// A '*' in the text is matched by the pattern's '*' as a wildcard, not taken as the literal
// (found by vperf probe's lazy pattern "h*" missing the source line "h *= 0x100000001b3ULL;").
TEST(Strings, GlobStarMatchesTextHoldingAStar) {
  EXPECT_TRUE(glob_match("h*", "h*=0x100000001b3ULL;"));
  EXPECT_TRUE(glob_match("*", "*"));
  EXPECT_TRUE(glob_match("a*b", "a*xb"));
  EXPECT_FALSE(glob_match("a*b", "a*x"));
}

TEST(ClosestNames, SuggestsTyposAndSubstrings) {
  std::vector<std::string> names{"cycles", "instructions", "cache-misses", "branch-misses", "cpu-clock"};
  auto hints = closest_names("cyclse", names);
  ASSERT_FALSE(hints.empty());
  EXPECT_EQ(hints[0], "cycles");
  EXPECT_EQ(closest_names("instruction", names).at(0), "instructions");
  EXPECT_TRUE(closest_names("zzzzzzzzzz", names).empty());
  EXPECT_TRUE(closest_names("r", names).empty()) << "one letter has no plausible typo";
  EXPECT_TRUE(closest_names(std::string(100000, 'a'), names).empty());
  EXPECT_EQ(join_alternatives({"a", "b", "c"}), "a, b or c");
}

TEST(Split, KeepsEmptyFields) {
  auto parts = split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(trim("  x \n"), "x");
}

}  // namespace
}  // namespace vperf

namespace vperf {
namespace {

TEST(NameFilter, PerfProbesDefaultKeepsPlainFunctionNames) {
  Result<NameFilter> filter = NameFilter::parse("!_* & !*@plt");
  ASSERT_TRUE(filter) << filter.error().message;
  EXPECT_TRUE(filter->matches("malloc"));
  EXPECT_FALSE(filter->matches("__libc_malloc"));
  EXPECT_FALSE(filter->matches("printf@plt"));
}

TEST(NameFilter, AndBindsTighterThanOrAndParenthesesGroup) {
  Result<NameFilter> loose = NameFilter::parse("a* | b* & *z");
  ASSERT_TRUE(loose);
  EXPECT_TRUE(loose->matches("ax"));   // a* alone
  EXPECT_FALSE(loose->matches("bx"));  // b* but not *z
  EXPECT_TRUE(loose->matches("bz"));
  Result<NameFilter> grouped = NameFilter::parse("(a* | b*) & *z");
  ASSERT_TRUE(grouped);
  EXPECT_FALSE(grouped->matches("ax"));
  EXPECT_TRUE(grouped->matches("az"));
  EXPECT_TRUE(NameFilter::parse("!!malloc")->matches("malloc"));
}

TEST(NameFilter, MalformedFiltersAreErrorsThatSayWhere) {
  for (const char* text : {"", "a &", "(a | b", "a)", "&a", "a | | b"}) {
    Result<NameFilter> filter = NameFilter::parse(text);
    EXPECT_FALSE(filter) << text;
    if (!filter) {
      EXPECT_NE(filter.error().message.find("at character"), std::string::npos) << filter.error().message;
    }
  }
  EXPECT_FALSE(NameFilter::parse(std::string(100000, '(')));  // too deep: refused, not a stack overflow
}

}  // namespace
}  // namespace vperf
