#pragma once
// The options vperf ftrace's commands share (perf ftrace's, trace-cmd's), bound straight onto
// the run they ask for (session::FtraceRunOptions); the few that are text to be turned into
// settings (CPU lists and masks, buffer sizes, --func-opts, --graph-opts, -T, -p) are kept
// beside it until finish().
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "session/ftrace_session.h"

namespace vperf::cli {

struct FtraceOptions {
  session::FtraceRunOptions run;          // run.settings: tracer, events, filters, triggers, clock, ...
  std::optional<std::string> cpus;        // -C 0-1,3 (given empty: no CPU, refused, unlike not given)
  std::optional<std::string> cpumask;     // trace-cmd's -M hex mask
  std::string buffer_size;                // "-m 4M" (perf: bytes without a unit), "-b 1024" (trace-cmd: KB)
  std::vector<std::string> func_opts, graph_opts;
  bool stack_trace = false;               // trace-cmd's -T
  std::string pids;                       // -p/-P comma list
  bool all_tasks = false;                 // -a

  // The run: the texts turned into settings (usage_error for a bad one), the command after
  // "--", every task when neither a command nor a pid is given. `perf_defaults`: perf ftrace's
  // (function_graph without -e; -m in bytes), else trace-cmd's.
  // `command`: command_words of the subcommand (after "--", or from its first word that is
  // not an option, as perf ftrace and trace-cmd record take it).
  session::FtraceRunOptions finish(bool perf_defaults, std::vector<std::string> command) const;
  // The settings alone (vperf ftrace start: no command, no tasks).
  tracing::FtraceSettings settings(bool perf_defaults) const;
};

// -e, --filter, --trigger, --clock, -O, --inherit.
void add_event_options(CLI::App* sub, tracing::FtraceSettings& settings);


// vperf ftrace start|stop|show|pipe|snapshot|reset|marker|list: live tracing in a named
// instance across commands (cmd_ftrace_instance.cpp).
void add_ftrace_instance_commands(CLI::App* ftrace, Invocation& inv);

}  // namespace vperf::cli
