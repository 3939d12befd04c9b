// Workload with real processes: the handshake, exit statuses, exec failures, reaping with and
// without blocking, and signal forwarding (the waiting itself is RunLoop's: run_loop_test.cpp).
#include "perf/workload.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "perf/stop_signals.h"
#include "support/processes.h"

namespace vperf::perf {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

WorkloadExit run_to_end(const std::vector<std::string>& argv) {
  auto w = Workload::prepare(argv);
  EXPECT_TRUE(w.ok()) << w.error().describe();
  auto started = w->start();
  EXPECT_TRUE(started.ok()) << started.error().describe();
  auto done = w->wait();
  EXPECT_TRUE(done.ok()) << done.error().describe();
  return done.ok() ? *done : WorkloadExit{};
}

// A scratch path that does not exist yet.
fs::path scratch_path(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("vperf_workload_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove(p);
  return p;
}

// Whether `pid` is still our child (unreaped, zombie or running).
bool is_our_child(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

TEST(Workload, ExitStatusPropagates) {
  WorkloadExit e = run_to_end({"sh", "-c", "exit 3"});
  EXPECT_FALSE(e.signaled);
  EXPECT_EQ(e.code, 3);
  EXPECT_EQ(e.shell_status(), 3);
  EXPECT_EQ(e.describe(), "exited with status 3");
}

TEST(Workload, KilledChildIsSignaled) {
  WorkloadExit e = run_to_end({"sh", "-c", "kill -9 $$"});
  EXPECT_TRUE(e.signaled);
  EXPECT_EQ(e.code, SIGKILL);
  EXPECT_EQ(e.shell_status(), 128 + 9);
  EXPECT_EQ(e.describe(), "killed by signal 9 (Killed)");
}

TEST(Workload, RusageIsReported) {
  WorkloadExit e = run_to_end({"sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"});
  EXPECT_EQ(e.code, 0);
  EXPECT_GT(e.user_seconds + e.system_seconds, 0.01);
}

TEST(Workload, ChildIsInOurProcessGroup) {
  auto w = Workload::prepare({"sleep", "5"});
  ASSERT_TRUE(w.ok()) << w.error().describe();
  EXPECT_EQ(::getpgid(w->pid()), ::getpgrp()) << "a terminal's ^C must reach both, as with perf";
  ASSERT_TRUE(w->start().ok());
  EXPECT_EQ(::getpgid(w->pid()), ::getpgrp());
}

TEST(Workload, ExecFailureIsStartsError) {
  auto w = Workload::prepare({"vperf-no-such-program", "x"});
  ASSERT_TRUE(w.ok()) << "prepare only forks: " << w.error().describe();
  auto started = w->start();
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().describe(), "cannot run 'vperf-no-such-program': No such file or directory");
  EXPECT_EQ(started.error().errno_value, ENOENT);
  auto done = w->try_reap();
  ASSERT_TRUE(done.ok());
  ASSERT_TRUE(done->has_value()) << "start() reaped the child that could not exec";
  EXPECT_EQ((*done)->code, 127);
}

TEST(Workload, ExecPermissionDenied) {
  fs::path p = scratch_path("not_executable");
  { std::FILE* f = std::fopen(p.c_str(), "w"); ASSERT_NE(f, nullptr); std::fclose(f); }
  auto w = Workload::prepare({p.string()});
  ASSERT_TRUE(w.ok());
  auto started = w->start();
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().describe(), "cannot run '" + p.string() + "': Permission denied");
  fs::remove(p);
}

TEST(Workload, EmptyArgvIsAnError) { EXPECT_FALSE(Workload::prepare({}).ok()); }

TEST(Workload, StartTwiceIsAnError) {
  auto w = Workload::prepare({"true"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->start().ok());
  EXPECT_FALSE(w->start().ok());
}

TEST(Workload, ChildDoesNotRunBeforeStart) {
  fs::path p = scratch_path("gate");
  auto w = Workload::prepare({"touch", p.string()});
  ASSERT_TRUE(w.ok());
  // Parked: blocked reading the go-ahead, not exec'd (touch would have run and exited).
  EXPECT_TRUE(test::wait_until([&] { return test::blocked_syscall(w->pid(), w->pid()) == SYS_read; }, 10s))
      << "the child is not waiting for start()";
  EXPECT_FALSE(fs::exists(p)) << "the child ran before start()";
  ASSERT_TRUE(w->start().ok());
  auto done = w->wait();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->code, 0);
  EXPECT_TRUE(fs::exists(p));
  fs::remove(p);
}

TEST(Workload, NeverStartedChildNeverExecsAndIsReaped) {
  fs::path p = scratch_path("never");
  pid_t pid;
  {
    auto w = Workload::prepare({"touch", p.string()});
    ASSERT_TRUE(w.ok());
    pid = w->pid();
    EXPECT_TRUE(is_our_child(pid));
  }
  EXPECT_FALSE(is_our_child(pid));
  EXPECT_FALSE(fs::exists(fs::path("/proc") / std::to_string(pid))) << "no zombie left";
  EXPECT_FALSE(fs::exists(p)) << "reaped without running touch";
}

TEST(Workload, TryReapLeavesARunningChildThenTerminateEndsIt) {
  auto w = Workload::prepare({"sleep", "10"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->start().ok());
  auto running = w->try_reap();
  ASSERT_TRUE(running.ok()) << running.error().describe();
  EXPECT_FALSE(running->has_value()) << "sleep 10 has not ended";
  EXPECT_TRUE(is_our_child(w->pid()));
  w->terminate();
  auto done = w->wait();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->signaled);
  EXPECT_EQ(done->code, SIGTERM);
  EXPECT_EQ(done->shell_status(), 143);
  auto again = w->try_reap();
  ASSERT_TRUE(again.ok() && again->has_value()) << "the exit is remembered";
  EXPECT_EQ((*again)->code, SIGTERM);
  w->terminate();  // harmless after reaping
}

TEST(Workload, DestructorKillsAndReapsARunningChild) {
  pid_t pid;
  {
    auto w = Workload::prepare({"sleep", "30"});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->start().ok());
    pid = w->pid();
  }
  EXPECT_FALSE(is_our_child(pid));
  EXPECT_FALSE(fs::exists(fs::path("/proc") / std::to_string(pid)));
}

TEST(Workload, MovedWorkloadOwnsTheChild) {
  auto w = Workload::prepare({"sh", "-c", "exit 4"});
  ASSERT_TRUE(w.ok());
  Workload moved = std::move(w).value();
  ASSERT_TRUE(moved.start().ok());
  auto done = moved.wait();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->code, 4);
}

// A stop signal sent to vperf (`kill -TERM <vperf>`) reaches the child through forward().
TEST(Workload, StopSignalIsForwardedToTheChild) {
  auto signals = StopSignals::install();
  ASSERT_TRUE(signals.ok()) << signals.error().describe();
  auto w = Workload::prepare({"sleep", "10"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->start().ok());
  ::kill(::getpid(), SIGTERM);
  std::vector<StopSignal> taken = signals->take();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(signals->received(), SIGTERM);
  w->forward(taken);
  auto done = w->wait();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->signaled);
  EXPECT_EQ(done->code, SIGTERM) << "the child got the forwarded SIGTERM";
}

TEST(Workload, ForwardedInterruptIsTheShellsInterrupt) {
  auto signals = StopSignals::install();
  ASSERT_TRUE(signals.ok());
  auto w = Workload::prepare({"sleep", "10"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->start().ok());
  ::raise(SIGINT);
  w->forward(signals->take());
  auto done = w->wait();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->signaled);
  EXPECT_EQ(done->code, SIGINT);
  EXPECT_EQ(done->shell_status(), 130);
}

TEST(Workload, TerminalSignalIsNotForwardedTwice) {
  auto signals = StopSignals::install();
  ASSERT_TRUE(signals.ok());
  auto w = Workload::prepare({"sleep", "10"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->start().ok());
  // What the tty driver sends on ^C: si_code SI_KERNEL (allowed when sending to oneself).
  siginfo_t info{};
  info.si_signo = SIGINT;
  info.si_code = SI_KERNEL;
  ASSERT_EQ(::syscall(SYS_rt_sigqueueinfo, ::getpid(), SIGINT, &info), 0) << std::strerror(errno);
  std::vector<StopSignal> taken = signals->take();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_TRUE(taken[0].from_terminal);
  w->forward(taken);
  // The child, which the tty would have signalled itself, was left alone. Known without waiting:
  // a fatal signal sent to it sets its exit code at once (the kernel's group exit), so had
  // forward() sent SIGINT, the SIGKILL below could not change that code.
  auto still = w->try_reap();
  ASSERT_TRUE(still.ok());
  EXPECT_FALSE(still->has_value());
  w->terminate(SIGKILL);
  auto done = w->wait();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->code, SIGKILL);
}

TEST(Workload, ChildGetsTheDispositionsFromBeforeStopSignals) {
  struct sigaction ignore {}, old_hup {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGHUP, &ignore, &old_hup), 0);  // as under nohup
  {
    auto signals = StopSignals::install();
    ASSERT_TRUE(signals.ok());
    // SIGHUP was ignored before install(): still ignored in the child. SIGINT was default.
    WorkloadExit hup = run_to_end({"sh", "-c", "kill -HUP $$; exit 5"});
    EXPECT_FALSE(hup.signaled);
    EXPECT_EQ(hup.code, 5);
    WorkloadExit intr = run_to_end({"sh", "-c", "kill -INT $$; exit 5"});
    EXPECT_TRUE(intr.signaled);
    EXPECT_EQ(intr.code, SIGINT);
    EXPECT_FALSE(signals->received().has_value()) << "the child never ran vperf's handler";
  }
  ASSERT_EQ(::sigaction(SIGHUP, &old_hup, nullptr), 0);
}

}  // namespace
}  // namespace vperf::perf
