#include "session/run_loop.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <utility>

namespace vperf::session {

using std::chrono::nanoseconds;

nanoseconds SystemRunClock::now() const { return std::chrono::steady_clock::now().time_since_epoch(); }

std::chrono::system_clock::time_point SystemRunClock::wall() const { return std::chrono::system_clock::now(); }

Result<int> SystemRunClock::wait(std::span<pollfd> fds, std::optional<nanoseconds> timeout) {
  timespec limit{};
  if (timeout) {
    const int64_t ns = std::max<int64_t>(0, timeout->count());
    limit.tv_sec = static_cast<time_t>(ns / 1000000000);
    limit.tv_nsec = static_cast<long>(ns % 1000000000);
  }
  const int ready = ::ppoll(fds.data(), fds.size(), timeout ? &limit : nullptr, nullptr);
  if (ready >= 0) return ready;
  if (errno != EINTR) return Error::from_errno("wait (ppoll)");
  // A signal handler ran (a stop signal's self-pipe is then readable): the next round sees it.
  for (pollfd& p : fds) p.revents = 0;
  return 0;
}

void RunLoop::watch_fd(int fd, OnReady on_ready, short events) { watches_.push_back({fd, std::move(on_ready), events}); }

void RunLoop::watch_signals(const perf::StopSignals& signals, OnSignals on_signals) {
  watch_fd(signals.fd(), [&signals, on_signals = std::move(on_signals)](short) {
    std::vector<perf::StopSignal> taken = signals.take();
    return taken.empty() ? Next::keep_going : on_signals(taken);
  });
}

void RunLoop::watch_workload(perf::Workload& workload, OnExit on_exit) {
  watch_fd(workload.exit_fd(), [this, &workload, on_exit = std::move(on_exit)](short) {
    Result<std::optional<perf::WorkloadExit>> exit = workload.try_reap();
    if (!exit) {
      failure_ = exit.error();
      return Next::stop;
    }
    if (!*exit) return Next::keep_going;
    Next next = on_exit(**exit);
    return next == Next::keep_going ? Next::unwatch : next;  // a reaped child's pidfd stays readable
  });
}

void RunLoop::every(nanoseconds first, nanoseconds interval, OnTime on_time) {
  timers_.push_back({first, std::max(interval, nanoseconds(1)), std::move(on_time)});
}

void RunLoop::at(nanoseconds when, OnTime on_time) { timers_.push_back({when, nanoseconds(0), std::move(on_time)}); }

void RunLoop::watch_tasks(std::vector<pid_t> tasks, nanoseconds period, OnTime on_all_ended) {
  every(clock_.now() + period, period, [tasks = std::move(tasks), on_all_ended = std::move(on_all_ended)] {
    if (std::any_of(tasks.begin(), tasks.end(), task_alive)) return Next::keep_going;
    Next next = on_all_ended();
    return next == Next::keep_going ? Next::unwatch : next;
  });
}

void RunLoop::cancel_timers() {
  for (Timer& t : timers_) t.active = false;
}

std::optional<nanoseconds> RunLoop::next_timeout() const {
  std::optional<nanoseconds> earliest;
  for (const Timer& t : timers_)
    if (t.active && (!earliest || t.due < *earliest)) earliest = t.due;
  if (!earliest) return std::nullopt;
  return std::max(nanoseconds(0), *earliest - clock_.now());
}

bool RunLoop::dispatch_fds(std::span<const pollfd> fds) {
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0 || !watches_[i].active) continue;
    OnReady on_ready = watches_[i].on_ready;  // a handler may add watches, moving the vector
    Next next = on_ready(fds[i].revents);
    if (next == Next::stop) return true;
    if (next == Next::unwatch) watches_[i].active = false;
  }
  return false;
}

bool RunLoop::dispatch_timers() {
  const nanoseconds now = clock_.now();
  std::vector<size_t> due;
  for (size_t i = 0; i < timers_.size(); ++i)
    if (timers_[i].active && timers_[i].due <= now) due.push_back(i);
  std::stable_sort(due.begin(), due.end(), [this](size_t a, size_t b) { return timers_[a].due < timers_[b].due; });
  for (size_t i : due) {
    if (!timers_[i].active) continue;  // cancelled by an earlier handler of this round
    OnTime on_time = timers_[i].on_time;
    if (timers_[i].interval.count() > 0) timers_[i].due += timers_[i].interval;
    else timers_[i].active = false;
    Next next = on_time();
    if (next == Next::stop) return true;
    if (next == Next::unwatch) timers_[i].active = false;
  }
  return false;
}

void RunLoop::compact() {
  std::erase_if(watches_, [](const Watch& w) { return !w.active; });
  std::erase_if(timers_, [](const Timer& t) { return !t.active; });
}

Result<bool> RunLoop::run() {
  for (;;) {
    compact();
    if (watches_.empty() && timers_.empty()) return false;
    std::vector<pollfd> fds;
    for (const Watch& w : watches_) fds.push_back({w.fd, w.events, 0});
    Result<int> ready = clock_.wait(fds, next_timeout());
    if (!ready) return ready.error();
    bool stop = dispatch_fds(fds) || dispatch_timers();
    if (failure_) return *std::exchange(failure_, std::nullopt);
    if (stop) return true;
    if (after_each_wait_ && after_each_wait_() == Next::stop) return true;
  }
}

bool task_alive(pid_t tid) { return std::filesystem::exists("/proc/" + std::to_string(tid)); }

}  // namespace vperf::session
