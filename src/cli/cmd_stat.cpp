#include "cli/cmd_stat.h"

#include <algorithm>

#include "cli/command.h"
#include "cli/command_events.h"
#include "cli/target_options.h"
#include "probes/inline_probes.h"
#include "session/reading_session.h"
#include "session/stat_run.h"
#include "stat/stat_metrics.h"

namespace vperf::cli {

namespace {

void validate(const StatOptions& o) {
  int targets = (o.pids.empty() ? 0 : 1) + (o.tids.empty() ? 0 : 1);
  bool cpu_wide = o.system_wide || !o.cpus.empty();
  if (targets > 1) throw usage_error("-p and -t cannot be combined", "give the processes with -p, or the threads with -t");
  if (targets && cpu_wide)
    throw usage_error("-p/-t count tasks, -a/-C count CPUs: choose one", "drop -p/-t, or drop -a/-C");
  if (!o.cgroup.empty() && !cpu_wide)
    throw usage_error("-G counts a cgroup on CPUs: it needs -a or -C", "add -a");
  if (o.per_thread && targets == 0 && (!o.system_wide || !o.cpus.empty()))
    throw usage_error("The --per-thread option is only available when monitoring via -p -t -a options or only --per-thread.",
                      "add -a (every thread of the system) or -p/-t; -C cannot be combined with it");
  int modes = o.no_aggr + o.per_core + o.per_die + o.per_socket + o.per_node;
  if (modes + o.per_thread > 1)
    throw usage_error("choose one of -A, --per-core, --per-die, --per-socket, --per-node, --per-thread", "");
  if (modes && !cpu_wide)
    throw usage_error("-A, --per-core, --per-die, --per-socket and --per-node split counts by CPU: they need -a or -C",
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

// -M's events, after -e's and -d's (each once): an event no PMU here publishes (msr/aperf/ where the
// msr PMU has only tsc) is kept as Absent and printed "<not supported>", as a counter the
// kernel refuses is; the metric's other events still count.
void append_metric_events(const CommandEvents& resolver, const StatOptions& options, std::vector<events::ResolvedGroup>& groups) {
  Result<std::vector<std::string>> metric_events = stat::events_of_metrics(options.metrics);
  if (!metric_events) throw usage_error(metric_events.error().message, "vperf list metrics names the metrics vperf has");
  auto counted = [&](const std::string& event) {
    return std::any_of(groups.begin(), groups.end(), [&](const events::ResolvedGroup& group) {
      return std::any_of(group.members.begin(), group.members.end(), [&](const events::ResolvedEvent& member) {
        return member.name == event || member.written == event;
      });
    });
  };
  for (const std::string& event : *metric_events) {
    if (counted(event)) continue;  // -e's or -d's already
    try {
      for (events::ResolvedGroup& group : resolver.resolve(event)) groups.push_back(std::move(group));
    } catch (const UserError&) {
      events::ResolvedEvent absent;
      absent.name = absent.written = event;
      absent.origin = events::EventOrigin::Absent;
      groups.push_back(events::ResolvedGroup{{absent}, false});
    }
  }
}

}  // namespace

int run_stat(const StatOptions& requested, std::ostream& err) {
  StatOptions given = requested;
  // Nothing to run or attach to: every CPU, until ^C, -I's --interval-count or --timeout, as
  // perf stat counts then.
  if (given.command.empty() && given.pids.empty() && given.tids.empty() && given.cpus.empty()) given.system_wide = true;
  validate(given);
  // Inline probes (-e uprobe:PATH:FUNC) are removed when this goes, after every counter on
  // them is closed: it is declared before anything opens one.
  probes::InlineProbes inline_probes;
  StatOptions options = given;
  options.events = checked(inline_probes.create(given.events));

  CommandEvents event_resolver;
  bool stalled = event_resolver.core_pmu_has("stalled-cycles-frontend") && event_resolver.core_pmu_has("stalled-cycles-backend");
  const std::string event_list = session::stat_event_list(options, stalled);
  std::vector<events::ResolvedGroup> groups;
  if (!event_list.empty()) groups = event_resolver.resolve(event_list);
  append_metric_events(event_resolver, options, groups);

  stat::CountTarget target;
  target.inherit = !options.no_inherit;
  target.all_user = options.all_user;
  target.all_kernel = options.all_kernel;
  TaskTargets tasks = resolve_targets(options.system_wide, options.cpus, options.pids, options.tids);
  target.cpus = tasks.cpus;
  target.threads = tasks.threads;
  return session::run_stat(options, groups, std::move(target), err);
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
  sub->add_flag("--per-node", options->per_node, "One line per NUMA node");
  sub->add_flag("--per-thread", options->per_thread, "One line per thread of -p/-t, or of every task with -a or alone");
  // perf merges an alias's PMU instances (uncore_imc_0..5) into one line unless told not to;
  // vperf prints a line per PMU always, which is what this asks for.
  sub->add_flag_callback("--no-merge", [] {}, "A line per PMU of an event on several PMUs (vperf's only way)");
  sub->add_option("-r,--repeat", options->repeat, "Run the command N times; print means and their spread")
      ->check(whole_number_in(1, 1000000));
  sub->add_option("-I,--interval-print", options->interval_ms, "Print the counts every MS milliseconds")
      ->check(whole_number_in(10, UINT32_MAX));
  sub->add_option("--interval-count", options->interval_count, "Stop after N intervals")->check(whole_number_in(1, UINT32_MAX));
  sub->add_flag("--summary", options->summary, "With -I, also print the totals at the end");
  sub->add_flag_callback("--no-csv-summary", [options] { options->csv_summary_column = false; },
                         "With -x and --summary, leave the \"summary\" column out of the totals' lines");
  sub->add_option("-x,--field-separator", options->csv_separator, "CSV output with this separator")->check(non_empty());
  add_json_flag(*sub, options->json);
  sub->add_flag("-j,--json-output", options->json, "perf stat's name for --json");
  sub->add_option("-o,--output", options->output_file, "Write the counts to FILE instead of stderr")->check(non_empty());
  sub->add_option("--timeout", options->timeout_ms, "Stop counting (and the command) after MS milliseconds")
      ->check(whole_number_in(1, UINT32_MAX));
  sub->add_flag("-B,--big-num", options->big_num, "Group thousands in counts (default: as the locale does, like perf)");
  sub->add_flag("--no-big-num", options->no_big_num, "Never group thousands, whatever the locale does")->excludes("--big-num");
  sub->add_flag("-i,--no-inherit", options->no_inherit, "Do not count the command's child tasks");
  sub->add_flag("--all-user", options->all_user, "Every event counts in user space only");
  sub->add_flag("--all-kernel", options->all_kernel, "Every event counts in the kernel only");
  sub->add_option("--max-overhead", options->max_overhead_percent,
                  "Warn when a probe event's hits cost more than this percent of one CPU (default 5)")
      ->check(CLI::Range(0.0, 10000.0));
  sub->add_option("--filter", options->filter, "Tracepoint filter for the last event ('prev_pid == 0')")->check(non_empty());
  sub->add_flag("-v,--verbose", options->verbose, "Print each event's value, enabled and running times (ns) as they are read");
  sub->add_flag("-n,--null", options->null_run, "Count no events (unless -e gives some): only the elapsed, user and sys times");
  // The command is everything after "--" (app.cpp keeps it out of option parsing), or, as
  // with perf, everything from the first word that is not an option.
  sub->prefix_command();
  sub->footer("COMMAND: the program to count and its arguments, e.g. vperf stat -e task-clock -- sleep 1\n"
              "vperf stat record [OPTIONS] COMMAND: the same, the counts also written to perf.data (-o FILE, - for a pipe)\n");
  CLI::App* report = sub->add_subcommand("report", "Print the counts a stat record wrote (vperf's or perf's), as perf stat report");
  auto report_input = std::make_shared<std::string>();
  report->add_option("-i,--input", *report_input, "perf.data to read (default perf.data, or standard input when it is a pipe)")
      ->check(non_empty());
  // perf stat report's own splits; -x, --json and the number grouping are stat's, given before
  // the word report (perf stat -x, report).
  auto report_split = std::make_shared<StatOptions>();
  report->add_flag("-A,--no-aggr", report_split->no_aggr, "One line per CPU");
  report->add_flag("--per-core", report_split->per_core, "One line per core");
  report->add_flag("--per-die", report_split->per_die, "One line per die");
  report->add_flag("--per-socket", report_split->per_socket, "One line per socket");
  report->add_flag("--per-node", report_split->per_node, "One line per NUMA node");
  report->callback([report_input, report_split, options, &inv] {
    inv.action = [report_input, report_split, options, &inv] {
      StatOptions format = *options;
      format.no_aggr = report_split->no_aggr;
      format.per_core = report_split->per_core;
      format.per_die = report_split->per_die;
      format.per_socket = report_split->per_socket;
      format.per_node = report_split->per_node;
      format.per_thread = false;
      session::run_stat_report(report_input->empty() ? session::default_input() : *report_input, format, *inv.err);
      return 0;
    };
  });
  sub->callback([sub, options, metrics, &inv] {
    if (sub->got_subcommand("report")) return;  // its own action (CLI11 calls this one after it)
    if (Result<std::vector<std::string>> known = stat::events_of_metrics(*metrics); !known)
      throw usage_error(known.error().message, "vperf list metrics names the metrics vperf has");
    options->metrics = *metrics;
    if (inv.stat_record) {  // -o names the recording; the counts are printed as always
      options->record_output = options->output_file.empty() ? "perf.data" : options->output_file;
      options->output_file.clear();
      options->cmdline = inv.cmdline;
    }
    options->command = command_words(*sub, inv);
    inv.action = [options, &inv] { return run_stat(*options, *inv.err); };
  });
}

}  // namespace vperf::cli
