#include "core/error.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>
#include <string>

namespace vperf {
namespace {

Result<void> step(bool succeed) {
  if (!succeed) return Error::from_errno("write /tmp/x", ENOSPC);
  return {};
}

Result<int> number(bool succeed) {
  if (!succeed) return Error{"no number", 0};
  return 7;
}

// Runs a void step and a valued step through VPERF_TRY; `reached` counts the statements after
// each one, so a test sees whether the function went on or returned.
Result<std::string> two_steps(bool first, bool second, int& reached) {
  VPERF_TRY(step(first));
  ++reached;
  VPERF_TRY(number(second));
  ++reached;
  return std::string("done");
}

Result<int> doubled(bool succeed, int& reached) {
  VPERF_TRY(int n, number(succeed));
  ++reached;
  return 2 * n;
}

TEST(ResultVoid, DefaultIsSuccess) {
  Result<void> r = step(true);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_THROW((void)r.error(), std::logic_error);
}

TEST(ResultVoid, CarriesTheError) {
  Result<void> r = step(false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, ENOSPC);
  EXPECT_EQ(r.error().message, "write /tmp/x");
}

TEST(VperfTry, ContinuesPastSuccesses) {
  int reached = 0;
  Result<std::string> r = two_steps(true, true, reached);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "done");
  EXPECT_EQ(reached, 2);
}

TEST(VperfTry, ReturnsTheFirstErrorOfAVoidStep) {
  int reached = 0;
  Result<std::string> r = two_steps(false, true, reached);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "write /tmp/x");
  EXPECT_EQ(r.error().errno_value, ENOSPC);
  EXPECT_EQ(reached, 0);
}

TEST(VperfTry, ReturnsTheErrorOfAValuedStep) {
  int reached = 0;
  Result<std::string> r = two_steps(true, false, reached);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "no number");
  EXPECT_EQ(reached, 1);
}

TEST(VperfTry, AssignsTheValueOfASuccess) {
  int reached = 0;
  Result<int> r = doubled(true, reached);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 14);
  EXPECT_EQ(reached, 1);
}

TEST(VperfTry, ReturnsTheErrorInsteadOfAssigning) {
  int reached = 0;
  Result<int> r = doubled(false, reached);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "no number");
  EXPECT_EQ(reached, 0);
}

TEST(VperfTry, EvaluatesTheExpressionOnce) {
  int calls = 0;
  auto counted = [&]() -> Result<void> {
    VPERF_TRY((++calls, step(true)));
    return {};
  };
  EXPECT_TRUE(counted().ok());
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace vperf
