#pragma once
// perf's tracing data (feature HEADER_TRACING_DATA in a file, a HEADER_TRACING_DATA record in
// a pipe): the tracefs formats perf report and perf script need to decode tracepoint samples.
// Without it perf refuses a file with tracepoint events ("broken or missing trace data").
//
// Layout, version "0.6" (perf's trace-event-info.c / trace-event-read.c), little-endian:
//   u8[10]  23, 8, 68, "tracing"
//   char[]  "0.6\0"
//   u8      0 (little-endian)       u8  sizeof(long)        u32 page size
//   "header_page\0"  u64 size, events/header_page
//   "header_event\0" u64 size, events/header_event
//   u32 count of ftrace formats (events/ftrace/<name>/format whose <name> is a recorded
//       event's name), each u64 size + text
//   u32 count of systems; for each: system name "\0", u32 count, each u64 size + format text
//       (only the recorded tracepoints)
//   u32 size + /proc/kallsyms      (vperf writes 0: symbols come from the kernel map)
//   u32 size + printk_formats
//   u64 size + saved_cmdlines
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tracing/tracefs.h"

namespace vperf::tracing {

struct TracepointName {
  std::string system;  // "sched"
  std::string event;   // "sched_switch"
};

// What differs between perf's tracing data and the head of trace-cmd's trace.dat v6, whose
// layout is the same up to saved_cmdlines.
struct TracingDataLayout {
  std::string version = "0.6";     // trace.dat: "6"
  bool kallsyms = false;           // trace.dat: /proc/kallsyms, for function tracers' addresses
  bool every_ftrace_format = false;  // trace.dat: all of events/ftrace (function, kernel_stack, print...)
};

// The tracing data of the `recorded` tracepoints, read from `tracefs`.
Result<std::vector<uint8_t>> build_tracing_data(const Tracefs& tracefs, const std::vector<TracepointName>& recorded,
                                                const TracingDataLayout& layout = {});

// The same from this machine's tracefs (find_tracefs_root).
Result<std::vector<uint8_t>> build_local_tracing_data(const std::vector<TracepointName>& recorded);

// The pipe-mode record, as perf writes it (data::build_record): {perf_event_header type 66 of
// size 16, u32 size, 4 bytes of padding}, then the data padded to 8.
std::vector<uint8_t> tracing_data_record(const std::vector<uint8_t>& tracing_data);

// saved_cmdlines text ("PID COMM" lines) from the kernel's, with the comms a recorder knows for
// its own tasks (read from /proc while they lived) in place of the kernel's lines for those
// pids. Never two lines for one pid: libtraceevent keeps both and a lookup finds either, and
// the kernel's line for a pid may be a stale one of an earlier task that had the pid (the
// kernel saves a comm only when it switches a task while tracing).
std::string saved_cmdlines_with(std::string_view kernels, const std::map<int, std::string>& known);

}  // namespace vperf::tracing
