#pragma once
// perf stat 6.1's output, byte for byte: the text table (with its header and footer), CSV
// (-x SEP) and JSON (--json) lines, for one run, repeated runs (-r N) and intervals (-I),
// in every aggregation mode (global, -A, --per-core, --per-die, --per-socket, --per-node,
// --per-thread).
//
// Text line layout (perf 6.1 stat-display.c), fields separated by one space:
//   [interval "%6lu.%09lu "] [unit prefix] COUNT(%18.0f, or %18.2f for msec) UNIT(%-Ws, W =
//   max(4, longest unit)) NAME(%-32s; %-25s on <not counted>/<not supported> rows)
//   " # " METRIC UNIT (35 columns; 35 spaces without a metric) ["  ( +- x.xx% )"] ["  (xx.xx%)"]
// Unit prefixes: "CPU%-7d ", "S%d-D%d-C%-8d %4d ", "S%d-D%-8d %4d ", "S%-5d %4d ", "N%-5d %4d ",
// and a thread's "%16s-%-8d " (its command's name and TID; CSV "comm-tid", JSON "thread").
// --per-thread prints event by event, each event's threads by count, highest first (perf's
// sort_aggr_thread); counting every task of the system, it leaves out threads that counted 0.
// CSV: [time,][unit,[cpus,]]value,unit,event,[noise%,]run-time,running-%,metric-value,metric-unit
// JSON: {["interval" : T, ]["cpu"/"core"/"die"/"socket" : ..., ["aggregate-number" : N, ]]
//        "counter-value" : "%f", "unit" : "..", "event" : "..", ["variance" : x.xx, ]
//        "event-runtime" : NS, "pcnt-running" : x.xx, "metric-value" : %f, "metric-unit" : ".."}
//
// Where vperf differs from perf 6.1 on purpose:
//  - -r N prints the mean of the N runs, with the relative standard deviation of that mean per
//    line, as perf did before 6.0 and does again since 6.2; perf 6.0/6.1 print the last run's
//    counts next to the noise of all runs (a regression). The metrics use the means too.
//  - noise is computed for every aggregation unit; perf 6.1 only has it in global mode.
//  - no terminal colours. The NMI-watchdog hint below the table needs a sysctl read, which the
//    caller gives (`nmi_watchdog_on`), and which is made only when an event was not counted.
//  - thousands separators: perf formats text counts with "%'18.0f", so they depend on the
//    locale; under C and C.UTF-8 (the only locales here) there are none. `thousands_grouping`
//    adds "," every three digits, as perf does under en_US.UTF-8.
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/cpu_topology.h"
#include "stat/stat_aggregate.h"
#include "stat/stat_counts.h"
#include "stat/stat_metrics.h"

namespace vperf::stat {

enum class StatFormat { Text, Csv, Json };

struct StatPrintOptions {
  StatFormat format = StatFormat::Text;
  std::string csv_separator = ",";
  AggrMode aggregation = AggrMode::Global;
  bool interval = false;  // -I: print_interval blocks; print_summary prints nothing unless `interval_summary`
  int runs = 1;           // -r N: "(N runs)" in the header, "mean +- stddev" elapsed line
  bool show_rusage = false;  // "seconds user"/"seconds sys" (perf: a forked command, one run)
  // -I's period. perf divides task-clock by it (not by the interval's measured length) for
  // "CPUs utilized"; 0 uses each delta's elapsed_ns.
  uint64_t interval_ns = 0;
  bool interval_summary = false;   // --summary: the totals after the intervals (CSV lines start "summary,")
  // stat report of an -I recording, as perf 6.1's: it knows no interval's wall time (no "CPUs
  // utilized") and keeps its reference counts across intervals, so a rate divides by the mean
  // of the clock's counts over the intervals so far, not by this interval's.
  bool replayed = false;
  bool csv_summary_column = true;  // false (--no-csv-summary): those CSV lines without the "summary" column
  bool thousands_grouping = false;  // see above
  bool null_run = false;           // -n: no blank line before the elapsed time
  // --per-thread: each counted thread's command name (read when counting began, as perf
  // reads it), and whether threads that counted nothing are left out (every task counted).
  std::map<pid_t, std::string> thread_names;
  bool skip_zero_threads = false;
  // -M: the metrics asked for by name, whose lines are labelled with the name (perf's -M).
  std::vector<const NamedMetric*> named_metrics;
  // Whether /proc/sys/kernel/nmi_watchdog is on, asked only after a "<not counted>" row: then
  // perf's hint to turn it off follows the table (the watchdog holds a counter on x86).
  bool (*nmi_watchdog_on)() = nullptr;
};

struct RunTimes {
  uint64_t elapsed_ns = 0;
  double user_seconds = 0, system_seconds = 0;
};

// The text after "Performance counter stats for " in perf's header, quotes included, with
// perf's precedence: system wide, then CPU list, then the command, then pid, then tid.
struct StatTarget {
  bool system_wide = false;           // -a
  std::string cpu_list;               // -C, as the user wrote it
  std::vector<std::string> command;   // the forked command and its arguments
  std::string pid;                    // -p, as written ("123,456")
  std::string tid;                    // -t
};
std::string describe_target(const StatTarget& target);  // "'true'", "'system wide'", "process id '123'"

class StatPrinter {
 public:
  StatPrinter(std::vector<StatEvent> events, StatPrintOptions options, CpuTopology topology, std::ostream& out);

  // One -I block: what was counted in the interval that ended `since_start_ns` after start.
  void print_interval(uint64_t since_start_ns, const StatSnapshot& delta);
  // After each run (-r N calls it N times); with -I --summary, once with the totals.
  void add_run(const StatSnapshot& totals, const RunTimes& times);
  // The final block (header, one line per event and unit, footer). Prints nothing in -I mode
  // unless interval_summary is set, as perf 6.1.
  void print_summary(const std::string& target_description);

 private:
  struct Line;
  void print_block(const AggregatedSnapshot& counts, const std::vector<std::vector<double>>& noise,
                   double wall_time_ns, const std::string& prefix);
  void print_line(const std::string& prefix, const StatEvent& event, const AggrUnit& unit, const Line& line);
  std::string unit_prefix(const AggrUnit& unit, int cpus) const;
  std::string thread_name(const AggrUnit& unit) const;
  void print_interval_header();
  std::map<AggrUnit, ShadowStats> replayed_shadows_;  // `replayed`: kept across intervals
  void print_footer();
  void note_not_counted(const StatEvent& event);

  std::vector<StatEvent> events_;
  StatPrintOptions options_;
  CpuTopology topology_;
  std::ostream& out_;
  int unit_width_ = 4;
  int intervals_printed_ = 0;
  bool in_interval_ = false;  // printing an -I block (not the final summary)
  // What perf's footer says after the table: some event was not counted (perf's
  // print_free_counters_hint), and the leader of a group was, in a list mixing PMUs
  // (print_mixed_hw_group_error).
  bool some_not_counted_ = false;
  bool mixed_group_not_counted_ = false;
  bool pmu_types_mixed_ = false;  // the events' non-software PMU types differ (set once)
  std::vector<AggregatedSnapshot> runs_;
  std::vector<RunTimes> run_times_;
};

}  // namespace vperf::stat
