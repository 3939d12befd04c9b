#pragma once
// Where each online CPU sits: package (socket), die and core, as sysfs describes it in
// <root>/cpuN/topology/{physical_package_id,die_id,core_id}, and its NUMA node (<root>/cpuN/nodeM).
// perf stat's --per-socket, --per-die, --per-core and --per-node group CPUs by these ids (perf's
// aggr_cpu_id).
//
// Kernels before 5.2 have no die_id; perf then puts every CPU on die 0, and so does this.
#include <filesystem>
#include <vector>

#include "core/error.h"

namespace vperf {

struct CpuPlace {
  int cpu = -1;
  int socket = -1;  // physical_package_id
  int die = -1;     // die_id (0 when the kernel has none)
  int core = -1;    // core_id: unique within its socket only, not across the machine
  int node = -1;    // the NUMA node: cpuN/nodeM in sysfs (-1 without NUMA, as perf has it)
  bool operator==(const CpuPlace&) const = default;
};

class CpuTopology {
 public:
  CpuTopology() = default;
  // Places in any order; kept sorted by CPU number. A later duplicate CPU replaces an earlier one.
  explicit CpuTopology(std::vector<CpuPlace> places);

  // The CPU's place, or nullptr when it is not (online) in this topology.
  const CpuPlace* find(int cpu) const;
  // The CPU's place; socket/die/core are -1 when it is unknown.
  CpuPlace place_of(int cpu) const;
  const std::vector<CpuPlace>& places() const { return places_; }
  bool empty() const { return places_.empty(); }

 private:
  std::vector<CpuPlace> places_;  // sorted by cpu, unique
};

// Reads the topology of the CPUs listed in <sysfs_cpu_root>/online. The error names the file
// that could not be read or parsed.
Result<CpuTopology> load_cpu_topology(const std::filesystem::path& sysfs_cpu_root = "/sys/devices/system/cpu");

}  // namespace vperf
