#pragma once
// One sample as perf 6.1's `perf script` prints it (builtin-script.c process_event and
// evsel_fprintf.c), field by field, in this order and with these widths:
//
//   comm    "%16s " ("%s " when ip is shown with a callchain); pid 0 without a COMM record
//           is perf's idle thread, "swapper"
//   pid/tid "%5d/%-5d " with both, else "%5d "
//   cpu     "[%03d] "
//   time    "%12s: " of "SECONDS.MICROSECONDS" (truncated, not rounded; nanoseconds with --ns)
//   period  "%10lu " (the attr's sample_period when the sample has none)
//   event   "%*s: " right-aligned to the longest event name of the file
//   trace   the tracepoint's print fmt output (TracepointDecoder)
//   ip      without a callchain: " %16lx" then " sym[+0xoff]" and " (dso)";
//           with one: a newline, then per frame "\t%16lx sym[+0xoff] (dso)\n" (a user-space
//           frame's address is its offset in the dso, perf's map_ip; an inlined frame ends in
//           " (inlined)" instead of the dso), and an empty line after the sample.
//           A recorded callchain with a marker perf does not know (anything but the HV,
//           KERNEL and USER contexts) is discarded whole, as perf's add_callchain_ip does.
// Unresolved symbols and dsos print as "[unknown]". Each sample ends with "\n".
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/sample_replay.h"
#include "report/script_fields.h"
#include "tracing/tracepoint_decoder.h"

namespace vperf::report {

struct ScriptLineOptions {
  int event_name_width = 0;  // longest event name of the file
  bool use_callchain = true;  // ScriptFieldLayout::use_callchain
  // perf script's --max-stack (perf's default, the kernel's perf_event_max_stack default):
  // at most this many recorded callchain addresses, and as many unwound user frames.
  unsigned max_stack = kPerfMaxStack;
  // The chain's user frames were unwound from a stack copy (ReplayOptions::unwinder was set):
  // a sample whose recorded callchain is empty then still has frames to show.
  bool user_stacks_unwound = false;
  bool nanoseconds = false;  // --ns: times as SECONDS.NANOSECONDS
};

// The callchain lines of the frames printed so far, by profile frame id: a frame's line depends
// on the frame and the fields only, and samples print the same frames over and over (a deep
// stack's dozens of them each time). Forgotten when the profile forgets its frames
// (Profile::generation), when the fields change, and past kBytes.
class ScriptFrameLines {
 public:
  static constexpr size_t kBytes = size_t{4} << 20;
  // Appends frame `id`'s line, formatting it the first time.
  void append(std::string& out, const Profile& profile, uint32_t id, ScriptFieldSet fields);

 private:
  void forget();
  uint64_t generation_ = 0;
  ScriptFieldSet fields_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> lines_;  // (offset in text_, length) by frame id; length 0: not yet
  std::string text_;
};

// The columns perf script starts a line with (perf_sample__fprintf_start): comm, pid/tid, cpu
// and time, for a sample or a side-band record (--show-task-events, --show-mmap-events).
// `with_callchain` leaves the comm unpadded, as perf does before a callchain; `timed` false
// prints perf's -1 for an event recorded without times.
struct LineStart {
  std::string_view comm;
  pid_t pid = -1, tid = -1;
  uint32_t cpu = 0;
  uint64_t time = 0;
  bool timed = true;
};
void append_line_start(std::string& out, const LineStart& start, ScriptFieldSet fields, bool with_callchain,
                       bool nanoseconds);

// Appends `sample`'s text to `out`. `decoder` may be nullptr (no trace text then).
// `frame_lines`, if given, keeps the callchain lines formatted for the next samples.
void append_script_sample(std::string& out, const ResolvedSample& sample, ScriptFieldSet fields,
                          std::string_view event_name, const ScriptLineOptions& options,
                          const tracing::TracepointDecoder* decoder, ScriptFrameLines* frame_lines = nullptr);

// "16430.309497": seconds and microseconds of a perf timestamp, as perf's
// timestamp__scnprintf_usec.
std::string script_timestamp(uint64_t nanoseconds);

}  // namespace vperf::report
