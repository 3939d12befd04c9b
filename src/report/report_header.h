#pragma once
// perf report --header / --header-only: the perf.data header as perf 6.1 prints it
// (perf_header__fprintf_info): file layout, then one block per feature present, in feature
// order, then "# missing features:".
//
// Printed as perf does: HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM,
// CMDLINE, EVENT_DESC ("# event : name = ..., id = { ... }, type = ..., every non-zero attr
// field"), PMU_MAPPINGS, SAMPLE_TIME (first, last, duration), CLOCKID, and the "info available,
// use -I to display" line of CPU_TOPOLOGY, NUMA_TOPOLOGY, CACHE and MEM_TOPOLOGY, and GROUP_DESC's
// "# group: {a,b}" lines.
// Not printed (vperf keeps these sections as bytes): BRANCH_STACK, AUXTRACE, STAT,
// DIR_FORMAT, BPF_PROG_INFO, BPF_BTF, COMPRESSED, CPU_PMU_CAPS, CLOCK_DATA, HYBRID_TOPOLOGY,
// PMU_CAPS; perf prints nothing for TRACING_DATA and BUILD_ID here either.
#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <functional>
#include <string>

#include "data/perf_data_reader.h"

namespace vperf::report {

struct HeaderInfo {
  std::string input;                    // the file name ("-" for a pipe)
  std::optional<int64_t> captured_on;   // the file's mtime (perf's "captured on"), none for a pipe
};

// "# event : name = ..." for one event, as perf's perf_event_attr__fprintf lists the fields.
std::string event_line(const data::EventAttrEntry& event);
// The attr's fields perf's perf_event_attr__fprintf prints, in its order, each that is not zero:
// its name ("sample_type", "{ sample_period, sample_freq }") and its text ("IP|TID", "4000").
void for_each_attr_field(const perf_event_attr& attr, const std::function<void(const char* name, const std::string& text)>& field);
// perf's sample_type / read_format bit names: "IP|TID|TIME|CALLCHAIN|PERIOD".
std::string sample_type_names(uint64_t sample_type);
std::string read_format_names(uint64_t read_format);

// Pipe input: the layout lines say 0 and the block closes before the features (which perf
// prints as their records arrive), with no "missing features" line; call it after reading.
std::string render_header(const data::PerfDataReader& reader, const HeaderInfo& info);

}  // namespace vperf::report
