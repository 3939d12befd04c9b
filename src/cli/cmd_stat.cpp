#include "cli/cmd_stat.h"

#include <langinfo.h>
#include <locale.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <cstring>
#include <functional>
#include <sstream>
#include <optional>

#include "cli/command.h"
#include "cli/command_events.h"
#include "cli/target_options.h"
#include "core/cpu_set.h"
#include "core/cpu_topology.h"
#include "core/files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "events/sysfs_pmu.h"
#include "perf/stop_signals.h"
#include "perf/workload.h"
#include "session/count_run.h"
#include "session/inline_probes.h"
#include "session/probe_cost.h"
#include "stat/stat_metrics.h"
#include "stat/stat_printer.h"
#include "stat/stat_session.h"
#include "tracing/tracefs.h"

namespace vperf::cli {

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

void validate(const StatOptions& o) {
  int targets = (o.pids.empty() ? 0 : 1) + (o.tids.empty() ? 0 : 1);
  bool cpu_wide = o.system_wide || !o.cpus.empty();
  if (targets > 1) throw usage_error("-p and -t cannot be combined", "give the processes with -p, or the threads with -t");
  if (targets && cpu_wide)
    throw usage_error("-p/-t count tasks, -a/-C count CPUs: choose one", "drop -p/-t, or drop -a/-C");
  if (!targets && !cpu_wide && o.command.empty())
    throw usage_error("nothing to count", "give a COMMAND to run (vperf stat -- sleep 1), or -a, -C CPUS, -p PID, -t TID");
  if (!o.cgroup.empty() && !cpu_wide)
    throw usage_error("-G counts a cgroup on CPUs: it needs -a or -C", "add -a");
  int modes = o.no_aggr + o.per_core + o.per_die + o.per_socket;
  if (modes > 1) throw usage_error("choose one of -A, --per-core, --per-die, --per-socket", "");
  if (modes && !cpu_wide)
    throw usage_error("-A, --per-core, --per-die and --per-socket split counts by CPU: they need -a or -C",
                      "add -a (perf: \"only available in system-wide mode\")");
  if (o.repeat < 1) throw usage_error("-r needs a positive number of runs", "");
  if (o.repeat > 1 && o.command.empty()) throw usage_error("-r repeats a COMMAND", "give the command to repeat");
  if (o.repeat > 1 && o.interval_ms) throw usage_error("-r and -I cannot be combined", "repeat the runs, or print intervals");
  if (o.interval_ms && o.interval_ms < 10)
    throw usage_error("-I " + std::to_string(o.interval_ms) + " ms is too short", "use 10 ms or more (perf's minimum)");
  if (o.interval_count && !o.interval_ms) throw usage_error("--interval-count needs -I", "add -I MS");
  if (o.summary && !o.interval_ms) throw usage_error("--summary goes with -I", "add -I MS");
  if (!o.csv_separator.empty() && o.json) throw usage_error("-x and --json cannot be combined", "choose one output format");
  if (o.detail > 3) throw usage_error("-d goes up to -ddd", "");
}

stat::AggrMode aggregation_of(const StatOptions& o) {
  if (o.no_aggr) return stat::AggrMode::PerCpu;
  if (o.per_core) return stat::AggrMode::PerCore;
  if (o.per_die) return stat::AggrMode::PerDie;
  if (o.per_socket) return stat::AggrMode::PerSocket;
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

stat::StatPrintOptions print_options(const StatOptions& options, const stat::CountTarget& target) {
  stat::StatPrintOptions print;
  print.format = options.json ? stat::StatFormat::Json
                 : options.csv_separator.empty() ? stat::StatFormat::Text
                                                 : stat::StatFormat::Csv;
  print.csv_separator = options.csv_separator;
  print.aggregation = aggregation_of(options);
  print.interval = options.interval_ms > 0;
  print.interval_ns = uint64_t{options.interval_ms} * 1000000;
  print.interval_summary = options.summary;
  print.runs = options.repeat;
  // perf shows the command's user/sys times only when it counted just the command.
  print.show_rusage = !options.command.empty() && options.repeat == 1 && target.cpus.empty() && target.threads.empty();
  print.thousands_grouping = options.big_num || locale_groups_thousands();
  print.null_run = options.null_run;
  return print;
}

// What the summary's header says was counted.
stat::StatTarget described_target(const StatOptions& options) {
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
std::optional<perf::WorkloadExit> count_runs(const StatOptions& options, const std::vector<events::ResolvedGroup>& groups,
                                             const stat::CountTarget& target, const perf::StopSignals& signals,
                                             const session::PrinterFor& printer_for,
                                             const std::function<void(const session::CountRunResult&)>& add_run) {
  session::CountRunOptions run_options{options.command, options.interval_ms, options.interval_count, options.timeout_ms};
  perf::KernelPerfEventOpener opener;
  session::SystemRunClock clock;
  std::optional<perf::WorkloadExit> last_exit;
  for (int run = 0; run < options.repeat; ++run) {
    session::CountRunResult result = session::count_once(run_options, groups, target, opener, signals, clock, printer_for);
    last_exit = result.exit;
    add_run(result);
    if (signals.received() && options.command.empty()) break;
  }
  return last_exit;
}

// A warning for each probe event of the last run whose hits cost more than the budget.
void warn_probe_overhead(const std::vector<stat::StatEvent>& events, const session::CountRunResult& run, double budget_cpus, std::ostream& err) {
  if (std::none_of(events.begin(), events.end(), [](const stat::StatEvent& e) { return e.name.find(':') != std::string::npos; })) return;
  Result<tracing::Tracefs> tracefs = tracing::Tracefs::open_mounted();
  if (!tracefs) return;
  const std::vector<std::string> probes = session::probe_event_names(*tracefs);
  const session::ProbeHitCost cost = session::probe_hit_cost();
  for (size_t i = 0; i < events.size() && i < run.totals.counts.size(); ++i) {
    if (std::find(probes.begin(), probes.end(), events[i].name) == probes.end()) continue;
    uint64_t hits = 0;
    for (const stat::CounterSample& sample : run.totals.counts[i].samples) hits += sample.reading.value;
    if (std::optional<std::string> warning =
            session::probe_overhead_warning(events[i].name, hits, static_cast<double>(run.totals.elapsed_ns) / 1e9, cost, budget_cpus))
      err << *warning << '\n';
  }
}

}  // namespace

std::string stat_event_list(const StatOptions& options, bool have_stalled_cycles) {
  if (!options.events.empty()) return join(options.events, ",");
  if (options.null_run) return "";
  bool cpu_wide = options.system_wide || !options.cpus.empty();
  std::string list = std::string(cpu_wide ? "cpu-clock," : "task-clock,") + kDefaultEvents;
  if (have_stalled_cycles) list += std::string(",") + kStalledCycles;
  list += std::string(",") + kDefaultEventsEnd;
  for (int level = 0; level < options.detail && level < 3; ++level) list += std::string(",") + kDetailedEvents[level];
  return list;
}

int run_stat(const StatOptions& given, std::ostream& err) {
  validate(given);
  // Inline probes (-e uprobe:PATH:FUNC) are removed when this goes, after every counter on
  // them is closed: it is declared before anything opens one.
  session::InlineProbes inline_probes;
  StatOptions options = given;
  Result<std::vector<std::string>> with_probes = inline_probes.create(given.events);
  if (!with_probes) throw user_error(with_probes.error());
  options.events = std::move(with_probes).value();

  CommandEvents event_resolver;
  bool stalled = event_resolver.core_pmu_has("stalled-cycles-frontend") && event_resolver.core_pmu_has("stalled-cycles-backend");
  const std::string event_list = stat_event_list(options, stalled);
  std::vector<events::ResolvedGroup> groups;
  if (!event_list.empty()) groups = event_resolver.resolve(event_list);

  stat::CountTarget target;
  target.inherit = !options.no_inherit;
  TaskTargets tasks = resolve_targets(options.system_wide, options.cpus, options.pids, options.tids);
  target.cpus = tasks.cpus;
  target.threads = tasks.threads;
  ScopedFd cgroup;
  if (!options.cgroup.empty()) {
    cgroup = session::open_cgroup(options.cgroup);
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
  std::optional<session::CountRunResult> last_run;
  std::optional<perf::WorkloadExit> last_exit = count_runs(options, groups, target, *signals, printer_for, [&](const session::CountRunResult& r) {
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

  return last_exit ? last_exit->shell_status() : 0;
}

void add_stat_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<StatOptions>();
  CLI::App* sub = app.add_subcommand("stat", "Count events while a command runs, or on CPUs or tasks, as perf stat");
  sub->add_option("-e,--event", options->events, "Events to count (repeat or separate with commas; {a,b} is a group)")
      ->allow_extra_args(false);
  auto metrics = std::make_shared<std::vector<std::string>>();
  sub->add_option("-M,--metrics", *metrics, "Count the events of these metrics (comma list; vperf list metrics names them)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_flag("-d,--detailed", options->detail, "Add perf's detailed cache events (-dd, -ddd add more)");
  sub->add_flag("-a,--all-cpus", options->system_wide, "Count on every online CPU, all tasks");
  sub->add_option("-C,--cpu", options->cpus, "Count on these CPUs only (0-3,8)")->check(non_empty());
  sub->add_option("-p,--pid", options->pids, "Attach to these processes (all their threads)")->check(non_empty());
  sub->add_option("-t,--tid", options->tids, "Attach to these threads")->check(non_empty());
  sub->add_option("-G,--cgroup", options->cgroup, "Count only tasks of this cgroup (with -a or -C)")->check(non_empty());
  sub->add_flag("-A,--no-aggr", options->no_aggr, "One line per CPU");
  sub->add_flag("--per-core", options->per_core, "One line per core");
  sub->add_flag("--per-die", options->per_die, "One line per die");
  sub->add_flag("--per-socket", options->per_socket, "One line per socket");
  sub->add_option("-r,--repeat", options->repeat, "Run the command N times; print means and their spread")
      ->check(whole_number_in(1, 1000000));
  sub->add_option("-I,--interval-print", options->interval_ms, "Print the counts every MS milliseconds")
      ->check(whole_number_in(10, UINT32_MAX));
  sub->add_option("--interval-count", options->interval_count, "Stop after N intervals")->check(whole_number_in(1, UINT32_MAX));
  sub->add_flag("--summary", options->summary, "With -I, also print the totals at the end");
  sub->add_option("-x,--field-separator", options->csv_separator, "CSV output with this separator")->check(non_empty());
  add_json_flag(*sub, options->json);
  sub->add_flag("-j,--json-output", options->json, "perf stat's name for --json");
  sub->add_option("-o,--output", options->output_file, "Write the counts to FILE instead of stderr")->check(non_empty());
  sub->add_option("--timeout", options->timeout_ms, "Stop counting (and the command) after MS milliseconds")
      ->check(whole_number_in(1, UINT32_MAX));
  sub->add_flag("-B,--big-num", options->big_num, "Group thousands in counts (default: as the locale does, like perf)");
  sub->add_flag("-i,--no-inherit", options->no_inherit, "Do not count the command's child tasks");
  sub->add_option("--max-overhead", options->max_overhead_percent,
                  "Warn when a probe event's hits cost more than this percent of one CPU (default 5)")
      ->check(CLI::Range(0.0, 10000.0));
  sub->add_flag("-n,--null", options->null_run, "Count no events (unless -e gives some): only the elapsed, user and sys times");
  // The command is everything after "--" (app.cpp keeps it out of option parsing), or, as
  // with perf, everything from the first word that is not an option.
  sub->prefix_command();
  sub->footer("COMMAND: the program to count and its arguments, e.g. vperf stat -e task-clock -- sleep 1\n");
  sub->callback([sub, options, metrics, &inv] {
    Result<std::vector<std::string>> metric_events = stat::events_of_metrics(*metrics);
    if (!metric_events) throw usage_error(metric_events.error().message, "vperf list metrics names the metrics vperf has");
    options->events.insert(options->events.end(), metric_events->begin(), metric_events->end());
    options->command = command_words(*sub, inv);
    inv.action = [options, &inv] { return run_stat(*options, *inv.err); };
  });
}

}  // namespace vperf::cli
