#pragma once
// One run of `vperf stat`: the counters opened on the target (a COMMAND started the way perf
// starts it, or CPUs, tasks, a cgroup), enabled, and read at the end, with -I snapshots on the
// way. It runs on a RunLoop until:
//   - the command exits (stop signals are forwarded to it, as perf::Workload describes; the
//     command decides when to end);
//   - without a command, a stop signal comes or every -p/-t task has ended;
//   - --timeout or --interval-count: the command gets SIGTERM and the run waits for it.
// The partial interval since the last -I tick is printed when counting ends (not after
// --interval-count: the user asked for exactly N), as perf prints it.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/scoped_fd.h"
#include "events/resolved_event.h"
#include "perf/event_fd.h"
#include "perf/stop_signals.h"
#include "perf/workload.h"
#include "session/run_loop.h"
#include "stat/stat_printer.h"
#include "stat/stat_session.h"

namespace vperf::session {

struct CountRunOptions {
  std::vector<std::string> command;
  unsigned interval_ms = 0;     // -I; 0: none
  unsigned interval_count = 0;  // --interval-count; 0: no limit
  unsigned timeout_ms = 0;      // --timeout; 0: none
  bool command_stdout_to_stderr = false;  // stat record -o -: the pipe is the recording's
  std::string filter;           // a tracepoint filter for the last event (--filter)
  bool keep_intervals = false;  // stat record -I: each interval's counts kept for the file
};

struct CountRunResult {
  stat::StatSnapshot totals;
  stat::RunTimes times;
  std::optional<perf::WorkloadExit> exit;
  // With keep_intervals: the counts since the start at each -I tick and at the end of the
  // last (partial) interval, elapsed_ns the time since the start, as perf stat record writes them.
  std::vector<stat::StatSnapshot> intervals;
};

// `printer_for` gives the printer for the session's events (perf's names, e.g. "cycles:u"
// after a fallback, are known once the counters are open). Failures are UserErrors.
using PrinterFor = std::function<stat::StatPrinter&(const std::vector<stat::StatEvent>&)>;
CountRunResult count_once(const CountRunOptions& options, const std::vector<events::ResolvedGroup>& groups,
                          const stat::CountTarget& target, const perf::PerfEventOpener& opener,
                          const perf::StopSignals& signals, RunClock& clock, const PrinterFor& printer_for);

// The directory of cgroup `name` (relative to the cgroup2 mount, or to a v1 perf_event
// hierarchy, which wins as in perf), opened for PERF_FLAG_PID_CGROUP (-G).
ScopedFd open_cgroup(const std::string& name);

}  // namespace vperf::session
