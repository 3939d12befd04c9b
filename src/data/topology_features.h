#pragma once
// The CPU_TOPOLOGY and NUMA_TOPOLOGY feature sections of this machine, as perf record and perf
// stat record write them (perf 6.1's write_cpu_topology and write_numa_topology), from sysfs:
// perf report --header -I shows them, and perf stat report needs them to split counts by core,
// die, socket or node (perf 6.1 crashes on --per-core of a file without CPU_TOPOLOGY).
#include <filesystem>
#include <optional>
#include <string>

#include "data/perf_data_writer.h"

namespace vperf::data {

// CPU_TOPOLOGY: the distinct package and core sibling lists of the online CPUs (first seen
// first), each CPU's core and socket ids up to `nr_cpus_available` (-1 where sysfs has none),
// and on x86-64 and s390x, where the kernel has die_cpus_list, the die lists and ids. `arch`
// is uname's machine. nullopt when no online CPU's topology can be read.
std::optional<RawFeature> cpu_topology_feature(const std::filesystem::path& sysfs_system, uint32_t nr_cpus_available,
                                               const std::string& arch);

// NUMA_TOPOLOGY: each online node's id, MemTotal and MemFree (kB, its meminfo) and CPU list.
// nullopt without /sys/devices/system/node (a kernel without NUMA).
std::optional<RawFeature> numa_topology_feature(const std::filesystem::path& sysfs_system);

}  // namespace vperf::data
