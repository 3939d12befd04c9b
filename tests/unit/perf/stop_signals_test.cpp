#include "perf/stop_signals.h"

#include <poll.h>
#include <signal.h>

#include <gtest/gtest.h>

namespace vperf::perf {
namespace {

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

void (*handler_of(int signal))(int) {
  struct sigaction now {};
  ::sigaction(signal, nullptr, &now);
  return now.sa_handler;
}

TEST(StopSignals, RecordsInsteadOfDying) {
  auto signals = StopSignals::install();
  ASSERT_TRUE(signals.ok()) << signals.error().describe();
  EXPECT_FALSE(signals->received().has_value());
  EXPECT_FALSE(readable(signals->fd()));
  ::raise(SIGTERM);
  ::raise(SIGINT);
  EXPECT_TRUE(readable(signals->fd()));
  EXPECT_EQ(signals->received(), SIGINT) << "the latest one";
  std::vector<StopSignal> got = signals->take();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].number, SIGTERM);
  EXPECT_EQ(got[1].number, SIGINT);
  EXPECT_FALSE(got[0].from_terminal) << "raise() is not the tty";
  EXPECT_FALSE(readable(signals->fd())) << "take() drains";
  EXPECT_TRUE(signals->take().empty());
  EXPECT_EQ(signals->received(), SIGINT) << "received() survives take()";
  ::raise(SIGHUP);
  EXPECT_EQ(signals->received(), SIGHUP);
}

// record --switch-output's SIGUSR2: recorded only when asked for, and given back after.
TEST(StopSignals, SigusrTwoOnlyWhenAskedFor) {
  const auto usr2_before = handler_of(SIGUSR2);
  {
    auto signals = StopSignals::install();
    ASSERT_TRUE(signals.ok());
    EXPECT_EQ(handler_of(SIGUSR2), usr2_before) << "not handled by default";
  }
  {
    auto signals = StopSignals::install(true);
    ASSERT_TRUE(signals.ok());
    ::raise(SIGUSR2);
    ::raise(SIGINT);
    std::vector<StopSignal> got = signals->take();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].number, SIGUSR2);
    EXPECT_EQ(got[1].number, SIGINT);
  }
  EXPECT_EQ(handler_of(SIGUSR2), usr2_before);
}

TEST(StopSignals, RestoresPreviousHandlers) {
  struct sigaction ignore {}, old_term {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGTERM, &ignore, &old_term), 0);
  const auto int_before = handler_of(SIGINT);
  {
    auto signals = StopSignals::install();
    ASSERT_TRUE(signals.ok());
    EXPECT_NE(handler_of(SIGTERM), SIG_IGN);
    StopSignals moved = std::move(signals).value();  // a moved-from object restores nothing
    EXPECT_NE(handler_of(SIGTERM), SIG_IGN);
  }
  EXPECT_EQ(handler_of(SIGTERM), SIG_IGN);
  EXPECT_EQ(handler_of(SIGINT), int_before);
  ASSERT_EQ(::sigaction(SIGTERM, &old_term, nullptr), 0);
}

TEST(StopSignals, OnlyOneAtATime) {
  auto first = StopSignals::install();
  ASSERT_TRUE(first.ok());
  auto second = StopSignals::install();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().errno_value, EBUSY);
}

TEST(StopSignals, CanBeInstalledAgainAfterwards) {
  { auto a = StopSignals::install(); ASSERT_TRUE(a.ok()); }
  auto b = StopSignals::install();
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->received().has_value()) << "a new install starts afresh";
}

}  // namespace
}  // namespace vperf::perf
