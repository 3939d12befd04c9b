// libFuzzer target for the raw dump (report/script -D), which decodes every record's fields
// from outside bytes (CPU and thread maps, sample fields, callchains, registers, stacks): any
// file or pipe the reader opens must dump without crashing or reading out of bounds, however
// its records lie about their contents. The machines are configured with files that do not
// exist, so a fuzz run reads nothing of this host's. evlist's listing of the same input (its
// attrs and the GROUP_DESC section's counts and indexes) must not crash either.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <vector>

#include "data/perf_data_reader.h"
#include "report/evlist.h"
#include "report/raw_dump.h"
#include "symbols/machines.h"

// libtraceevent's tep_parse_event loses a few bytes on some malformed formats of a file's
// tracing data (its error path); suppressed only under that call, as in tracing_data_fuzz.
extern "C" const char* __lsan_default_suppressions() { return "leak:tep_parse_event\n"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reader = vperf::data::PerfDataReader::from_bytes(std::vector<uint8_t>(data, data + size));
  if (!reader) return 0;
  vperf::symbols::SymbolConfig config;
  config.kallsyms = "/nonexistent/kallsyms";
  config.modules = "/nonexistent/modules";
  config.symfs = "/nonexistent";
  config.vdso = vperf::symbols::VdsoSource::Skip;
  vperf::symbols::Machines machines{config};
  std::ostringstream out;
  (void)vperf::report::write_report_raw_dump(reader.value(), machines, "fuzz.data", out);
  (void)vperf::report::render_evlist(reader.value(), nullptr, vperf::report::EvlistOptions{.verbose = true, .groups = true});
  (void)vperf::report::render_evlist(reader.value(), nullptr, vperf::report::EvlistOptions{.frequency = true, .trace_fields = true});
  return 0;
}
