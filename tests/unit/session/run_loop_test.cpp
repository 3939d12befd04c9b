// RunLoop with a fake clock: its waits advance time instead of sleeping, so deadlines and
// intervals are exact and nothing waits on the wall clock. Fds, signals and a workload are
// real: the loop must see their readiness.
#include "session/run_loop.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <thread>
#include <vector>

#include "core/scoped_fd.h"
#include "support/processes.h"

namespace vperf::session {
namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

// Waits that return at once: ready fds are reported as they are; otherwise time jumps to the
// end of the timeout. Without a timeout the wait blocks on the real fds (readiness, not time).
class FakeClock final : public RunClock {
 public:
  nanoseconds time{0};
  int waits = 0;
  std::vector<std::optional<nanoseconds>> timeouts;  // as asked, one per wait
  nanoseconds late_by{0};                            // added to every timed-out wait

  nanoseconds now() const override { return time; }
  std::chrono::system_clock::time_point wall() const override { return std::chrono::system_clock::time_point(time); }
  Result<int> wait(std::span<pollfd> fds, std::optional<nanoseconds> timeout) override {
    ++waits;
    timeouts.push_back(timeout);
    int ready = ::poll(fds.data(), fds.size(), timeout ? 0 : -1);
    if (ready < 0) return Error::from_errno("poll");
    if (ready == 0 && timeout) time += *timeout + late_by;
    return ready;
  }
};

struct Pipe {
  ScopedFd read_end, write_end;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_end = ScopedFd(fds[0]);
    write_end = ScopedFd(fds[1]);
  }
};

TEST(RunLoop, StopsAtItsDeadline) {
  FakeClock clock;
  RunLoop loop(clock);
  nanoseconds fired{-1};
  loop.at(5s, [&] {
    fired = clock.now();
    return Next::stop;
  });
  Result<bool> stopped = loop.run();
  ASSERT_TRUE(stopped.ok()) << stopped.error().describe();
  EXPECT_TRUE(*stopped);
  EXPECT_EQ(fired, 5s);
  EXPECT_EQ(clock.waits, 1);
  EXPECT_EQ(clock.timeouts[0], nanoseconds(5s));
}

TEST(RunLoop, PeriodicTimerKeepsItsPhaseAndTheEarlierTimerComesFirst) {
  FakeClock clock;
  clock.time = 10s;
  RunLoop loop(clock);
  std::vector<std::pair<char, nanoseconds>> calls;
  loop.every(11s, 1s, [&] {
    calls.push_back({'i', clock.now()});
    return Next::keep_going;
  });
  loop.at(13500ms, [&] {
    calls.push_back({'d', clock.now()});
    return Next::stop;
  });
  ASSERT_TRUE(loop.run().ok());
  std::vector<std::pair<char, nanoseconds>> expected = {{'i', 11s}, {'i', 12s}, {'i', 13s}, {'d', 13500ms}};
  EXPECT_EQ(calls, expected);
}

TEST(RunLoop, LatePeriodicTimerCatchesUpOneRoundAtATime) {
  FakeClock clock;
  clock.late_by = 2500ms;  // the first wait comes back 2.5 s after its timer was due
  RunLoop loop(clock);
  std::vector<nanoseconds> calls;
  loop.every(1s, 1s, [&] {
    calls.push_back(clock.now());
    clock.late_by = 0s;
    return calls.size() == 4 ? Next::stop : Next::keep_going;
  });
  ASSERT_TRUE(loop.run().ok());
  // Due at 1, 2, 3 s (all past at 3.5 s): one call per round, then 4 s on time.
  EXPECT_EQ(calls, (std::vector<nanoseconds>{3500ms, 3500ms, 3500ms, 4s}));
  EXPECT_EQ(clock.timeouts[1], nanoseconds(0));
  EXPECT_EQ(clock.timeouts[3], nanoseconds(500ms));
}

TEST(RunLoop, ReadableFdCallsItsHandlerBeforeTheTimers) {
  FakeClock clock;
  RunLoop loop(clock);
  Pipe pipe;
  ASSERT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
  std::vector<std::string> calls;
  loop.at(0s, [&] {
    calls.push_back("timer");
    return Next::keep_going;
  });
  loop.watch_fd(pipe.read_end.get(), [&](short revents) {
    EXPECT_TRUE(revents & POLLIN);
    char c;
    EXPECT_EQ(::read(pipe.read_end.get(), &c, 1), 1);
    calls.push_back("fd");
    return Next::keep_going;
  });
  int rounds = 0;
  loop.after_each_wait([&] {
    ++rounds;
    return Next::stop;
  });
  ASSERT_TRUE(loop.run().ok());
  EXPECT_EQ(calls, (std::vector<std::string>{"fd", "timer"})) << "both in one round, the fd first";
  EXPECT_EQ(rounds, 1);
}

TEST(RunLoop, HungUpFdIsUnwatchedAndNothingLeftEndsTheRun) {
  FakeClock clock;
  RunLoop loop(clock);
  Pipe pipe;
  pipe.write_end.reset();
  int calls = 0;
  loop.watch_fd(pipe.read_end.get(), [&](short revents) {
    EXPECT_TRUE(revents & POLLHUP);
    ++calls;
    return Next::unwatch;
  });
  Result<bool> stopped = loop.run();
  ASSERT_TRUE(stopped.ok());
  EXPECT_FALSE(*stopped) << "nothing said stop: the loop ran out of things to wait for";
  EXPECT_EQ(calls, 1);
}

TEST(RunLoop, HandlerCancelsTheTimers) {
  FakeClock clock;
  RunLoop loop(clock);
  Pipe pipe;
  int ticks = 0;
  loop.every(1s, 1s, [&] {
    if (++ticks == 2) {
      EXPECT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
    }
    return Next::keep_going;
  });
  loop.watch_fd(pipe.read_end.get(), [&](short) {
    loop.cancel_timers();
    return Next::unwatch;
  });
  Result<bool> stopped = loop.run();
  ASSERT_TRUE(stopped.ok());
  EXPECT_FALSE(*stopped);
  EXPECT_EQ(ticks, 2);
  EXPECT_EQ(clock.now(), 2s);
}

TEST(RunLoop, StopSignalReachesItsHandler) {
  Result<perf::StopSignals> signals = perf::StopSignals::install();
  ASSERT_TRUE(signals.ok()) << signals.error().describe();
  FakeClock clock;
  RunLoop loop(clock);
  std::vector<int> got;
  loop.watch_signals(*signals, [&](const std::vector<perf::StopSignal>& taken) {
    for (const perf::StopSignal& s : taken) got.push_back(s.number);
    return Next::stop;
  });
  loop.at(1h, [] { return Next::keep_going; });
  ::raise(SIGINT);
  Result<bool> stopped = loop.run();
  ASSERT_TRUE(stopped.ok());
  EXPECT_TRUE(*stopped);
  EXPECT_EQ(got, std::vector<int>{SIGINT});
  EXPECT_EQ(clock.now(), 0s) << "the signal, not the timer, ended the run";
  EXPECT_TRUE(signals->take().empty()) << "the loop took the signal";
}

TEST(RunLoop, WorkloadExitIsReapedAndHandedOver) {
  Result<perf::Workload> workload = perf::Workload::prepare({"sh", "-c", "exit 7"});
  ASSERT_TRUE(workload.ok()) << workload.error().describe();
  ASSERT_TRUE(workload->start().ok());
  FakeClock clock;
  RunLoop loop(clock);
  std::optional<perf::WorkloadExit> exit;
  loop.watch_workload(workload.value(), [&](const perf::WorkloadExit& e) {
    exit = e;
    return Next::stop;
  });
  Result<bool> stopped = loop.run();
  ASSERT_TRUE(stopped.ok()) << stopped.error().describe();
  EXPECT_TRUE(*stopped);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->code, 7);
  EXPECT_TRUE(workload->reaped());
}

// `kill -TERM <vperf>` while the loop is blocked in its poll: the signal wakes it, the handler
// forwards it, and the workload's end (from the forwarded SIGTERM) ends the run.
TEST(RunLoop, StopSignalWhileBlockedIsForwardedToTheWorkload) {
  Result<perf::StopSignals> signals = perf::StopSignals::install();
  ASSERT_TRUE(signals.ok()) << signals.error().describe();
  Result<perf::Workload> workload = perf::Workload::prepare({"sleep", "30"});
  ASSERT_TRUE(workload.ok());
  ASSERT_TRUE(workload->start().ok());
  SystemRunClock clock;
  RunLoop loop(clock);
  std::optional<perf::WorkloadExit> exit;
  loop.watch_workload(workload.value(), [&](const perf::WorkloadExit& e) {
    exit = e;
    return Next::stop;
  });
  loop.watch_signals(*signals, [&](const std::vector<perf::StopSignal>& taken) {
    workload->forward(taken);
    return Next::keep_going;
  });
  const pid_t waiter = static_cast<pid_t>(::syscall(SYS_gettid));
  std::thread sender([waiter] {
    test::wait_until([&] { return test::blocked_in_wait(::getpid(), waiter); }, 10s);
    ::kill(::getpid(), SIGTERM);
  });
  Result<bool> stopped = loop.run();
  sender.join();
  ASSERT_TRUE(stopped.ok()) << stopped.error().describe();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->code, SIGTERM) << "the child got the forwarded SIGTERM";
}

TEST(RunLoop, WorkloadThatGoesOnIsUnwatchedAfterItsExit) {
  Result<perf::Workload> workload = perf::Workload::prepare({"true"});
  ASSERT_TRUE(workload.ok());
  ASSERT_TRUE(workload->start().ok());
  FakeClock clock;
  RunLoop loop(clock);
  int exits = 0;
  loop.watch_workload(workload.value(), [&](const perf::WorkloadExit&) {
    ++exits;
    return Next::keep_going;
  });
  Result<bool> stopped = loop.run();
  ASSERT_TRUE(stopped.ok());
  EXPECT_FALSE(*stopped);
  EXPECT_EQ(exits, 1);
}

TEST(RunLoop, TasksThatEndedAreNoticedAtTheNextLook) {
  FakeClock clock;
  RunLoop loop(clock);
  nanoseconds noticed{-1};
  loop.watch_tasks({::getpid()}, 100ms, [] { return Next::stop; });  // this process: alive throughout
  loop.watch_tasks({0x3ffffff0}, 100ms, [&] {                          // above pid_max: never alive
    noticed = clock.now();
    return Next::keep_going;
  });
  loop.at(1s, [] { return Next::stop; });
  ASSERT_TRUE(loop.run().ok());
  EXPECT_EQ(noticed, 100ms) << "once, at the first look";
  EXPECT_EQ(clock.now(), 1s) << "the live task kept the run going to the deadline";
}

TEST(SystemRunClock, ReportsAReadyFdAndATimeout) {
  SystemRunClock clock;
  Pipe pipe;
  std::array<pollfd, 1> fds{{{pipe.read_end.get(), POLLIN, 0}}};
  Result<int> none = clock.wait(fds, 0ns);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0);
  ASSERT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
  Result<int> one = clock.wait(fds, std::nullopt);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, 1);
  EXPECT_TRUE(fds[0].revents & POLLIN);
  const nanoseconds first = clock.now();
  EXPECT_LE(first, clock.now()) << "monotonic";
}

}  // namespace
}  // namespace vperf::session
