#include "cli/ftrace_options.h"

#include <cctype>

#include "core/cpu_set.h"
#include "core/strings.h"

namespace vperf::cli {

namespace {

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

void apply_func_opts(const std::vector<std::string>& given, tracing::FtraceSettings& s) {
  for (const std::string& opt : given) {
    for (std::string_view one : split(opt, ',')) {
      if (one == "call-graph") s.options.push_back("func_stack_trace");
      else if (one == "irq-info") s.options.push_back("irq-info");
      else throw usage_error("unknown --func-opts '" + std::string(one) + "'", "use call-graph or irq-info");
    }
  }
}

void apply_graph_opts(const std::vector<std::string>& given, tracing::FtraceSettings& s) {
  for (const std::string& opt : given) {
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
}

}  // namespace

tracing::FtraceSettings FtraceOptions::settings(bool perf_defaults) const {
  tracing::FtraceSettings s = run.settings;
  // perf ftrace traces function_graph unless told otherwise; with events only, no tracer.
  if (perf_defaults && s.tracer.empty() && s.events.empty()) s.tracer = "function_graph";
  if (stack_trace) s.options.push_back(s.tracer.empty() || s.tracer == "nop" ? "stacktrace" : "func_stack_trace");
  if (cpus) s.cpumask = cpus->empty() ? "0" : tracing::tracing_cpumask_text(checked(parse_cpu_list(*cpus)));
  if (cpumask) s.cpumask = cpumask->empty() ? "0" : *cpumask;
  if (!buffer_size.empty()) s.buffer_kb = size_in_kb(buffer_size, !perf_defaults);
  apply_func_opts(func_opts, s);
  apply_graph_opts(graph_opts, s);
  return s;
}

session::FtraceRunOptions FtraceOptions::finish(bool perf_defaults, std::vector<std::string> command) const {
  session::FtraceRunOptions out = run;
  out.settings = settings(perf_defaults);
  out.command = std::move(command);
  if (!pids.empty()) out.pids = checked(parse_task_ids(pids, "-p"));
  out.all_tasks = all_tasks || (out.command.empty() && out.pids.empty());
  return out;
}

void add_event_options(CLI::App* sub, tracing::FtraceSettings& s) {
  sub->add_option("-e,--event", s.events, "Trace these events: SYSTEM:EVENT, SYSTEM, globs, probe events, inline uprobe:/kprobe: probes")->take_all();
  sub->add_option("--filter", s.event_filter, "An event filter in the kernel's syntax ('common_pid == 42'), on every -e event");
  sub->add_option("--trigger", s.event_triggers, "An event trigger on every -e event (traceoff:N, stacktrace, snapshot, hist:keys=...)")->take_all();
  sub->add_option("--clock", s.clock, "The trace clock: local, global, counter, uptime, perf, mono, x86-tsc...");
  sub->add_option("-O,--option", s.options, "A trace option to set (func_stack_trace) or clear (nosym-offset)")->take_all();
  sub->add_flag("--inherit", s.inherit, "Trace the command's children too");
}

}  // namespace vperf::cli
