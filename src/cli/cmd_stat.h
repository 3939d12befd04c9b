#pragma once
// vperf stat [-e EVENTS]... [-d[d[d]]] [-a | -C CPUS | -p PIDS | -t TIDS] [-G CGROUP]
//            [-A | --per-core | --per-die | --per-socket] [-r N] [-I MS [--interval-count N]]
//            [-x SEP | --json] [-o FILE] [--timeout MS] [--] [COMMAND [ARGS...]]
//
// Counts events the way perf stat 6.1 does and prints what it prints (src/stat/stat_printer.h),
// on stderr like perf (the workload keeps stdout), or into -o FILE.
//
// Run loop, per run (-r N):
//   a COMMAND is forked, its counters opened on it with enable_on_exec (system-wide counters
//   are enabled just before it execs), and counting ends when it exits; SIGINT/SIGTERM/SIGHUP
//   sent to vperf are forwarded to it, and the counts are still printed;
//   without a COMMAND (-a, -C, -p, -t) counting ends on SIGINT/SIGTERM/SIGHUP, --timeout,
//   --interval-count, or when every -p/-t task has ended.
//   --timeout MS and --interval-count N end a COMMAND with SIGTERM (perf 6.1 waits for the
//   command after --interval-count; vperf stops it, as the user asked for N intervals).
// Exit status: the command's (128 + signal when a signal ended it), else 0.
#include <ostream>
#include <string>
#include <vector>

namespace vperf::cli {

struct StatOptions {
  std::vector<std::string> events;  // -e, each may hold several comma-separated events
  int detail = 0;                   // -d count: 0..3
  bool system_wide = false;         // -a
  std::string cpus;                 // -C
  std::string pids;                 // -p, comma-separated
  std::string tids;                 // -t, comma-separated
  std::string cgroup;               // -G, a cgroup path under the cgroup mount
  bool no_aggr = false;             // -A
  bool per_core = false;
  bool per_die = false;
  bool per_socket = false;
  int repeat = 1;                   // -r
  unsigned interval_ms = 0;         // -I
  unsigned interval_count = 0;      // --interval-count
  bool summary = false;             // --summary (with -I)
  std::string csv_separator;        // -x; empty: text
  bool json = false;
  std::string output_file;          // -o
  unsigned timeout_ms = 0;          // --timeout
  bool big_num = false;             // -B: thousands separators in text output
  bool no_inherit = false;          // -i
  bool null_run = false;            // -n: no default events, only the times (perf stat --null)
  double max_overhead_percent = 5;  // --max-overhead: warn when a probe costs more of one CPU
  std::vector<std::string> command;
};

// The events the options ask for: -e as given, else perf's default set for the -d level
// ("cpu-clock" instead of "task-clock" when counting system-wide). `have_stalled_cycles`:
// the core PMU publishes stalled-cycles-frontend/backend (perf adds them then).
std::string stat_event_list(const StatOptions& options, bool have_stalled_cycles);

// Runs the whole command; returns the exit status. `err` (stderr) receives the counts unless
// -o is given, and the line saying a signal ended the command. Throws UserError / usage_error
// with one line and a hint.
int run_stat(const StatOptions& options, std::ostream& err);

}  // namespace vperf::cli
