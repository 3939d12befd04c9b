#pragma once
// What perf 6.1 accepts on the command lines vperf mirrors, so that an option vperf does not
// have is told apart: perf's own ("not supported by vperf yet") from a typo ("unknown option").
#include <string_view>

namespace vperf::cli {

// True when `perf COMMAND` (stat, record, report, script, annotate, probe) has the option `word` ("-M", "--metrics",
// "--metrics=IPC", "-MIPC").
bool is_perf_option(std::string_view command, std::string_view word);

}  // namespace vperf::cli
