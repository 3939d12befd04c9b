// vperf ftrace [-t TRACER] [-e EVENT]... [-a|-C CPUS|-p PID] [-T|-N|-G|-g FUNC]... [-D MS] [-m SIZE]
//              [--func-opts ...] [--graph-opts ...] [--inherit] [-- CMD]      perf ftrace 6.1
// vperf ftrace -F [FILTER]                                                    traceable functions
// vperf ftrace record [-p TRACER] [-l|-n FUNC]... [-e EVENT]... [-f FILTER] [--trigger T]...
//              [-C CLOCK] [-b KB] [-M CPUMASK] [-T] [-o trace.dat] [-P PID] [-- CMD]   trace-cmd record
// vperf ftrace report [-i trace.dat]                                          trace-cmd report
// vperf ftrace start|stop|show|pipe|snapshot|reset|marker|list ...            live, by instance
// Wiring only: the runs live in session/ftrace_session.h.
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "core/cpu_set.h"
#include "core/strings.h"
#include "session/ftrace_session.h"

namespace vperf::cli {

namespace {

constexpr const char* kDefaultInstance = "vperf";


// The settings both the perf-style and the trace-cmd-style commands take.
struct SettingOptions {
  std::string tracer;
  std::vector<std::string> events, function_filters, notrace, graph_functions, graph_notrace, triggers, trace_options;
  std::string event_filter, clock, buffer_size;
  std::optional<std::string> cpus, cpumask;  // given empty, they select no CPU (refused), unlike not given
  std::vector<std::string> func_opts, graph_opts;
  bool inherit = false, stack_trace = false;
};

// "-m 4M", "-b 1024" (trace-cmd: KB): a size in KB.
unsigned size_in_kb(const std::string& text, bool plain_is_kb) {
  std::string digits = text;
  unsigned long long scale = 1;
  if (!digits.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    if (unit == 'K' || unit == 'M' || unit == 'G') {
      scale = unit == 'K' ? 1 : unit == 'M' ? 1024 : 1024 * 1024;
      digits.pop_back();
    } else if (!plain_is_kb) {
      scale = 0;  // bytes: rounded up to KB below
    }
  }
  std::optional<uint64_t> n = parse_u64(digits);
  if (!n || *n == 0) throw usage_error("invalid buffer size '" + text + "'", "give a size such as 1024 (KB), 512K or 4M");
  const uint64_t kb = scale == 0 ? (*n + 1023) / 1024 : *n * scale;
  if (kb > (1u << 30)) throw usage_error("buffer size '" + text + "' is too large", "give at most 1T per CPU");
  return static_cast<unsigned>(kb);
}

std::string cpumask_of(const std::string& cpu_list) { return tracing::tracing_cpumask_text(checked(parse_cpu_list(cpu_list))); }

tracing::FtraceSettings settings_of(const SettingOptions& o, bool perf_defaults) {
  tracing::FtraceSettings s;
  s.tracer = o.tracer;
  // perf ftrace traces function_graph unless told otherwise; with events only, no tracer.
  if (perf_defaults && s.tracer.empty() && o.events.empty()) s.tracer = "function_graph";
  s.events = o.events;
  s.event_filter = o.event_filter;
  s.event_triggers = o.triggers;
  s.function_filters = o.function_filters;
  s.function_notrace = o.notrace;
  s.graph_functions = o.graph_functions;
  s.graph_notrace = o.graph_notrace;
  s.inherit = o.inherit;
  s.clock = o.clock;
  s.options = o.trace_options;
  if (o.stack_trace) s.options.push_back(s.tracer.empty() || s.tracer == "nop" ? "stacktrace" : "func_stack_trace");
  if (o.cpus) s.cpumask = o.cpus->empty() ? "0" : cpumask_of(*o.cpus);
  if (o.cpumask) s.cpumask = o.cpumask->empty() ? "0" : *o.cpumask;
  if (!o.buffer_size.empty()) s.buffer_kb = size_in_kb(o.buffer_size, !perf_defaults);
  for (const std::string& opt : o.func_opts) {
    for (std::string_view one : split(opt, ',')) {
      if (one == "call-graph") s.options.push_back("func_stack_trace");
      else if (one == "irq-info") s.options.push_back("irq-info");
      else throw usage_error("unknown --func-opts '" + std::string(one) + "'", "use call-graph or irq-info");
    }
  }
  for (const std::string& opt : o.graph_opts) {
    for (std::string_view one : split(opt, ',')) {
      if (one == "nosleep-time") s.options.push_back("nosleep-time");
      else if (one == "noirqs") s.options.push_back("nofuncgraph-irqs");
      else if (one == "verbose") {
        for (const char* v : {"funcgraph-proc", "funcgraph-abstime"}) s.options.push_back(v);
      } else if (one.starts_with("thresh=")) {
        s.threshold_us = static_cast<unsigned>(parse_u64(one.substr(7)).value_or(0));
      } else if (one.starts_with("depth=")) {
        s.graph_depth = static_cast<unsigned>(parse_u64(one.substr(6)).value_or(0));
      } else {
        throw usage_error("unknown --graph-opts '" + std::string(one) + "'", "use nosleep-time, noirqs, verbose, thresh=N or depth=N");
      }
    }
  }
  return s;
}

std::vector<pid_t> pids_of(const std::string& text) {
  if (text.empty()) return {};
  return checked(parse_task_ids(text, "-p"));
}

// A run of the given settings over the command after "--" and the -p PIDS; every task (-a, and
// perf's and trace-cmd's default when neither a command nor a pid is given) when `all_tasks`.
session::FtraceRunOptions run_of(const SettingOptions& o, bool perf_defaults, const Invocation& inv, const std::string& pids, bool all_tasks) {
  session::FtraceRunOptions run;
  run.settings = settings_of(o, perf_defaults);
  run.command = inv.command_after_separator;
  run.pids = pids_of(pids);
  run.all_tasks = all_tasks || (run.command.empty() && run.pids.empty());
  return run;
}

void add_event_options(CLI::App* sub, SettingOptions& o) {
  sub->add_option("-e,--event", o.events, "Trace these events: SYSTEM:EVENT, SYSTEM, globs, probe events, inline uprobe:/kprobe: probes")->take_all();
  sub->add_option("--filter", o.event_filter, "An event filter in the kernel's syntax ('common_pid == 42'), on every -e event");
  sub->add_option("--trigger", o.triggers, "An event trigger on every -e event (traceoff:N, stacktrace, snapshot, hist:keys=...)")->take_all();
  sub->add_option("--clock", o.clock, "The trace clock: local, global, counter, uptime, perf, mono, x86-tsc...");
  sub->add_option("-O,--option", o.trace_options, "A trace option to set (func_stack_trace) or clear (nosym-offset)")->take_all();
  sub->add_flag("--inherit", o.inherit, "Trace the command's children too");
}

void print_lines(const std::vector<std::string>& lines, std::ostream& out) {
  for (const std::string& line : lines) out << line << "\n";
}

}  // namespace

void add_ftrace_command(CLI::App& app, Invocation& inv) {
  CLI::App* sub = app.add_subcommand("ftrace", "Trace kernel functions and events with ftrace, as perf ftrace and trace-cmd, in a private instance");
  sub->require_subcommand(0, 1);

  // perf ftrace.
  auto o = std::make_shared<SettingOptions>();
  auto pid_text = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  auto delay = std::make_shared<unsigned>(0);
  auto functions = std::make_shared<std::string>();
  sub->add_option("-t,--tracer", o->tracer, "The tracer: function_graph (default without -e), function, nop...");
  add_event_options(sub, *o);
  sub->add_flag("-a,--all-cpus", *all, "Trace every task, not only the command");
  sub->add_option("-C,--cpu", o->cpus, "Trace only these CPUs (a list: 0-1,3)");
  sub->add_option("-p,--pid", *pid_text, "Trace these existing tasks (comma list)");
  sub->add_option("-T,--trace-funcs", o->function_filters, "Trace only functions matching (globs, :mod:MODULE, FUNC:traceoff...)")->take_all();
  sub->add_option("-N,--notrace-funcs", o->notrace, "Do not trace functions matching")->take_all();
  sub->add_option("-G,--graph-funcs", o->graph_functions, "function_graph: start graphs at these functions")->take_all();
  sub->add_option("-g,--nograph-funcs", o->graph_notrace, "function_graph: do not graph these functions")->take_all();
  sub->add_option("-D,--delay", *delay, "Start tracing this many milliseconds after the command")->check(CLI::Range(0, 3600000));
  sub->add_option("-m,--buffer-size", o->buffer_size, "Ring buffer size per CPU (512K, 4M; bytes without a unit)");
  sub->add_option("--func-opts", o->func_opts, "function tracer options: call-graph, irq-info")->take_all();
  sub->add_option("--graph-opts", o->graph_opts, "function_graph options: nosleep-time, noirqs, verbose, thresh=N, depth=N")->take_all();
  sub->add_option("-F,--funcs", *functions, "List the traceable functions (matching a glob)")->expected(0, 1);
  sub->callback([&inv, o, pid_text, all, delay, functions, sub] {
    if (!sub->get_subcommands().empty()) return;
    if (sub->count("--funcs") > 0) {
      inv.action = [&inv, functions] {
        print_lines(checked(session::ftrace_list(session::FtraceListing::functions, *functions)), *inv.out);
        return 0;
      };
      return;
    }
    inv.action = [&inv, o, pid_text, all, delay] {
      session::FtraceRunOptions run = run_of(*o, true, inv, *pid_text, *all);  // perf's default: every task, until ^C
      if (*delay) run.delay = std::chrono::milliseconds(*delay);
      std::ostream& out = *inv.out;
      session::FtraceRunSummary summary =
          checked(session::run_ftrace_live(run, [&out](std::string_view line) { out << line << '\n'; }, *inv.err));
      return summary.exit_status;
    };
  });

  // perf ftrace latency.
  auto l = std::make_shared<SettingOptions>();
  auto latency_pids = std::make_shared<std::string>();
  auto latency_all = std::make_shared<bool>(false);
  auto use_bpf = std::make_shared<bool>(false);
  auto use_nsec = std::make_shared<bool>(false);
  CLI::App* latency = sub->add_subcommand("latency", "A histogram of a function's durations, as perf ftrace latency (function_graph based)");
  latency->add_option("-T,--trace-funcs", l->function_filters, "The function to time")->required()->take_all();
  latency->add_flag("-a,--all-cpus", *latency_all, "Every task, not only the command");
  latency->add_option("-p,--pid", *latency_pids, "These existing tasks (comma list)");
  latency->add_flag("-b,--use-bpf", *use_bpf, "Accepted for perf's sake: vperf measures with function_graph");
  latency->add_flag("-n,--use-nsec", *use_nsec, "Buckets in nanoseconds");
  latency->callback([&inv, l, latency_pids, latency_all, use_bpf, use_nsec] {
    inv.action = [&inv, l, latency_pids, latency_all, use_bpf, use_nsec] {
      const session::FtraceRunOptions run = run_of(*l, false, inv, *latency_pids, *latency_all);  // perf's default: system-wide
      return checked(session::run_ftrace_latency(run, *use_nsec, *use_bpf, *inv.out, *inv.err)).exit_status;
    };
  });

  // trace-cmd record.
  auto r = std::make_shared<SettingOptions>();
  auto output = std::make_shared<std::string>("trace.dat");
  auto record_pids = std::make_shared<std::string>();
  auto duration = std::make_shared<double>(0);
  auto file_version = std::make_shared<int>(6);
  CLI::App* record = sub->add_subcommand("record", "Record into trace.dat (trace-cmd's format, version 6), as trace-cmd record");
  record->add_option("-p,--plugin", r->tracer, "The tracer (trace-cmd's -p): function, function_graph, nop...");
  add_event_options(record, *r);
  record->add_option("-f", r->event_filter, "An event filter on every -e event (trace-cmd's -f)");
  record->add_option("-l", r->function_filters, "Trace only functions matching")->take_all();
  record->add_option("-n", r->notrace, "Do not trace functions matching")->take_all();
  record->add_option("-g", r->graph_functions, "function_graph: graph these functions")->take_all();
  record->add_option("-C", r->clock, "The trace clock");
  record->add_option("-b", r->buffer_size, "Ring buffer size per CPU in KB");
  record->add_option("-M", r->cpumask, "Trace only the CPUs of this hex mask");
  record->add_flag("-T", r->stack_trace, "A kernel stack trace with every event (or function)");
  record->add_option("-o,--output", *output, "The file to write")->check(non_empty());
  record->add_option("-P", *record_pids, "Trace these existing tasks (comma list)");
  record->add_option("--duration", *duration, "Stop after this many seconds")->check(number_in(0, 1e6));
  record->add_option("--file-version", *file_version, "trace.dat version: 6 (default) or 7")->check(CLI::IsMember({6, 7}));
  auto compression = std::make_shared<std::string>();
  record->add_option("--compression", *compression, "Compress a version 7 file: zstd, or none (trace-cmd's option)")
      ->check(CLI::IsMember({"zstd", "none"}));
  record->callback([&inv, r, output, record_pids, duration, file_version, compression] {
    inv.action = [&inv, r, output, record_pids, duration, file_version, compression] {
      session::FtraceRunOptions run = run_of(*r, false, inv, *record_pids, false);
      if (*duration > 0) run.duration = std::chrono::milliseconds(static_cast<long long>(*duration * 1000));
      run.file_version = *file_version;
      run.compression = *compression;
      if (run.compression == "zstd" && run.file_version != 7)
        throw usage_error("--compression zstd needs --file-version 7", "trace.dat version 6 has no compression: add --file-version 7");
      if (run.settings.tracer.empty() && run.settings.events.empty())
        throw usage_error("nothing to record", "give a tracer (-p function) or events (-e SYSTEM:EVENT)");
      session::FtraceRunSummary summary = checked(session::run_ftrace_record(run, *output, *inv.err));
      return summary.exit_status;
    };
  });

  // trace-cmd report.
  auto input = std::make_shared<std::string>("trace.dat");
  CLI::App* report = sub->add_subcommand("report", "Print a trace.dat (vperf's or trace-cmd's) as trace-cmd report does");
  report->add_option("-i,--input,input", *input, "The trace.dat to read");
  report->callback([&inv, input] {
    inv.action = [&inv, input] {
      std::ostream& out = *inv.out;
      checked(session::ftrace_report(*input, [&out](std::string_view line) { out << line << '\n'; }, *inv.err));
      return 0;
    };
  });

  // Live tracing in a named instance, across commands.
  auto instance = std::make_shared<std::string>(kDefaultInstance);
  auto s = std::make_shared<SettingOptions>();
  CLI::App* start = sub->add_subcommand("start", "Start tracing in a named instance that stays until reset (show, pipe, stop)");
  start->add_option("-t,--tracer", s->tracer, "The tracer");
  add_event_options(start, *s);
  start->add_option("-T,--trace-funcs", s->function_filters, "Trace only functions matching")->take_all();
  start->add_option("-m,--buffer-size", s->buffer_size, "Ring buffer size per CPU");
  start->add_option("--instance", *instance, "The instance's name; '' (empty): the top-level buffer, given back by reset")
      ->check([](const std::string& name) { return name.find('/') == std::string::npos ? "" : "an instance name has no '/'"; });
  auto dump_on_oops = std::make_shared<std::string>("all");
  start->add_option("--dump-on-oops", *dump_on_oops,
                    "Also dump this buffer to the console on an oops or panic (kernel.ftrace_dump_on_oops): all CPUs, or orig_cpu")
      ->expected(0, 1)
      ->check(CLI::IsMember({"all", "orig_cpu"}));
  start->callback([&inv, s, instance, dump_on_oops, start] {
    inv.action = [&inv, s, instance, dump_on_oops, start] {
      tracing::FtraceSettings settings = settings_of(*s, false);
      if (settings.tracer.empty() && settings.events.empty())
        throw usage_error("nothing to start", "give a tracer (-t function) or events (-e SYSTEM:EVENT)");
      std::optional<tracing::OopsDump> dump;
      if (start->count("--dump-on-oops") > 0) dump = *dump_on_oops == "orig_cpu" ? tracing::OopsDump::oops_cpu : tracing::OopsDump::all_cpus;
      checked(session::ftrace_start(*instance, settings, dump, *inv.err));
      return 0;
    };
  });
  auto snapshot = std::make_shared<bool>(false);
  for (const char* name : {"stop", "show", "pipe", "snapshot", "reset"}) {
    CLI::App* cmd = sub->add_subcommand(name, std::string(name) == "stop"       ? "Stop tracing in the instance (its buffer stays readable)"
                                              : std::string(name) == "show"     ? "Print the instance's trace (or --snapshot)"
                                              : std::string(name) == "pipe"     ? "Stream the instance's trace_pipe until ^C"
                                              : std::string(name) == "snapshot" ? "Take a snapshot of the instance's buffer and print it"
                                                                                : "Remove the instance (or give the top level back what start changed) and instances left by killed vperf runs");
    cmd->add_option("--instance", *instance, "The instance's name (default vperf; '': the top level)");
    if (std::string(name) == "show") cmd->add_flag("--snapshot", *snapshot, "Print the snapshot buffer instead");
    const std::string which = name;
    cmd->callback([&inv, instance, snapshot, which] {
      inv.action = [&inv, instance, snapshot, which] {
        std::ostream& out = *inv.out;
        if (which == "stop") checked(session::ftrace_stop(*instance));
        if (which == "show") out << checked(session::ftrace_show(*instance, *snapshot));
        if (which == "pipe") checked(session::ftrace_pipe(*instance, [&out](std::string_view line) { out << line << '\n' << std::flush; }));
        if (which == "snapshot") {
          checked(session::ftrace_take_snapshot(*instance));
          out << checked(session::ftrace_show(*instance, true));
        }
        if (which == "reset")
          for (const std::string& removed : checked(session::ftrace_reset(*instance))) out << "removed instance " << removed << "\n";
        return 0;
      };
    });
  }
  auto marker_text = std::make_shared<std::vector<std::string>>();
  CLI::App* marker = sub->add_subcommand("marker", "Write TEXT into the trace (trace_marker)");
  marker->add_option("--instance", *instance, "The instance (default vperf; empty: the top level)");
  marker->add_option("text", *marker_text, "The text")->required();
  marker->callback([&inv, instance, marker_text] {
    inv.action = [instance, marker_text] {
      checked(session::ftrace_marker(*instance, join(*marker_text, " ")));
      return 0;
    };
  });
  auto listing = std::make_shared<std::string>();
  auto list_filter = std::make_shared<std::string>();
  CLI::App* list = sub->add_subcommand("list", "List tracers (-t), events (-e), trace options (-o) or traceable functions (-f)");
  list->add_flag_callback("-t", [listing] { *listing = "t"; }, "Tracers");
  list->add_flag_callback("-e", [listing] { *listing = "e"; }, "Events");
  list->add_flag_callback("-o", [listing] { *listing = "o"; }, "Trace options (noNAME: off)");
  list->add_flag_callback("-f", [listing] { *listing = "f"; }, "Traceable functions");
  list->add_option("filter", *list_filter, "A glob the names must match");
  list->callback([&inv, listing, list_filter] {
    inv.action = [&inv, listing, list_filter] {
      if (listing->empty()) throw usage_error("list what?", "give -t (tracers), -e (events), -o (options) or -f (functions)");
      const session::FtraceListing what = *listing == "t" ? session::FtraceListing::tracers
                                          : *listing == "e" ? session::FtraceListing::events
                                          : *listing == "o" ? session::FtraceListing::options
                                                            : session::FtraceListing::functions;
      print_lines(checked(session::ftrace_list(what, *list_filter)), *inv.out);
      return 0;
    };
  });
}

}  // namespace vperf::cli
