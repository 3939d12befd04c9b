#pragma once
// The one place a command waits. A RunLoop polls what the command registered — file
// descriptors (ring buffers, a pipe), the stop signals (perf/stop_signals.h), a workload's
// exit (perf/workload.h) — and runs timers (a deadline, -I intervals, a periodic drain), and
// calls each one's handler, which says whether to go on. Commands write no wait loops of their
// own: record, stat, turbo, kvm stat live and the monitor recorder all run on one.
//
// Time and the wait itself come from a RunClock, so tests drive the loop with a fake clock
// (a wait that advances time instead of sleeping) and no real signals or timers.
//
// A round: wait (ppoll) until an fd is ready or the earliest timer is due; call the handlers
// of the ready fds in the order they were registered, then those of the timers now due
// (earliest first; each at most once a round, so a late periodic timer catches up one round
// at a time, keeping its phase), then the after-each-wait hook. The first handler that says
// stop ends run(); the ones after it in that round are not called.
#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/error.h"
#include "perf/stop_signals.h"
#include "perf/workload.h"

namespace vperf::session {

// What a handler tells the loop.
enum class Next {
  keep_going,
  stop,     // run() returns
  unwatch,  // keep going without this fd or timer (a hung-up ring, a finished countdown)
};

// Time and waiting, as the loop sees them.
class RunClock {
 public:
  virtual ~RunClock() = default;
  virtual std::chrono::nanoseconds now() const = 0;                    // monotonic
  virtual std::chrono::system_clock::time_point wall() const = 0;      // for printed times of day
  // Waits until one of `fds` is ready or `timeout` has passed (nullopt: no limit), as ppoll:
  // sets revents and returns how many fds are ready (0 on a timeout or an interrupted wait).
  virtual Result<int> wait(std::span<pollfd> fds, std::optional<std::chrono::nanoseconds> timeout) = 0;
};

// steady_clock, system_clock and ppoll.
class SystemRunClock final : public RunClock {
 public:
  std::chrono::nanoseconds now() const override;
  std::chrono::system_clock::time_point wall() const override;
  Result<int> wait(std::span<pollfd> fds, std::optional<std::chrono::nanoseconds> timeout) override;
};

class RunLoop {
 public:
  using OnReady = std::function<Next(short revents)>;
  using OnTime = std::function<Next()>;
  using OnSignals = std::function<Next(const std::vector<perf::StopSignal>& signals)>;
  using OnExit = std::function<Next(const perf::WorkloadExit& exit)>;

  explicit RunLoop(RunClock& clock) : clock_(clock) {}
  RunLoop(const RunLoop&) = delete;
  RunLoop& operator=(const RunLoop&) = delete;

  RunClock& clock() const { return clock_; }
  std::chrono::nanoseconds now() const { return clock_.now(); }

  // Calls `on_ready` whenever `fd` is readable (`events`: poll's events, POLLIN unless told),
  // hung up or in error.
  void watch_fd(int fd, OnReady on_ready, short events = POLLIN);
  // Calls `on_signals` with the stop signals received (taken from `signals`).
  void watch_signals(const perf::StopSignals& signals, OnSignals on_signals);
  // Calls `on_exit` once, when `workload` has exited, with its exit (reaped). A failure to
  // reap ends run() with that error.
  void watch_workload(perf::Workload& workload, OnExit on_exit);
  // Calls `on_time` at `first` (a now() value) and every `interval` after it (a fixed
  // schedule: first + k * interval, however late a call was).
  void every(std::chrono::nanoseconds first, std::chrono::nanoseconds interval, OnTime on_time);
  // Calls `on_time` once, at `when` (a now() value).
  void at(std::chrono::nanoseconds when, OnTime on_time);
  // Calls `on_all_ended` once none of `tasks` (thread ids) exists any more, looking every
  // `period` from now: there is no portable way to poll for another process's thread's end.
  void watch_tasks(std::vector<pid_t> tasks, std::chrono::nanoseconds period, OnTime on_all_ended);
  // Drops every timer (a stat run that has told its command to end only waits for it now).
  void cancel_timers();
  // Called after every round, whatever woke it (record drains its rings there).
  void after_each_wait(OnTime hook) { after_each_wait_ = std::move(hook); }

  // Runs rounds until a handler says stop (true), nothing is left to wait for (false), or
  // the wait or a workload's reaping fails (the Error).
  Result<bool> run();

 private:
  struct Watch {
    int fd = -1;
    OnReady on_ready;
    short events = POLLIN;
    bool active = true;
  };
  struct Timer {
    std::chrono::nanoseconds due{0};
    std::chrono::nanoseconds interval{0};  // 0: once
    OnTime on_time;
    bool active = true;
  };

  std::optional<std::chrono::nanoseconds> next_timeout() const;
  // Runs the handlers of one round; true when one said stop.
  bool dispatch_fds(std::span<const pollfd> fds);
  bool dispatch_timers();
  void compact();

  RunClock& clock_;
  std::vector<Watch> watches_;
  std::vector<Timer> timers_;
  OnTime after_each_wait_;
  std::optional<Error> failure_;
};

// Whether thread `tid` exists (/proc/TID).
bool task_alive(pid_t tid);

}  // namespace vperf::session
