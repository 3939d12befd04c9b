#include "cli/cmd_stat.h"

#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
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
#include "stat/stat_printer.h"
#include "stat/stat_session.h"

namespace vperf::cli {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

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
  if (targets && !o.command.empty())
    throw usage_error("a COMMAND and -p/-t cannot be combined", "count the command, or attach to the running tasks");
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

// The cgroup's directory, opened for PERF_FLAG_PID_CGROUP.
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

stat::AggrMode aggregation_of(const StatOptions& o) {
  if (o.no_aggr) return stat::AggrMode::PerCpu;
  if (o.per_core) return stat::AggrMode::PerCore;
  if (o.per_die) return stat::AggrMode::PerDie;
  if (o.per_socket) return stat::AggrMode::PerSocket;
  return stat::AggrMode::Global;
}

uint64_t ns_since(Clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

// One run: counts from enabling until the workload ends, a stop signal, the timeout or the
// interval count; prints -I blocks on the way. Returns the workload's exit, if there is one.
struct RunResult {
  stat::StatSnapshot totals;
  stat::RunTimes times;
  std::optional<perf::WorkloadExit> exit;
};

class StatRun {
 public:
  // `printer_for` gives the printer for the session's events (perf's names, e.g. "cycles:u"
  // after a fallback, are known once the counters are open).
  using PrinterFor = std::function<stat::StatPrinter&(const std::vector<stat::StatEvent>&)>;
  StatRun(const StatOptions& options, const std::vector<events::ResolvedGroup>& groups, const stat::CountTarget& base,
          const perf::StopSignals& signals, PrinterFor printer_for)
      : options_(options), groups_(groups), base_(base), signals_(signals), printer_for_(std::move(printer_for)) {}

  RunResult run() {
    perf::KernelPerfEventOpener opener;
    std::optional<perf::Workload> workload;
    stat::CountTarget target = base_;
    if (!options_.command.empty()) {
      Result<perf::Workload> prepared = perf::Workload::prepare(options_.command);
      if (!prepared) throw UserError("cannot start '" + options_.command.front() + "': " + prepared.error().describe(), "");
      workload.emplace(std::move(prepared).value());
      if (target.cpus.empty()) {
        target.threads = {workload->pid()};
        target.enable_on_exec = true;
      }
    }
    Result<stat::StatSession> opened = stat::StatSession::open(opener, groups_, target);
    if (!opened) throw UserError(opened.error().describe(), stat::open_failure_hint(opened.error()));
    stat::StatSession session = std::move(opened).value();
    printer_ = &printer_for_(session.events());

    start_ = Clock::now();
    check(session.enable(), "enable the counters");
    if (workload) {
      Result<bool> started = workload->start();
      if (!started) throw UserError(started.error().describe(), "check the command name and your PATH");
    }
    RunResult result;
    result.exit = wait(session, workload);
    check(session.disable(), "disable the counters");
    uint64_t elapsed = ns_since(start_);
    Result<stat::StatSnapshot> totals = session.read(elapsed);
    check(totals, "read the counters");
    if (options_.interval_ms && !interval_count_reached_) {
      // The partial interval since the last tick, as perf prints it when counting ends
      // (not after --interval-count: the user asked for exactly N).
      stat::StatSnapshot delta = stat::snapshot_delta(*totals, previous_);
      if (delta.elapsed_ns > 0) printer_->print_interval(elapsed, delta);
    }
    result.totals = std::move(totals).value();
    result.times.elapsed_ns = elapsed;
    if (result.exit) {
      result.times.user_seconds = result.exit->user_seconds;
      result.times.system_seconds = result.exit->system_seconds;
    }
    return result;
  }

 private:
  template <typename T>
  static void check(const Result<T>& r, const std::string& what) {
    if (!r) throw UserError("cannot " + what + ": " + r.error().describe(), "run 'vperf check'");
  }

  // Until the next event that matters; nullopt: no deadline.
  std::optional<Clock::time_point> next_deadline() const {
    std::optional<Clock::time_point> deadline;
    if (options_.timeout_ms) deadline = start_ + milliseconds(options_.timeout_ms);
    if (options_.interval_ms) {
      Clock::time_point tick = start_ + milliseconds(options_.interval_ms) * (intervals_ + 1);
      if (!deadline || tick < *deadline) deadline = tick;
    }
    return deadline;
  }

  // Returns true when counting should stop.
  bool on_deadline(const stat::StatSession& session, Clock::time_point now) {
    if (options_.interval_ms && now >= start_ + milliseconds(options_.interval_ms) * (intervals_ + 1)) {
      uint64_t elapsed = ns_since(start_);
      Result<stat::StatSnapshot> snapshot = session.read(elapsed);
      check(snapshot, "read the counters");
      printer_->print_interval(elapsed, stat::snapshot_delta(*snapshot, previous_));
      previous_ = std::move(snapshot).value();
      ++intervals_;
      if (options_.interval_count && intervals_ >= options_.interval_count) {
        interval_count_reached_ = true;
        return true;
      }
    }
    return options_.timeout_ms && now >= start_ + milliseconds(options_.timeout_ms);
  }

  std::optional<perf::WorkloadExit> wait(const stat::StatSession& session, std::optional<perf::Workload>& workload) {
    bool stopping = false;  // the workload was told to end; only wait for it now
    for (;;) {
      std::optional<Clock::time_point> deadline = stopping ? std::nullopt : next_deadline();
      std::optional<milliseconds> timeout;
      if (deadline)
        timeout = std::max(milliseconds(0), std::chrono::ceil<milliseconds>(*deadline - Clock::now()));
      if (workload) {
        auto exit = workload->wait_for(timeout, &signals_);
        if (!exit) throw UserError("cannot wait for the command: " + exit.error().describe(), "");
        if (*exit) return **exit;
        if (!signals_.take().empty()) continue;  // forwarded to the command; it decides when to end
      } else {
        if (wait_without_workload(timeout)) return std::nullopt;
      }
      if (stopping) continue;
      if (on_deadline(session, Clock::now())) {
        if (!workload) return std::nullopt;
        workload->terminate(SIGTERM);
        stopping = true;
      }
    }
  }

  // Counting CPUs or attached tasks: returns true when a stop signal came or every task ended.
  bool wait_without_workload(std::optional<milliseconds> timeout) {
    // Attached tasks are checked every 100 ms, as there is no portable way to poll a thread's end.
    milliseconds slice = base_.threads.empty() ? timeout.value_or(milliseconds(-1)) : std::min(timeout.value_or(milliseconds(100)), milliseconds(100));
    pollfd pfd{signals_.fd(), POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(slice.count()));
    if (ready > 0) {
      signals_.take();
      return true;
    }
    if (!base_.threads.empty() && std::none_of(base_.threads.begin(), base_.threads.end(), task_alive)) return true;
    return false;
  }

  const StatOptions& options_;
  const std::vector<events::ResolvedGroup>& groups_;
  const stat::CountTarget& base_;
  const perf::StopSignals& signals_;
  PrinterFor printer_for_;
  stat::StatPrinter* printer_ = nullptr;
  Clock::time_point start_;
  unsigned intervals_ = 0;
  bool interval_count_reached_ = false;
  stat::StatSnapshot previous_;
};

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

}  // namespace

std::string stat_event_list(const StatOptions& options, bool have_stalled_cycles) {
  if (!options.events.empty()) return join(options.events, ",");
  bool cpu_wide = options.system_wide || !options.cpus.empty();
  std::string list = std::string(cpu_wide ? "cpu-clock," : "task-clock,") + kDefaultEvents;
  if (have_stalled_cycles) list += std::string(",") + kStalledCycles;
  list += std::string(",") + kDefaultEventsEnd;
  for (int level = 0; level < options.detail && level < 3; ++level) list += std::string(",") + kDetailedEvents[level];
  return list;
}

int run_stat(const StatOptions& options, std::ostream& err) {
  validate(options);

  CommandEvents event_resolver;
  bool stalled = event_resolver.core_pmu_has("stalled-cycles-frontend") && event_resolver.core_pmu_has("stalled-cycles-backend");
  std::vector<events::ResolvedGroup> groups = event_resolver.resolve(stat_event_list(options, stalled));

  stat::CountTarget target;
  target.inherit = !options.no_inherit;
  stat::StatTarget described;
  described.command = options.command;
  described.system_wide = options.system_wide;
  described.cpu_list = options.cpus;
  described.pid = options.pids;
  described.tid = options.tids;
  TaskTargets tasks = resolve_targets(options.system_wide, options.cpus, options.pids, options.tids);
  target.cpus = tasks.cpus;
  target.threads = tasks.threads;
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
  print.show_rusage = !options.command.empty() && options.repeat == 1 && target.cpus.empty();
  print.thousands_grouping = options.big_num || locale_groups_thousands();

  Result<perf::StopSignals> signals = perf::StopSignals::install();
  if (!signals) throw UserError("cannot install signal handlers: " + signals.error().describe(), "");

  std::optional<stat::StatPrinter> printer;
  auto printer_for = [&](const std::vector<stat::StatEvent>& events) -> stat::StatPrinter& {
    if (!printer) {
      Result<CpuTopology> topology = load_cpu_topology();
      if (!topology) throw UserError("cannot read the CPU topology: " + topology.error().describe(), "is /sys mounted?");
      printer.emplace(events, print, std::move(topology).value(), *out);
    }
    return *printer;
  };
  std::optional<perf::WorkloadExit> last_exit;
  for (int run = 0; run < options.repeat; ++run) {
    StatRun one(options, groups, target, *signals, printer_for);
    RunResult result = one.run();
    printer->add_run(result.totals, result.times);
    last_exit = result.exit;
    if (signals->received() && options.command.empty()) break;
  }
  // perf's psignal line comes before the counts.
  if (last_exit && last_exit->signaled)
    err << options.command.front() << ": " << ::strsignal(last_exit->code) << '\n';
  printer->print_summary(stat::describe_target(described));
  out->flush();
  if (!*out) throw UserError("could not write the counts", "check the file system");
  if (!options.output_file.empty()) write_output_file(file.str());

  return last_exit ? last_exit->shell_status() : 0;
}

void add_stat_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<StatOptions>();
  CLI::App* sub = app.add_subcommand("stat", "Count events while a command runs, or on CPUs or tasks, as perf stat");
  sub->add_option("-e,--event", options->events, "Events to count (repeat or separate with commas; {a,b} is a group)")
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
  sub->add_option("-o,--output", options->output_file, "Write the counts to FILE instead of stderr")->check(non_empty());
  sub->add_option("--timeout", options->timeout_ms, "Stop counting (and the command) after MS milliseconds")
      ->check(whole_number_in(1, UINT32_MAX));
  sub->add_flag("-B,--big-num", options->big_num, "Group thousands in counts (default: as the locale does, like perf)");
  sub->add_flag("-i,--no-inherit", options->no_inherit, "Do not count the command's child tasks");
  // The command is everything after "--" (app.cpp keeps it out of option parsing), or, as
  // with perf, everything from the first word that is not an option.
  sub->prefix_command();
  sub->footer("COMMAND: the program to count and its arguments, e.g. vperf stat -e task-clock -- sleep 1\n");
  sub->callback([sub, options, &inv] {
    options->command = command_words(*sub, inv);
    inv.action = [options, &inv] { return run_stat(*options, *inv.err); };
  });
}

}  // namespace vperf::cli
