#include "session/count_run.h"

#include <fcntl.h>
#include <signal.h>

#include <cmath>

#include "core/files.h"
#include "core/strings.h"
#include "session/tracepoint_filter.h"

namespace vperf::session {

namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// Attached tasks are looked at this often: there is no portable way to poll a thread's end.
constexpr milliseconds kTaskCheckPeriod{100};

template <typename T>
void check(const Result<T>& r, const std::string& what) {
  if (!r) throw UserError("cannot " + what + ": " + r.error().describe(), "run 'vperf check'");
}

// stat --filter: on the last event, which must be a tracepoint.
void apply_filter(const stat::StatSession& session, const std::string& filter) {
  const std::vector<stat::StatEvent>& events = session.events();
  if (events.empty()) return;
  if (events.back().event.type != PERF_TYPE_TRACEPOINT) throw filter_needs_a_tracepoint(events.back().name);
  if (Result<void> set = session.set_filter(events.size() - 1, filter); !set) throw filter_refused(filter, set.error());
}

class CountRun {
 public:
  CountRun(const CountRunOptions& options, const stat::CountTarget& base, const perf::StopSignals& signals, RunClock& clock)
      : options_(options), base_(base), signals_(signals), clock_(clock) {}

  CountRunResult run(const std::vector<events::ResolvedGroup>& groups, const perf::PerfEventOpener& opener,
                     const PrinterFor& printer_for) {
    std::optional<perf::Workload> workload;
    stat::CountTarget target = base_;
    if (!options_.command.empty()) {
      Result<perf::Workload> prepared = perf::Workload::prepare(
          options_.command, options_.command_stdout_to_stderr ? perf::WorkloadStdout::to_stderr : perf::WorkloadStdout::inherited);
      if (!prepared) throw UserError("cannot start '" + options_.command.front() + "': " + prepared.error().describe(), "");
      workload.emplace(std::move(prepared).value());
      // With -p/-t (or CPUs) the command only times the counting, as perf stat -p PID -- sleep 1.
      if (target.cpus.empty() && target.threads.empty()) {
        target.threads = {workload->pid()};
        target.enable_on_exec = true;
      }
    }
    Result<stat::StatSession> opened = stat::StatSession::open(opener, groups, target);
    if (!opened) throw UserError(opened.error().describe(), stat::open_failure_hint(opened.error()));
    stat::StatSession session = std::move(opened).value();
    if (!options_.filter.empty()) apply_filter(session, options_.filter);
    printer_ = &printer_for(session.events());

    start_ = clock_.now();
    check(session.enable(), "enable the counters");
    if (workload) {
      Result<void> started = workload->start();
      if (!started) throw UserError(started.error().describe(), "check the command name and your PATH");
    }
    CountRunResult result;
    result.exit = wait(session, workload);
    check(session.disable(), "disable the counters");
    return finish(session, std::move(result));
  }

 private:
  uint64_t elapsed_ns() const { return static_cast<uint64_t>((clock_.now() - start_).count()); }

  CountRunResult finish(const stat::StatSession& session, CountRunResult result) {
    const uint64_t elapsed = elapsed_ns();
    stat::CommandTimes command;
    if (result.exit) {  // rusage has microseconds; perf's user_time and system_time show them in ns
      command.user_ns = static_cast<uint64_t>(std::llround(result.exit->user_seconds * 1e6)) * 1000;
      command.system_ns = static_cast<uint64_t>(std::llround(result.exit->system_seconds * 1e6)) * 1000;
    }
    Result<stat::StatSnapshot> totals = session.read(elapsed, command);
    check(totals, "read the counters");
    if (options_.interval_ms && !interval_count_reached_) {
      stat::StatSnapshot delta = stat::snapshot_delta(*totals, previous_);
      if (delta.elapsed_ns > 0) {
        printer_->print_interval(elapsed, delta);
        if (options_.keep_intervals) intervals_kept_.push_back(*totals);
      }
    }
    result.intervals = std::move(intervals_kept_);
    result.totals = std::move(totals).value();
    result.times.elapsed_ns = elapsed;
    if (result.exit) {
      result.times.user_seconds = result.exit->user_seconds;
      result.times.system_seconds = result.exit->system_seconds;
    }
    return result;
  }

  // One -I tick; true once --interval-count is reached.
  bool print_interval(const stat::StatSession& session) {
    const uint64_t elapsed = elapsed_ns();
    Result<stat::StatSnapshot> snapshot = session.read(elapsed);
    check(snapshot, "read the counters");
    printer_->print_interval(elapsed, stat::snapshot_delta(*snapshot, previous_));
    if (options_.keep_intervals) intervals_kept_.push_back(*snapshot);
    previous_ = std::move(snapshot).value();
    ++intervals_;
    interval_count_reached_ = options_.interval_count && intervals_ >= options_.interval_count;
    return interval_count_reached_;
  }

  std::optional<perf::WorkloadExit> wait(const stat::StatSession& session, std::optional<perf::Workload>& workload) {
    RunLoop loop(clock_);
    std::optional<perf::WorkloadExit> exit;
    bool tasks_ended = false;
    if (workload) {
      loop.watch_workload(*workload, [&exit](const perf::WorkloadExit& e) {
        exit = e;
        return Next::stop;
      });
      loop.watch_signals(signals_, [&workload](const std::vector<perf::StopSignal>& taken) {
        workload->forward(taken);  // the command decides when to end
        return Next::keep_going;
      });
      // Timing -p/-t tasks that have all ended: the command goes too, and is waited for. It
      // was only a timer, so its end by SIGTERM is not the run's exit status.
      if (!base_.threads.empty())
        loop.watch_tasks(base_.threads, kTaskCheckPeriod, [&workload, &tasks_ended] {
          tasks_ended = true;
          workload->terminate(SIGTERM);
          return Next::keep_going;
        });
    } else {
      loop.watch_signals(signals_, [](const std::vector<perf::StopSignal>&) { return Next::stop; });
      if (!base_.threads.empty()) loop.watch_tasks(base_.threads, kTaskCheckPeriod, [] { return Next::stop; });
    }
    // --timeout or --interval-count: the command is told to end, and only waited for now.
    auto end_counting = [&] {
      if (!workload) return Next::stop;
      workload->terminate(SIGTERM);
      loop.cancel_timers();
      return Next::keep_going;
    };
    if (options_.interval_ms) {
      const nanoseconds interval = milliseconds(options_.interval_ms);
      loop.every(start_ + interval, interval, [&] { return print_interval(session) ? end_counting() : Next::keep_going; });
    }
    if (options_.timeout_ms) loop.at(start_ + milliseconds(options_.timeout_ms), end_counting);
    if (Result<bool> ran = loop.run(); !ran) throw UserError("cannot wait for the command: " + ran.error().describe(), "");
    if (tasks_ended) return std::nullopt;
    return exit;
  }

  const CountRunOptions& options_;
  const stat::CountTarget& base_;
  const perf::StopSignals& signals_;
  RunClock& clock_;
  stat::StatPrinter* printer_ = nullptr;
  nanoseconds start_{0};
  unsigned intervals_ = 0;
  std::vector<stat::StatSnapshot> intervals_kept_;
  bool interval_count_reached_ = false;
  stat::StatSnapshot previous_;
};

}  // namespace

ScopedFd open_cgroup(const std::string& name) {
  Result<std::string> mounts = read_file("/proc/mounts");
  std::optional<std::string> root;
  if (mounts)
    for (std::string_view line : split(*mounts, '\n')) {
      std::vector<std::string_view> f = split(line, ' ');
      if (f.size() < 4) continue;
      if (f[2] == "cgroup2" || (f[2] == "cgroup" && (f[3].find("perf_event") != std::string::npos))) {
        root = std::string(f[1]);
        if (f[2] == "cgroup") break;  // a v1 perf_event hierarchy wins, as in perf
      }
    }
  if (!root) throw UserError("no cgroup file system is mounted", "mount cgroup2: mount -t cgroup2 none /sys/fs/cgroup");
  std::string path = *root + "/" + (name.front() == '/' ? name.substr(1) : name);
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw UserError("cannot open cgroup '" + name + "' (" + path + "): " + Error::from_errno("open").describe(),
                    "give a cgroup path relative to " + *root + ", as listed there");
  return ScopedFd(fd);
}

CountRunResult count_once(const CountRunOptions& options, const std::vector<events::ResolvedGroup>& groups,
                          const stat::CountTarget& target, const perf::PerfEventOpener& opener,
                          const perf::StopSignals& signals, RunClock& clock, const PrinterFor& printer_for) {
  return CountRun(options, target, signals, clock).run(groups, opener, printer_for);
}

}  // namespace vperf::session
