#pragma once
// The one name an event is shown by (report's headers, script's event field, raw dumps): the
// name the file gives it, else the one perf 6.1's evsel__name makes from the attr (a pipe whose
// EVENT_DESC never came, a file from an old perf): "cycles", "cpu-clock",
// "L1-dcache-load-misses", "raw 0x1c2", "mem:0x1000:rw", a tracepoint's "system:name" from the
// recording's tracing data, else perf's "unknown tracepoint", "unknown-hardware", ... (perf's
// strings, checked in its binary). perf then appends the modifiers the attr implies (":u" for
// exclude_kernel); vperf does not.
#include <linux/perf_event.h>

#include <string>

#include "data/perf_data_writer.h"
#include "tracing/tracepoint_decoder.h"

namespace vperf::report {

// `decoder` may be nullptr (no tracing data).
std::string event_name(const perf_event_attr& attr, const tracing::TracepointDecoder* decoder);
// The entry's own name when it has one, else event_name of its attr.
std::string event_name(const data::EventAttrEntry& entry, const tracing::TracepointDecoder* decoder);

}  // namespace vperf::report
