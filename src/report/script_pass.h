#pragma once
// One `vperf script` pass over a recording: every sample as perf 6.1's perf script prints it
// (script_line.h), with the fields -F chose resolved against the recording's events
// (script_fields.h), tracepoint fields through the recording's tracing data, each record
// dumped before its line with -D (raw_dump.h), and the event names of event_names.h. The
// output is written in blocks: perf script's output is usually piped on (to
// stackcollapse-perf.pl), and a flush per line would cost more than the formatting.
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "report/script_fields.h"
#include "symbols/machines.h"
#include "unwind/user_stack_unwinder.h"

namespace vperf::report {

struct ScriptPassOptions {
  ScriptFieldSelection fields;            // -F, applied in order
  bool hide_callchain = false;            // -G
  unsigned max_stack = 127;
  bool inline_frames = true;              // --no-inline: unwound frames without inline chains
  std::optional<std::string> dump_input;  // -D: every record dumped, the input named so ("pipe")
  bool nanoseconds = false;               // --ns
  bool show_task_events = false;          // --show-task-events: COMM, FORK, EXIT lines among the samples
  bool show_mmap_events = false;          // --show-mmap-events: MMAP, MMAP2 lines
  std::vector<std::string> symbols;       // -S: only samples whose ip is in one of these functions
};

struct ScriptPassResult {
  data::ReadStats stats;
  // What to say after the reader's own warnings: the tracing data's, samples printed without
  // their fields, the machines the samples came from (SampleReplay::scope_note).
  std::vector<std::string> closing_warnings;
  // Trace text was printed from the fields because its print fmt was unsafe on the record:
  // the output is incomplete (script exits 1, as ftrace report does).
  bool printed_from_fields = false;
};

class ScriptPass {
 public:
  using Warn = std::function<void(const std::string& warning)>;

  // The fields resolved against `reader`'s events: an Error (with a hint) when one needs what
  // the events do not record. `warn` gets the tracing data's warnings as they come.
  static Result<ScriptPass> prepare(const data::PerfDataReader& reader, ScriptPassOptions options, Warn warn);

  // Writes a line (or a block with the callchain) per sample to `out`. An Error when the
  // records could not be read.
  Result<ScriptPassResult> run(data::PerfDataReader& reader, symbols::Machines& machines,
                               unwind::UserStackUnwinder* unwinder, std::ostream& out);

  ScriptPass(ScriptPass&&) noexcept;
  ScriptPass& operator=(ScriptPass&&) noexcept;
  ~ScriptPass();

 private:
  struct State;
  explicit ScriptPass(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace vperf::report
