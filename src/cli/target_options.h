#pragma once
// What -a, -C CPUS, -p PIDS and -t TIDS mean, for every command that opens counters (stat,
// record): the CPUs to count on, or the threads to follow. Validated here once: bad lists
// are usage errors (exit 2), PIDs and TIDs that do not exist are UserErrors (exit 1).
#include <sys/types.h>

#include <string>
#include <vector>

namespace vperf::cli {

struct TaskTargets {
  std::vector<pid_t> threads;  // -p (every thread of each process) or -t
  std::vector<int> cpus;       // -C as given, or every online CPU for -a
};

TaskTargets resolve_targets(bool system_wide, const std::string& cpus, const std::string& pids, const std::string& tids);

// "123,456" -> {123, 456}; `option` names the flag in the error.
std::vector<pid_t> parse_pid_list(const std::string& text, const char* option);

}  // namespace vperf::cli
