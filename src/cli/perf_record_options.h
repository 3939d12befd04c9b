#pragma once
// The options of a perf-event recording and the request they make (session/record_session.h),
// shared by vperf record and vperf kvm stat record (which chooses its own events and filters):
// -F rates as perf checks them, -g/--call-graph, the targets (-a, -C, -p, -t), inline probes
// (-e uprobe:...) that live as long as the recording. The user's view is cli/cmd_record.h.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "events/attr_builder.h"
#include "session/record_session.h"

namespace vperf::cli {

struct RecordOptions {
  // --filter, -o, -m, -q, the command, the cmdline, vperf kvm's guests and tracepoint filters by
  // name bind straight into the request; record_request() adds what needs resolving: the events,
  // their rates and call graphs, the CPUs and tasks.
  session::RecordRequest request;
  std::vector<std::string> events;  // -e; empty: cycles (or its cpu-clock fallback)
  std::optional<uint64_t> frequency;
  std::string clockid;  // -k/--clockid as given
  std::string frequency_text;  // -F as given: samples per second, or "max" (perf events only)
  std::optional<uint64_t> period;
  bool call_graph_fp = false;   // -g
  std::string call_graph;       // --call-graph fp | dwarf[,SIZE]
  bool system_wide = false;     // -a
  std::string cpus;             // -C
  std::string pids;             // -p
  std::string tids;             // -t
  bool no_inherit = false;
  std::string switch_output;      // --switch-output[=signal|SIZE|TIME]; empty: one file
  unsigned switch_max_files = 0;  // --switch-max-files
  std::vector<std::string> switch_output_events;  // --switch-output-event
  std::string control;            // --control fifo:CTL[,ACK] | fd:CTL[,ACK]
  std::optional<int64_t> delay_ms;  // -D/--delay: ms after the command starts, -1: until "enable"
  // Which machines unmodified events sample: the host, unless vperf kvm says otherwise.
  events::MachineScope scope{};
};

// The recording `options` ask for, checked (usage errors for bad combinations) and resolved.
session::RecordRequest record_request(const RecordOptions& options);

// Runs the recording; returns the command's exit status (128 + signal when one ended it),
// else 0. Messages (the closing line, the fallback note) go to `err`.
int run_record(const RecordOptions& options, std::ostream& err);

}  // namespace vperf::cli
