#pragma once
// vperf record [-e EVENTS] [-F HZ | -c PERIOD] [-g | --call-graph fp|dwarf[,SIZE]]
//              [-a | -C CPUS | -p PIDS | -t TIDS] [--filter EXPR] [-o FILE|-] [-m PAGES]
//              [-i|--no-inherit] [-q] [--] [COMMAND [ARGS...]]
//
// Samples into perf's own perf.data format (file, or pipe mode with -o -), which perf 6.1's
// report and script read. The flow, as perf record:
//   1. the events are opened (per task for a COMMAND/-p/-t, per CPU for -a/-C), one ring per
//      place; `cycles` falls back to `cpu-clock` where the kernel has no hardware cycles,
//      saying so (perf does the same);
//   2. perf.data gets the attrs with their kernel ids, then the kernel/module maps and, for
//      tasks that already exist (-a, -p, -t), their COMM and MMAP2 records;
//   3. the rings are drained whenever they wake up (and every 100 ms), each batch followed by
//      FINISHED_ROUND, after which the file is readable up to there even if vperf is killed;
//   4. on the command's exit, SIGINT/SIGTERM/SIGHUP (forwarded to the command) or the end of
//      -p/-t tasks, the rest is drained, the file is read back for the build-ids of the DSOs
//      samples hit (session/record_build_ids.h; not in pipe mode, as perf) and the feature
//      sections are written.
// An event the kernel refuses with EACCES at perf_event_paranoid >= 2 is sampled in user space
// only, as perf does (perf/permission_fallback.h). An existing FILE is renamed FILE.old first.
// The closing lines are perf's (with its "Processed N events and lost M chunks!" warning
// between them when the kernel dropped records):
//   [ vperf record: Woken up 1 times to write data ]
//   [ vperf record: Captured and wrote 0.015 MB perf.data (280 samples) ]
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "events/attr_builder.h"
#include "guest/guest_symbols.h"
#include "session/record_session.h"

namespace vperf::cli {

struct RecordOptions {
  std::vector<std::string> cmdline;  // the whole command line, for perf.data's header
  std::vector<std::string> events;  // -e; empty: cycles (or its cpu-clock fallback)
  std::optional<uint64_t> frequency;
  std::string frequency_text;  // -F as given: samples per second, or "max" (perf events only)
  std::optional<uint64_t> period;
  bool call_graph_fp = false;   // -g
  std::string call_graph;       // --call-graph fp | dwarf[,SIZE]
  bool system_wide = false;     // -a
  std::string cpus;             // -C
  std::string pids;             // -p
  std::string tids;             // -t
  std::string filter;           // --filter, for the tracepoint given just before (perf applies it to the last -e)
  // Kernel filters by tracepoint name ("syscalls:sys_enter_ioctl" -> "cmd == 0xae80"), wherever
  // the tracepoint is in `events`: what a command that chooses its events filters them by.
  std::map<std::string, std::string> tracepoint_filters;
  std::string output = "perf.data";
  unsigned mmap_pages = 128;    // -m, a power of two
  bool no_inherit = false;
  bool quiet = false;
  // With -p/-t/-a/-C, the COMMAND only says how long to record (perf record -p PID -- sleep
  // 10): it is run, not sampled, and ends with the tasks.
  std::vector<std::string> command;
  // Which machines unmodified events sample: the host, unless vperf kvm says otherwise.
  events::MachineScope scope{};
  // vperf kvm: guests whose kernel and module maps are written as perf kvm record writes them.
  guest::GuestSymbolSources guests;
};

// The recording `options` ask for, checked (usage errors for bad combinations) and resolved.
session::RecordRequest record_request(const RecordOptions& options);

// Runs the recording; returns the command's exit status (128 + signal when one ended it),
// else 0. Messages (the closing line, the fallback note) go to `err`.
int run_record(const RecordOptions& options, std::ostream& err);

}  // namespace vperf::cli
