#pragma once
// Counting for `vperf stat`: every resolved group opened on every place the target asks for
// (each CPU for system-wide counting, each task otherwise), enabled together, read together.
//
// Where counters are opened, as perf stat does:
//   tasks (a workload, -p, -t)  one counter group per task, cpu = -1, inherited by children;
//                               with enable_on_exec the counters start when the workload execs
//   system-wide (-a, -C, -G)    one counter group per CPU, pid = -1 (or the cgroup's fd)
//   per-CPU PMUs (uncore, RAPL) their cpumask's CPUs, pid = -1, whatever the target
//
// Failures follow perf stat 6.1:
//   - a lone event the kernel does not have (ENOENT, EOPNOTSUPP, ENODEV, ENXIO, EINVAL, ENOSYS)
//     is kept and printed as "<not supported>";
//   - a member of a {group} that fails ends the command ("The cycles event is not supported.");
//   - EINVAL from a PMU without guest/host filtering is retried without exclude_guest
//     (perf::GuestFilterFallbackOpener);
//   - EACCES/EPERM on an event without privilege modifiers, counted per task, retries in user
//     space only and renames it "NAME:u" (perf's fallback at perf_event_paranoid >= 2);
//   - anything else (EMFILE, ESRCH, permission with no fallback) is a UserError naming the
//     event, the place and the fix.
#include <sys/types.h>

#include <memory>
#include <vector>

#include "core/error.h"
#include "events/resolved_event.h"
#include "perf/counter_group.h"
#include "perf/event_fd.h"
#include "stat/stat_counts.h"

namespace vperf::stat {

struct CountTarget {
  std::vector<pid_t> threads;   // tasks to follow; empty: system-wide on `cpus`
  std::vector<int> cpus;        // system-wide: the CPUs to count on (ignored when threads are given)
  int cgroup_fd = -1;           // system-wide only: count just the tasks of this cgroup (-G)
  bool enable_on_exec = false;  // the task is a workload that has not exec'd yet
  bool inherit = true;          // follow children the tasks create
  bool all_user = false, all_kernel = false;  // --all-user / --all-kernel (events::apply_all_user_or_kernel)
  // A listed thread that has ended by the time its counters open is left out (ESRCH), where
  // the threads are a snapshot of every task of the system (stat --per-thread -a).
  bool skip_ended_threads = false;
};

// The counted command's CPU times (its rusage, children included) once it has been reaped;
// zero before, and without a command: what perf's user_time and system_time read.
struct CommandTimes {
  uint64_t user_ns = 0, system_ns = 0;
};

class StatSession {
 public:
  // Opens everything. A failure perf treats as fatal (see above) is an Error naming the event,
  // the place and the kernel's answer; open_failure_hint says what to do about it. A PMU
  // cpumask that cannot be parsed (broken sysfs) still throws UserError.
  static Result<StatSession> open(const perf::PerfEventOpener& opener, const std::vector<events::ResolvedGroup>& groups,
                                  const CountTarget& target);

  // The events in print order, named as perf names them.
  const std::vector<StatEvent>& events() const { return events_; }

  // Sets a tracepoint filter on every counter of event `index` (of events()), before enable().
  Result<void> set_filter(size_t index, const std::string& filter) const;

  // Starts and stops every counter that does not start by itself on exec.
  Result<void> enable() const;
  Result<void> disable() const;
  // Reads every counter once. `elapsed_ns` is the caller's wall-clock time since enabling.
  // Tool events are not counters: duration_time reads `elapsed_ns`, user_time and
  // system_time the command's times, with enabled = running = value as perf sets them (so a
  // zero reads "<not counted>", as in perf).
  Result<StatSnapshot> read(uint64_t elapsed_ns, const CommandTimes& command = {}) const;

 private:
  struct OpenedGroup {
    std::vector<size_t> events;  // indices into events_, one per member
    int cpu = -1;
    pid_t thread = -1;
    bool starts_on_exec = false;
    perf::CounterGroup counters;
  };

  // Opens `group` (the events at `indices`) on every place of the target.
  Result<void> open_group(const perf::PerfEventOpener& opener, const events::ResolvedGroup& group,
                          const std::vector<size_t>& indices, const CountTarget& target);

  // Closes what open_group opened for the group whose first event is `first_event`, on every place.
  void close_group(size_t first_event);

  std::vector<StatEvent> events_;
  std::vector<OpenStatus> status_;  // parallel to events_
  std::vector<OpenedGroup> opened_;
};

// The fix to suggest for an Error from StatSession::open (the hint of the command's error line).
std::string open_failure_hint(const Error& error);

}  // namespace vperf::stat
