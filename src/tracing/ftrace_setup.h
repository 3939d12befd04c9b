#pragma once
// What a vperf ftrace run asks of its buffer (tracer, events, filters, triggers, pids, clock,
// size, options) and the writes that set it up, in the order the kernel needs them: tracing off,
// then the buffer's shape (clock, size, CPU mask), then who is traced (pids, function filters),
// then the tracer and the events. Each refused write is one Error naming the file, the value
// and the kernel's error_log entry.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "tracing/ftrace_buffer.h"
#include "tracing/tracefs_events.h"
#include "tracing/tracing_data.h"

namespace vperf::tracing {

struct FtraceSettings {
  std::string tracer;                        // empty: nop (events only)
  std::vector<std::string> events;           // "SYSTEM:EVENT", "SYSTEM" (all of it), globs
  std::string event_filter;                  // the kernel's filter syntax, on every event given
  std::vector<std::string> event_triggers;   // "traceoff:3", "stacktrace", "hist:keys=..."
  std::vector<std::string> function_filters;   // set_ftrace_filter: globs, ":mod:M", "F:traceon"
  std::vector<std::string> function_notrace;   // set_ftrace_notrace
  std::vector<std::string> graph_functions;    // set_graph_function
  std::vector<std::string> graph_notrace;      // set_graph_notrace
  std::vector<pid_t> pids;                   // set_ftrace_pid and set_event_pid; empty: all
  bool inherit = false;                      // function-fork and event-fork: children too
  std::string cpumask;                       // tracing_cpumask (hex); empty: unchanged
  std::optional<unsigned> buffer_kb;         // per CPU
  std::string clock;                         // trace_clock; empty: unchanged
  std::vector<std::string> options;          // trace options: "func_stack_trace", "nosym-offset"
  std::optional<unsigned> graph_depth;       // max_graph_depth
  std::optional<unsigned> threshold_us;      // tracing_thresh
};

// tracing_cpumask's text for these CPUs: hex, in 32-bit groups separated by commas, the
// highest group first ("3", "1,00000000").
std::string tracing_cpumask_text(const std::vector<int>& cpus);

// Tracers that hook functions: they need available_filter_functions and set_ftrace_filter.
bool is_function_based_tracer(std::string_view tracer);

// Whether this kernel lets function tracing be set up: nullopt when it does, else the Error
// that names the file it refuses (EPERM on available_filter_functions or set_ftrace_filter on
// locked-down kernels and some hypervisor guests) and what to do instead.
std::optional<Error> function_tracing_refused(const FtraceBuffer& buffer);

// The tracers a buffer offers (its available_tracers).
std::vector<std::string> available_tracers(const FtraceBuffer& buffer);

// The events the patterns name, in the catalog's order, each once; an error names a pattern
// that matches none ("no event matches 'foo:*'", with `vperf ftrace list -e` as the hint).
Result<std::vector<TracepointName>> expand_events(const TracepointCatalog& catalog, const std::vector<std::string>& patterns);

// Every name and value of `settings` checked for the file it goes to
// (tracing/kernel_control_text.h): a function filter word with white space, a filter or trigger
// with a newline, an option that is not a file name of options/ are refused before any write.
Result<void> check_settings(const FtraceSettings& settings);

// Applies `settings` to `buffer` (checked first, check_settings), tracing left off (start_tracing turns it on) and the buffer
// emptied. `events` are expand_events' result for settings.events.
Result<void> apply_settings(FtraceBuffer& buffer, const FtraceSettings& settings, const std::vector<TracepointName>& events);

Result<void> start_tracing(FtraceBuffer& buffer);
Result<void> stop_tracing(FtraceBuffer& buffer);

}  // namespace vperf::tracing
