#pragma once
// What perf 6.1 accepts on the command lines vperf mirrors, so that an option vperf does not
// have is told apart: perf's own ("not supported by vperf yet") from a typo ("unknown option");
// likewise its commands.
#include <string_view>

namespace vperf::cli {

// True when `perf COMMAND` (stat, record, report, script, annotate, probe) has the option `word` ("-M", "--metrics",
// "--metrics=IPC", "-MIPC").
bool is_perf_option(std::string_view command, std::string_view word);

// True when `word` is one of perf 6.1's commands (`perf` with no arguments lists them): mem,
// sched, c2c ... A command vperf lacks is then said to be perf's, not guessed at.
bool is_perf_command(std::string_view word);

}  // namespace vperf::cli
