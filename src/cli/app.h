#pragma once
#include <optional>
#include <ostream>

namespace vperf::cli {

// Parses argv, runs the chosen command and returns the process exit status:
// 0 ok, 1 runtime failure, 2 usage error. Errors are printed to err as one line,
// "vperf: error: WHAT (hint: WHAT TO DO)".
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// Parses argv exactly as run() does but runs nothing: the exit status when parsing alone
// answers the command line (help and --version on out, a usage error as run()'s one line on
// err), nullopt when run() would go on to run a command. The commands' parsing callbacks only
// check their options and keep the command to run, so this reads no file and no kernel
// interface (CLI11's check that a --symfs directory exists is the one stat). Exceptions other
// than vperf's user errors and CLI11's parse errors pass through: for the fuzz target of the
// options (tests/fuzz/command_line_fuzz.cpp), any other is a bug.
std::optional<int> parse_only(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace vperf::cli
