#pragma once
#include <ostream>

namespace vperf::cli {

// Parses argv, runs the chosen command and returns the process exit status:
// 0 ok, 1 runtime failure, 2 usage error. Errors are printed to err as one line,
// "vperf: error: WHAT (hint: WHAT TO DO)".
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace vperf::cli
