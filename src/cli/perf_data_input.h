#pragma once
// The -i option every perf.data reader shares (report, script, annotate, flamegraph): a file,
// or "-" for perf's pipe format on standard input.
#include <string>
#include <string_view>

#include "data/perf_data_reader.h"

namespace vperf::cli {

// Throws UserError (one line, with `record_command` as the way to make a recording) when the
// input cannot be opened or is not perf.data.
data::PerfDataReader open_perf_data(const std::string& input, std::string_view record_command);

}  // namespace vperf::cli
