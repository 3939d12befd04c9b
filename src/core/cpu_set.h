#pragma once
// Sets of CPU numbers as Linux writes them: "0-3,8,10-11" (sysfs cpulist format, perf's -C).
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

}  // namespace vperf
