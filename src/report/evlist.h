#pragma once
// perf evlist: the events of a recording, one line each, as perf 6.1 prints them: the names;
// with `verbose` each attr's fields ("cpu-clock: type: 1, size: 128, ..."); with `frequency`
// its sampling rate ("cpu-clock: sample_freq=4000", "sample_period=N"); with `groups` each
// group of the GROUP_DESC feature as "{leader,member}" in place of its members; with
// `trace_fields` each tracepoint's own field names from the file's formats. perf's closing tip
// follows when the file has tracepoints and their fields were not asked for.
#include <string>

#include "data/perf_data_reader.h"
#include "tracing/tracepoint_decoder.h"

namespace vperf::report {

struct EvlistOptions {
  bool verbose = false;       // -v
  bool frequency = false;     // -F
  bool groups = false;        // -g
  bool trace_fields = false;  // --trace-fields
};

// `decoder`: the file's tracing data (nullptr without), for tracepoint names and fields.
std::string render_evlist(const data::PerfDataReader& reader, const tracing::TracepointDecoder* decoder,
                          const EvlistOptions& options);

}  // namespace vperf::report
