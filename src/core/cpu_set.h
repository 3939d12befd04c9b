#pragma once
// Sets of CPU numbers as Linux writes them: "0-3,8,10-11" (sysfs cpulist format, perf's -C),
// and lists of process or thread IDs (perf's -p and -t).
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf {

// Sorted, without duplicates. The error names the offending part ("bad CPU range '3-1'").
Result<std::vector<int>> parse_cpu_list(std::string_view text);
// "0-3,8"
std::string format_cpu_list(const std::vector<int>& cpus);
// The CPUs the kernel has online, from <sysfs>/devices/system/cpu/online.
Result<std::vector<int>> online_cpus(const std::filesystem::path& sysfs = "/sys");

// "123,456" -> {123, 456}, in the given order. The error names `option` and the bad part
// ("bad -p value 'abc'").
Result<std::vector<pid_t>> parse_task_ids(std::string_view text, std::string_view option);

}  // namespace vperf
