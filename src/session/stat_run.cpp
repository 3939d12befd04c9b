#include "session/stat_run.h"

#include <langinfo.h>
#include <locale.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <sstream>

#include "core/cpu_topology.h"
#include "core/error.h"
#include "core/files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "perf/stop_signals.h"
#include "perf/workload.h"
#include "session/count_run.h"
#include "session/reading_session.h"
#include "session/stat_recording.h"
#include "session/system_tasks.h"
#include "probes/probe_cost.h"
#include "stat/stat_printer.h"
#include "tracing/tracefs.h"

namespace vperf::session {

namespace {

// perf 6.1's default set and what each -d adds (builtin-stat.c's default and detailed attrs).
constexpr const char* kDefaultEvents = "context-switches,cpu-migrations,page-faults,cycles";
constexpr const char* kStalledCycles = "stalled-cycles-frontend,stalled-cycles-backend";
constexpr const char* kDefaultEventsEnd = "instructions,branches,branch-misses";
constexpr const char* kDetailedEvents[] = {
    "L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses",
    "L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,iTLB-load-misses",
    "L1-dcache-prefetches,L1-dcache-prefetch-misses",
};

stat::AggrMode aggregation_of(const StatRequest& o) {
  if (o.no_aggr) return stat::AggrMode::PerCpu;
  if (o.per_core) return stat::AggrMode::PerCore;
  if (o.per_die) return stat::AggrMode::PerDie;
  if (o.per_socket) return stat::AggrMode::PerSocket;
  if (o.per_node) return stat::AggrMode::PerNode;
  if (o.per_thread) return stat::AggrMode::PerThread;
  return stat::AggrMode::Global;
}

// perf prints counts with "%'f": the user's locale decides whether thousands are grouped
// (not under C or C.UTF-8). vperf asks the locale without switching the process to it.
bool locale_groups_thousands() {
  locale_t user = ::newlocale(LC_NUMERIC_MASK, "", static_cast<locale_t>(0));
  if (user == static_cast<locale_t>(0)) return false;
  const char* separator = ::nl_langinfo_l(THOUSEP, user);
  bool groups = separator != nullptr && separator[0] != '\0';
  ::freelocale(user);
  return groups;
}

std::string started_on_line() {
  std::time_t now = std::time(nullptr);
  char buf[64];
  ::ctime_r(&now, buf);  // ends with '\n'
  return std::string("# started on ") + buf + "\n";
}

// perf's sysctl__nmi_watchdog_enabled.
bool nmi_watchdog_on() {
  Result<std::string> value = read_first_line("/proc/sys/kernel/nmi_watchdog");
  return value && parse_u64(trim(*value)).value_or(0) > 0;
}

stat::StatPrintOptions print_options(const StatRequest& options, const stat::CountTarget& target) {
  stat::StatPrintOptions print;
  print.format = options.json ? stat::StatFormat::Json
                 : options.csv_separator.empty() ? stat::StatFormat::Text
                                                 : stat::StatFormat::Csv;
  print.csv_separator = options.csv_separator;
  print.aggregation = aggregation_of(options);
  print.interval = options.interval_ms > 0;
  print.interval_ns = uint64_t{options.interval_ms} * 1000000;
  print.interval_summary = options.summary;
  print.csv_summary_column = options.csv_summary_column;
  print.runs = options.repeat;
  // perf shows the command's user/sys times only when it counted just the command.
  print.show_rusage = !options.command.empty() && options.repeat == 1 && target.cpus.empty() && target.threads.empty();
  print.thousands_grouping = !options.no_big_num && (options.big_num || locale_groups_thousands());
  print.null_run = options.null_run;
  for (const std::string& name : options.metrics)
    if (const stat::NamedMetric* metric = stat::find_named_metric(name)) print.named_metrics.push_back(metric);
  if (options.per_thread) {
    for (pid_t tid : target.threads) print.thread_names[tid] = task_comm(tid);
    print.skip_zero_threads = options.system_wide;  // perf: "otherwise too many 0 output"
  }
  print.nmi_watchdog_on = nmi_watchdog_on;
  return print;
}

// What the summary's header says was counted.
stat::StatTarget described_target(const StatRequest& options) {
  stat::StatTarget described;
  described.command = options.command;
  described.system_wide = options.system_wide;
  described.cpu_list = options.cpus;
  described.pid = options.pids;
  described.tid = options.tids;
  return described;
}

// The -r runs (a stop signal ends counting without a command), each added to the printer;
// returns the last run's exit.
std::optional<perf::WorkloadExit> count_runs(const StatRequest& options, const std::vector<events::ResolvedGroup>& groups,
                                             const stat::CountTarget& target, const perf::StopSignals& signals,
                                             const PrinterFor& printer_for,
                                             const std::function<void(const CountRunResult&)>& add_run) {
  CountRunOptions run_options{options.command,       options.interval_ms,          options.interval_count,
                              options.timeout_ms,    options.record_output == "-", options.filter,
                              !options.record_output.empty() && options.interval_ms > 0};
  perf::KernelPerfEventOpener opener;
  SystemRunClock clock;
  std::optional<perf::WorkloadExit> last_exit;
  for (int run = 0; run < options.repeat; ++run) {
    CountRunResult result = count_once(run_options, groups, target, opener, signals, clock, printer_for);
    last_exit = result.exit;
    add_run(result);
    if (signals.received() && options.command.empty()) break;
  }
  return last_exit;
}

// A warning for each probe event of the last run whose hits cost more than the budget.
void warn_probe_overhead(const std::vector<stat::StatEvent>& events, const CountRunResult& run, double budget_cpus, std::ostream& err) {
  if (std::none_of(events.begin(), events.end(), [](const stat::StatEvent& e) { return e.name.find(':') != std::string::npos; })) return;
  Result<tracing::Tracefs> tracefs = tracing::Tracefs::open_mounted();
  if (!tracefs) return;
  const std::vector<std::string> probe_events = probes::probe_event_names(*tracefs);
  const probes::ProbeHitCost cost = probes::probe_hit_cost();
  for (size_t i = 0; i < events.size() && i < run.totals.counts.size(); ++i) {
    if (std::find(probe_events.begin(), probe_events.end(), events[i].name) == probe_events.end()) continue;
    uint64_t hits = 0;
    for (const stat::CounterSample& sample : run.totals.counts[i].samples) hits += sample.reading.value;
    if (std::optional<std::string> warning =
            probes::probe_overhead_warning(events[i].name, hits, static_cast<double>(run.totals.elapsed_ns) / 1e9, cost, budget_cpus))
      err << *warning << '\n';
  }
}

// stat -v: each event's value, enabled and running times summed over its counters, as perf
// prints them when it reads them ("page-faults: 49 2366774 2366774").
void print_raw_counts(const std::vector<stat::StatEvent>& events, const stat::StatSnapshot& totals, std::ostream& out) {
  for (size_t i = 0; i < events.size() && i < totals.counts.size(); ++i) {
    if (totals.counts[i].status != stat::OpenStatus::Opened) continue;
    uint64_t value = 0, enabled = 0, running = 0;
    for (const stat::CounterSample& sample : totals.counts[i].samples) {
      value += sample.reading.value;
      enabled += sample.reading.time_enabled;
      running += sample.reading.time_running;
    }
    out << events[i].name << ": " << value << ' ' << enabled << ' ' << running << '\n';
  }
}

// stat record's file: the last run's counts, each counter's CPU and task, perf's aggregation.
void record_counts(const StatRequest& options, const std::vector<stat::StatEvent>& events, const CountRunResult& run,
                   stat::AggrMode aggregation) {
  StatRecording recording;
  recording.events = events;
  recording.totals = run.totals;
  recording.intervals = run.intervals;
  recording.aggregation = aggregation;
  recording.interval_ms = options.interval_ms;
  recording.cmdline = options.cmdline;
  recording.all_user = options.all_user;
  recording.all_kernel = options.all_kernel;
  for (const stat::EventCounts& counts : run.totals.counts)
    for (const stat::CounterSample& sample : counts.samples) {
      if (std::find(recording.cpus.begin(), recording.cpus.end(), sample.cpu) == recording.cpus.end()) recording.cpus.push_back(sample.cpu);
      if (std::none_of(recording.threads.begin(), recording.threads.end(), [&](const auto& t) { return t.first == sample.thread; }))
        recording.threads.emplace_back(sample.thread, sample.thread > 0 ? task_comm(sample.thread) : std::string());
    }
  std::sort(recording.cpus.begin(), recording.cpus.end());
  if (Result<void> written = write_stat_recording(options.record_output, recording); !written)
    throw UserError("cannot write " + options.record_output + ": " + written.error().describe(), "give -o a file in a directory you can create files in");
}

}  // namespace

std::string stat_event_list(const StatRequest& options, bool have_stalled_cycles) {
  if (!options.events.empty()) return join(options.events, ",");
  if (options.null_run || (!options.metrics.empty() && options.detail == 0)) return "";
  // -M with -d: the detailed events only, as perf adds them to the metrics' events.
  if (!options.metrics.empty()) {
    std::string list;
    for (int level = 0; level < options.detail && level < 3; ++level) list += std::string(list.empty() ? "" : ",") + kDetailedEvents[level];
    return list;
  }
  bool cpu_wide = options.system_wide || !options.cpus.empty();
  std::string list = std::string(cpu_wide ? "cpu-clock," : "task-clock,") + kDefaultEvents;
  if (have_stalled_cycles) list += std::string(",") + kStalledCycles;
  list += std::string(",") + kDefaultEventsEnd;
  for (int level = 0; level < options.detail && level < 3; ++level) list += std::string(",") + kDetailedEvents[level];
  return list;
}

int run_stat(const StatRequest& options, const std::vector<events::ResolvedGroup>& groups, stat::CountTarget target,
             std::ostream& err) {
  if (options.per_thread && options.system_wide) {
    // Every thread of the system, each counted on any CPU (perf's thread_map__new_all_cpus).
    target.threads = all_threads();
    target.cpus.clear();
    target.skip_ended_threads = true;
  }
  ScopedFd cgroup;
  if (!options.cgroup.empty()) {
    cgroup = open_cgroup(options.cgroup);
    target.cgroup_fd = cgroup.get();
  }

  // -o: the counts are kept and written whole at the end (replace_file: never through a
  // symlink, never a half-written file in place of the old one).
  std::ostringstream file;
  std::ostream* out = &err;
  auto write_output_file = [&options](const std::string& text) {
    if (Result<size_t> written = replace_file(options.output_file, text); !written)
      throw UserError("cannot write " + options.output_file + ": " + written.error().describe(),
                      "give -o a file in a directory you can create files in");
  };
  if (!options.output_file.empty()) {
    file << started_on_line();
    write_output_file(file.str());  // fails before counting if the file cannot be written
    out = &file;
  }

  const stat::StatPrintOptions print = print_options(options, target);
  Result<perf::StopSignals> signals = perf::StopSignals::install();
  if (!signals) throw UserError("cannot install signal handlers: " + signals.error().describe(), "");

  std::optional<stat::StatPrinter> printer;
  std::vector<stat::StatEvent> counted;  // the session's events, for the probe-cost warnings
  auto printer_for = [&](const std::vector<stat::StatEvent>& events) -> stat::StatPrinter& {
    if (!printer) {
      counted = events;
      Result<CpuTopology> topology = load_cpu_topology();
      if (!topology) throw UserError("cannot read the CPU topology: " + topology.error().describe(), "is /sys mounted?");
      printer.emplace(events, print, std::move(topology).value(), *out);
    }
    return *printer;
  };
  std::optional<CountRunResult> last_run;
  std::optional<perf::WorkloadExit> last_exit = count_runs(options, groups, target, *signals, printer_for, [&](const CountRunResult& r) {
    if (options.verbose) print_raw_counts(counted, r.totals, *out);
    printer->add_run(r.totals, r.times);
    last_run = r;
  });
  // perf's psignal line comes before the counts.
  if (last_exit && last_exit->signaled)
    err << options.command.front() << ": " << ::strsignal(last_exit->code) << '\n';
  printer->print_summary(stat::describe_target(described_target(options)));
  out->flush();
  if (!*out) throw UserError("could not write the counts", "check the file system");
  if (!options.output_file.empty()) write_output_file(file.str());
  if (last_run) warn_probe_overhead(counted, *last_run, options.max_overhead_percent / 100.0, err);
  if (!options.record_output.empty() && last_run) record_counts(options, counted, *last_run, print.aggregation);

  return last_exit ? last_exit->shell_status() : 0;
}

void run_stat_report(const std::string& input, const StatRequest& format, std::ostream& err) {
  ReadingInput source;
  source.input = input;
  ReadingSession session(source, "vperf stat record -o FILE -- COMMAND");
  Result<StatRecording> recording = read_stat_recording(session.reader());
  if (!recording) throw UserError("cannot report " + session.name() + ": " + recording.error().describe(), recording.error().hint);
  stat::StatPrintOptions print = print_options(format, stat::CountTarget{});
  print.show_rusage = false;
  // Counters of tasks (no -a or -C when recorded) have no CPUs to split by: perf says so and
  // prints them as recorded.
  const bool task_data = std::all_of(recording->totals.counts.begin(), recording->totals.counts.end(), [](const stat::EventCounts& c) {
    return std::all_of(c.samples.begin(), c.samples.end(), [](const stat::CounterSample& s) { return s.cpu < 0; });
  });
  if (task_data && print.aggregation != stat::AggrMode::Global) err << "warning: processing task data, aggregation mode not set\n";
  if (task_data || print.aggregation == stat::AggrMode::Global) print.aggregation = recording->aggregation;
  for (const auto& [pid, comm] : recording->threads) print.thread_names[pid] = comm;
  Result<CpuTopology> topology = load_cpu_topology();
  if (!topology) throw UserError("cannot read the CPU topology: " + topology.error().describe(), "is /sys mounted?");
  if (recording->interval_ms > 0 && !recording->intervals.empty()) {
    // An -I recording: its intervals, as they were printed when counted but for what perf's
    // report cannot know (stat/stat_printer.h, `replayed`); no summary, as perf.
    print.interval = true;
    print.interval_ns = recording->interval_ms * 1000000;
    print.replayed = true;
    stat::StatPrinter printer(recording->events, print, std::move(topology).value(), err);
    stat::StatSnapshot previous;
    for (const stat::StatSnapshot& interval : recording->intervals) {
      printer.print_interval(interval.elapsed_ns, stat::snapshot_delta(interval, previous));
      previous = interval;
    }
    session.print_warnings(err);
    return;
  }
  stat::StatPrinter printer(recording->events, print, std::move(topology).value(), err);
  printer.add_run(recording->totals, stat::RunTimes{recording->totals.elapsed_ns, 0, 0});
  // perf names the recording's command line, or the pipe.
  printer.print_summary(recording->from_pipe ? "'pipe'" : "'" + join(recording->cmdline, " ") + "'");
  session.print_warnings(err);
}

}  // namespace vperf::session
