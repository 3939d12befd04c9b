// vperf ftrace [-t TRACER] [-e EVENT]... [-a|-C CPUS|-p PID] [-T|-N|-G|-g FUNC]... [-D MS] [-m SIZE]
//              [--func-opts ...] [--graph-opts ...] [--inherit] [-- CMD]      perf ftrace 6.1
// vperf ftrace -F [FILTER]                                                    traceable functions
// vperf ftrace latency -T FUNC [-a|-p PID] [-n] [-- CMD]                      perf ftrace latency
// vperf ftrace record [-p TRACER] [-l|-n FUNC]... [-e EVENT]... [-f FILTER] [--trigger T]...
//              [-C CLOCK] [-b KB] [-M CPUMASK] [-T] [-o trace.dat] [-P PID] [-- CMD]   trace-cmd record
// vperf ftrace report [-i trace.dat]                                          trace-cmd report
// vperf ftrace start|stop|show|pipe|snapshot|reset|marker|list ...            cmd_ftrace_instance.cpp
// Wiring only: the runs live in session/ftrace_session.h.
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/ftrace_options.h"
#include "session/ftrace_session.h"

namespace vperf::cli {

namespace {

void print_lines(const std::vector<std::string>& lines, std::ostream& out) {
  for (const std::string& line : lines) out << line << "\n";
}

// perf ftrace itself: a live trace of the command (or of every task) until it ends or ^C.
void add_perf_ftrace_options(CLI::App* sub, Invocation& inv) {
  auto o = std::make_shared<FtraceOptions>();
  auto delay = std::make_shared<unsigned>(0);
  auto functions = std::make_shared<std::string>();
  tracing::FtraceSettings& s = o->run.settings;
  sub->add_option("-t,--tracer", s.tracer, "The tracer: function_graph (default without -e), function, nop...");
  add_event_options(sub, s);
  sub->add_flag("-a,--all-cpus", o->all_tasks, "Trace every task, not only the command");
  sub->add_option("-C,--cpu", o->cpus, "Trace only these CPUs (a list: 0-1,3)");
  sub->add_option("-p,--pid", o->pids, "Trace these existing tasks (comma list)");
  sub->add_option("-T,--trace-funcs", s.function_filters, "Trace only functions matching (globs, :mod:MODULE, FUNC:traceoff...)")->take_all();
  sub->add_option("-N,--notrace-funcs", s.function_notrace, "Do not trace functions matching")->take_all();
  sub->add_option("-G,--graph-funcs", s.graph_functions, "function_graph: start graphs at these functions")->take_all();
  sub->add_option("-g,--nograph-funcs", s.graph_notrace, "function_graph: do not graph these functions")->take_all();
  sub->add_option("-D,--delay", *delay, "Start tracing this many milliseconds after the command")->check(CLI::Range(0, 3600000));
  sub->add_option("-m,--buffer-size", o->buffer_size, "Ring buffer size per CPU (512K, 4M; bytes without a unit)");
  sub->add_option("--func-opts", o->func_opts, "function tracer options: call-graph, irq-info")->take_all();
  sub->add_option("--graph-opts", o->graph_opts, "function_graph options: nosleep-time, noirqs, verbose, thresh=N, depth=N")->take_all();
  sub->add_option("-F,--funcs", *functions, "List the traceable functions (matching a glob)")->expected(0, 1);
  sub->prefix_command();  // the first word that is not an option starts the command
  sub->callback([&inv, o, delay, functions, sub] {
    if (!sub->get_subcommands().empty()) return;
    if (sub->count("--funcs") > 0) {
      inv.action = [&inv, functions] {
        print_lines(checked(session::ftrace_list(session::FtraceListing::functions, *functions)), *inv.out);
        return 0;
      };
      return;
    }
    inv.action = [&inv, o, delay, command = command_words(*sub, inv)] {
      session::FtraceRunOptions run = o->finish(true, command);  // perf's default: every task, until ^C
      if (*delay) run.delay = std::chrono::milliseconds(*delay);
      std::ostream& out = *inv.out;
      return checked(session::run_ftrace_live(run, [&out](std::string_view line) { out << line << '\n'; }, *inv.err)).exit_status;
    };
  });
}

void add_latency_command(CLI::App* ftrace, Invocation& inv) {
  auto o = std::make_shared<FtraceOptions>();
  auto use_bpf = std::make_shared<bool>(false);
  auto use_nsec = std::make_shared<bool>(false);
  CLI::App* sub = ftrace->add_subcommand("latency", "A histogram of a function's durations, as perf ftrace latency (function_graph based)");
  sub->add_option("-T,--trace-funcs", o->run.settings.function_filters, "The function to time")->required()->take_all();
  sub->add_flag("-a,--all-cpus", o->all_tasks, "Every task, not only the command");
  sub->add_option("-p,--pid", o->pids, "These existing tasks (comma list)");
  sub->add_flag("-b,--use-bpf", *use_bpf, "Accepted for perf's sake: vperf measures with function_graph");
  sub->add_flag("-n,--use-nsec", *use_nsec, "Buckets in nanoseconds");
  sub->prefix_command();  // the first word that is not an option starts the command
  sub->callback([&inv, o, use_bpf, use_nsec, sub] {
    inv.action = [&inv, o, use_bpf, use_nsec, command = command_words(*sub, inv)] {
      const session::FtraceRunOptions run = o->finish(false, command);  // perf's default: system-wide
      return checked(session::run_ftrace_latency(run, *use_nsec, *use_bpf, *inv.out, *inv.err)).exit_status;
    };
  });
}

void add_trace_cmd_record_command(CLI::App* ftrace, Invocation& inv) {
  auto o = std::make_shared<FtraceOptions>();
  auto output = std::make_shared<std::string>("trace.dat");
  auto duration = std::make_shared<double>(0);
  tracing::FtraceSettings& s = o->run.settings;
  CLI::App* sub = ftrace->add_subcommand("record", "Record into trace.dat (trace-cmd's format, version 6), as trace-cmd record");
  sub->add_option("-p,--plugin", s.tracer, "The tracer (trace-cmd's -p): function, function_graph, nop...");
  add_event_options(sub, s);
  sub->add_option("-f", s.event_filter, "An event filter on every -e event (trace-cmd's -f)");
  sub->add_option("-l", s.function_filters, "Trace only functions matching")->take_all();
  sub->add_option("-n", s.function_notrace, "Do not trace functions matching")->take_all();
  sub->add_option("-g", s.graph_functions, "function_graph: graph these functions")->take_all();
  sub->add_option("-C", s.clock, "The trace clock");
  sub->add_option("-b", o->buffer_size, "Ring buffer size per CPU in KB");
  sub->add_option("-M", o->cpumask, "Trace only the CPUs of this hex mask");
  sub->add_flag("-T", o->stack_trace, "A kernel stack trace with every event (or function)");
  sub->add_option("-o,--output", *output, "The file to write")->check(non_empty());
  sub->add_option("-P", o->pids, "Trace these existing tasks (comma list)");
  sub->add_option("--duration", *duration, "Stop after this many seconds")->check(number_in(0, 1e6));
  sub->add_option("--file-version", o->run.file_version, "trace.dat version: 6 (default) or 7")->check(CLI::IsMember({6, 7}));
  sub->add_option("--compression", o->run.compression, "Compress a version 7 file: zstd, or none (trace-cmd's option)")
      ->check(CLI::IsMember({"zstd", "none"}));
  sub->prefix_command();  // the first word that is not an option starts the command
  sub->callback([&inv, o, output, duration, sub] {
    inv.action = [&inv, o, output, duration, command = command_words(*sub, inv)] {
      session::FtraceRunOptions run = o->finish(false, command);
      if (*duration > 0) run.duration = std::chrono::milliseconds(static_cast<long long>(*duration * 1000));
      if (run.compression == "zstd" && run.file_version != 7)
        throw usage_error("--compression zstd needs --file-version 7", "trace.dat version 6 has no compression: add --file-version 7");
      if (run.settings.tracer.empty() && run.settings.events.empty())
        throw usage_error("nothing to record", "give a tracer (-p function) or events (-e SYSTEM:EVENT)");
      return checked(session::run_ftrace_record(run, *output, *inv.err)).exit_status;
    };
  });
}

void add_trace_cmd_report_command(CLI::App* ftrace, Invocation& inv) {
  auto input = std::make_shared<std::string>("trace.dat");
  CLI::App* sub = ftrace->add_subcommand("report", "Print a trace.dat (vperf's or trace-cmd's) as trace-cmd report does");
  sub->add_option("-i,--input,input", *input, "The trace.dat to read");
  sub->callback([&inv, input] {
    inv.action = [&inv, input] {
      std::ostream& out = *inv.out;
      checked(session::ftrace_report(*input, [&out](std::string_view line) { out << line << '\n'; }, *inv.err));
      return 0;
    };
  });
}

}  // namespace

void add_ftrace_command(CLI::App& app, Invocation& inv) {
  CLI::App* sub = app.add_subcommand("ftrace", "Trace kernel functions and events with ftrace, as perf ftrace and trace-cmd, in a private instance");
  sub->require_subcommand(0, 1);
  add_perf_ftrace_options(sub, inv);
  add_latency_command(sub, inv);
  add_trace_cmd_record_command(sub, inv);
  add_trace_cmd_report_command(sub, inv);
  add_ftrace_instance_commands(sub, inv);
}

}  // namespace vperf::cli
