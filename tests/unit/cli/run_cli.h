#pragma once
// The whole CLI run in-process, as `vperf ARGS...` would run: exit status and both streams.
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace vperf::cli::in_process {

struct Outcome {
  int status;
  std::string out;
  std::string err;
};

inline Outcome run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "vperf");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int status = run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

}  // namespace vperf::cli::in_process
