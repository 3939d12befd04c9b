#pragma once
// The options of a perf-event recording and the request they make (session/record_session.h),
// shared by vperf record and vperf kvm stat record (which chooses its own events and filters):
// -F rates as perf checks them, -g/--call-graph, the targets (-a, -C, -p, -t), inline probes
// (-e uprobe:...) that live as long as the recording. The user's view is cli/cmd_record.h.
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
