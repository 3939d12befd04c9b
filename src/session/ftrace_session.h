#pragma once
// vperf ftrace's runs: the live trace (perf ftrace: the buffer's trace_pipe streamed while a
// command runs or until ^C), the recording (trace-cmd record: each CPU's raw pages into a
// trace.dat), and the commands that work on a named instance across invocations (start, stop,
// show, pipe, snapshot, marker, reset).
//
// Every run works in a buffer of its own (tracing/ftrace_buffer.h): instances/vperf-PID, made
// for the run and removed at its end, on an error, and on SIGINT/SIGTERM/SIGHUP (the run loop
// ends the run; the buffer's destructor removes it). Instances of vperf runs that were killed
// are removed by the next vperf ftrace command. Only a tracer the kernel does not offer in
// instances runs in the top-level buffer, whose files are then restored (it says so on stderr).
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tracing/ftrace_persisted.h"
#include "tracing/ftrace_setup.h"

namespace vperf::session {

struct FtraceRunOptions {
  tracing::FtraceSettings settings;          // settings.events: the -e values (inline probes allowed)
  std::vector<std::string> command;          // -- CMD; empty: until ^C (or --duration)
  std::vector<pid_t> pids;                   // -p: trace these instead of a command
  bool all_tasks = false;                    // -a: no pid filter, even with a command
  std::optional<std::chrono::milliseconds> delay;     // -D: tracing starts this long after CMD
  std::optional<std::chrono::milliseconds> duration;  // stop after this long
  int file_version = 6;                      // record: trace.dat version 6 or 7
  std::string compression;                   // record, version 7: "zstd" or none
};

// What the run saw, for the summary line and the tests.
struct FtraceRunSummary {
  int exit_status = 0;                       // the command's, as a shell reports it (0 without one)
  bool top_level = false;                    // the tracer needed the top-level buffer
  std::vector<uint64_t> lost_by_cpu;         // overrun + dropped events, per CPU
  uint64_t bytes = 0;                        // raw data recorded (record)
};

// perf ftrace: streams the trace to `out` as the kernel formats it.
Result<FtraceRunSummary> run_ftrace_live(const FtraceRunOptions& options, const std::function<void(std::string_view)>& out,
                                         std::ostream& err);

// perf ftrace latency: function_graph on the functions of options.settings.function_filters
// (-T), each call's duration into perf's histogram, printed to `out` when the run ends.
// Without BPF here, `bpf_asked` only adds a note on `err` that function_graph measures instead.
Result<FtraceRunSummary> run_ftrace_latency(const FtraceRunOptions& options, bool nanoseconds, bool bpf_asked, std::ostream& out,
                                            std::ostream& err);

// trace-cmd record: writes trace.dat (version 6) to `output`.
Result<FtraceRunSummary> run_ftrace_record(const FtraceRunOptions& options, const std::filesystem::path& output, std::ostream& err);

// --- a named instance across commands ---
// Starts tracing in instances/INSTANCE, made for it, or, with an empty name, in the top-level
// buffer, whose files' previous contents are kept (in /run/vperf) until reset restores them;
// a second start there is refused. With `dump_on_oops`, kernel.ftrace_dump_on_oops also dumps
// that buffer on an oops (instances: Linux 6.10+); nothing else ever writes that sysctl, and a
// kernel that refuses it refuses the start before anything changed.
Result<void> ftrace_start(const std::string& instance, const tracing::FtraceSettings& settings,
                          std::optional<tracing::OopsDump> dump_on_oops, std::ostream& err);
// Stops tracing in the instance, or in the top level that start holds (empty name).
Result<void> ftrace_stop(const std::string& instance);
// The instance's trace (or snapshot) file as the kernel prints it.
Result<std::string> ftrace_show(const std::string& instance, bool snapshot);
// Takes a snapshot (the instance's buffer swapped into its snapshot buffer).
Result<void> ftrace_take_snapshot(const std::string& instance);
// Streams trace_pipe until ^C.
Result<void> ftrace_pipe(const std::string& instance, const std::function<void(std::string_view)>& out);
// Writes TEXT into the instance's trace_marker (or the top level's when instance is empty).
Result<void> ftrace_marker(const std::string& instance, const std::string& text);
// Removes the instance (tracing off, events off, the directory gone) and its part of the oops
// dump, or, with an empty name, gives the top level back every file start wrote and the oops
// dump's setting; every leftover vperf-PID instance goes too. Returns the instances removed.
Result<std::vector<std::string>> ftrace_reset(const std::string& instance);

// vperf ftrace list -t/-e/-o/-f: the tracers, events ("SYSTEM:EVENT"), options ("name" or
// "noname" as set now), or traceable functions matching `filter` (a glob; empty: all).
enum class FtraceListing { tracers, events, options, functions };
Result<std::vector<std::string>> ftrace_list(FtraceListing what, const std::string& filter);

// The trace-cmd report of a trace.dat; what the file says was lost goes to `err` afterwards
// (tracing/trace_dat.h, describe_losses), so stdout stays trace-cmd's, and so do warnings of what
// could not be shown (tracing::shortcomings): then the report is printed and an Error follows.
Result<void> ftrace_report(const std::filesystem::path& input, const std::function<void(std::string_view)>& out, std::ostream& err);

}  // namespace vperf::session
