#pragma once
// vperf script [-i perf.data|-] [-F FIELDS]... [-G] [--max-stack N]
//
// Every sample of a perf.data (vperf's or perf's, file or pipe mode) as a line of text,
// character for character as perf 6.1's `perf script` prints it: the default fields per event
// type, -F selections (comm,tid,pid,time,cpu,event,trace,ip,sym,symoff,dso,period, with type
// prefixes and +/- modifiers), callchains one frame per line, tracepoint fields through the
// event's print fmt (libtraceevent). FlameGraph's stackcollapse-perf.pl folds the output exactly
// as it folds perf script's. docs/script.md has the details.
#include <ostream>
#include <string>
#include <vector>

#include "session/reading_session.h"

namespace vperf::cli {

struct ScriptOptions {
  session::ReadingInput source;     // -i, --symfs, vperf kvm's guests
  std::vector<std::string> fields;  // each -F argument, applied in order
  bool hide_callchain = false;      // -G
  unsigned max_stack = 127;
  bool inline_frames = true;        // --no-inline: DWARF-unwound frames without inline chains
  bool header = false;              // --header: the perf.data header first, as perf script --header
  bool dump_raw = false;            // -D: each record dumped (report/raw_dump.h) before its line
  bool nanoseconds = false;         // --ns
  bool show_task_events = false;    // --show-task-events
  bool show_mmap_events = false;    // --show-mmap-events
  std::vector<std::string> symbols; // -S
};

// Writes the samples to `out` (buffered, not flushed per line); warnings go to `err`.
// Throws UserError / usage_error for bad options or an unreadable input.
int run_script(const ScriptOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vperf::cli
