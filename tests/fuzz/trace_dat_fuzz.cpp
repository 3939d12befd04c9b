// libFuzzer target for the trace.dat reader (versions 6 and 7, compressed or not: the file
// `vperf ftrace report` takes from anywhere) and the report printed from it. The input is the
// file. It must parse or fail with an Error, and every event it yields must print, with no read
// outside memory vperf owns however the pages, sections and chunks lie.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tracing/trace_dat.h"

// As tracing_data_fuzz: libtraceevent's tep_parse_event leaks on some malformed formats.
extern "C" const char* __lsan_default_suppressions() { return "leak:tep_parse_event\n"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Plugins stay out: loading a dozen shared objects per input would be the whole run.
  vperf::Result<vperf::tracing::TraceDat> file = vperf::tracing::TraceDat::parse(std::vector<uint8_t>(data, data + size), false);
  if (!file) return 0;
  size_t printed = 0;
  vperf::Result<vperf::tracing::TraceReportSummary> summary =
      vperf::tracing::print_trace_report(*file, [&](std::string_view line) { printed += line.size(); });
  if (summary) (void)vperf::tracing::describe_losses(*file, *summary);
  // The flame graph folds of the same events: kernel stacks, function_graph durations.
  (void)vperf::tracing::folded_kernel_stacks(*file);
  (void)vperf::tracing::folded_function_graph(*file);
  return 0;
}
