#pragma once
// Runs a program (vperf itself, perf) for integration tests and captures what it printed.
#include <map>
#include <string>
#include <vector>

namespace vperf::test {

struct ProgramResult {
  int exit_code = -1;  // -1 if it did not exit normally
  std::string out;
  std::string err;
};

// argv[0] is looked up on PATH unless it contains a '/'. `env` entries are added to the
// inherited environment (e.g. {"LIBPFM_FORCE_PMU", "ivb"}). Standard input is /dev/null.
ProgramResult run_program(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {});
// run_program({VPERF_BINARY, args...})
ProgramResult run_vperf(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env = {});

// How many lines of a program's output hold `needle`.
size_t count_lines_with(const std::string& text, const std::string& needle);

}  // namespace vperf::test
