#pragma once
// `vperf stat` from its request to the printed counts: perf 6.1's default events, the -r runs
// (session/count_run.h each), the printer for the chosen format and aggregation, -o's file
// (written whole at the end, never a half-written file), the command's signal line, and the
// warning for probe events whose hits cost more than --max-overhead. The CLI checks the option
// combinations, makes inline probes and resolves the events (it holds the PMC sources).
#include <ostream>
#include <string>
#include <vector>

#include "events/resolved_event.h"
#include "stat/stat_session.h"

namespace vperf::session {

struct StatRequest {
  std::vector<std::string> events;  // -e, each may hold several comma-separated events
  std::vector<std::string> metrics;  // -M: metric names (stat::named_metrics), labelled by name
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
  bool per_node = false;
  bool per_thread = false;          // --per-thread: -p/-t's threads, or every thread of the system
  int repeat = 1;                   // -r
  unsigned interval_ms = 0;         // -I
  unsigned interval_count = 0;      // --interval-count
  bool summary = false;             // --summary (with -I)
  bool csv_summary_column = true;   // false: --no-csv-summary
  std::string csv_separator;        // -x; empty: text
  bool json = false;
  std::string output_file;          // -o
  unsigned timeout_ms = 0;          // --timeout
  bool big_num = false;             // -B: thousands separators in text output
  bool no_big_num = false;          // --no-big-num: none, whatever the locale groups
  bool no_inherit = false;          // -i
  bool all_user = false;            // --all-user
  bool all_kernel = false;          // --all-kernel
  bool null_run = false;            // -n: no default events, only the times (perf stat --null)
  double max_overhead_percent = 5;  // --max-overhead: warn when a probe costs more of one CPU
  std::string filter;               // --filter: for the last event, which must be a tracepoint
  bool verbose = false;             // -v: each event's value, enabled and running times per run
  std::vector<std::string> command;
  // stat record: the perf.data the counts also go to ("-": a pipe on standard output, the
  // command's output then on stderr); empty: none. `cmdline` is its CMDLINE feature.
  std::string record_output;
  std::vector<std::string> cmdline;
};

// The events the request counts: -e's, or perf's default set (task-clock or, CPU-wide,
// cpu-clock; stalled cycles where the core PMU has them; what each -d adds); none for -n
// alone, nor for -M alone (its metrics' events are resolved by the caller, see cmd_stat).
std::string stat_event_list(const StatRequest& request, bool have_stalled_cycles);

// Counts `groups` (stat_event_list's events, resolved) on `target`'s CPUs or threads (its
// cgroup is opened here from request.cgroup) and prints them to `err` (or -o's file). Returns
// the command's shell status (128 + signal when one ended it), else 0. Failures are UserErrors.
int run_stat(const StatRequest& request, const std::vector<events::ResolvedGroup>& groups, stat::CountTarget target,
             std::ostream& err);

// stat report: prints the counts `input` holds (written by stat record, vperf's or perf's) as
// stat printed them, to `err`, in `format`'s -x/--json/-B/--no-big-num (perf stat -x, report),
// split as its -A/--per-core/--per-die/--per-socket/--per-node say, else as recorded. Throws
// UserError.
void run_stat_report(const std::string& input, const StatRequest& format, std::ostream& err);

}  // namespace vperf::session
