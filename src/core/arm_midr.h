#pragma once
// MIDR_EL1, the arm64 register that names a core (implementer, part, variant, revision), read
// the ways Linux offers it to user space: sysfs's cpuN/regs/identification/midr_el1, or the
// fields /proc/cpuinfo prints. `vperf check` names the cores from it; the PMC catalog picks
// perf's arm64 event tables by it.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vperf {

// MIDR_EL1 (Arm ARM D17.2.100): implementer [31:24], variant [23:20], architecture [19:16],
// part number [15:4], revision [3:0].
struct Midr {
  uint32_t value = 0;
  unsigned implementer() const { return value >> 24; }
  unsigned variant() const { return (value >> 20) & 0xfu; }
  unsigned architecture() const { return (value >> 16) & 0xfu; }
  unsigned part() const { return (value >> 4) & 0xfffu; }
  unsigned revision() const { return value & 0xfu; }
};

// The MIDRs of /proc/cpuinfo's "CPU implementer/variant/architecture/part/revision" lines,
// by processor number; empty when the text has none.
std::vector<std::pair<unsigned, Midr>> parse_cpuinfo_midrs(std::string_view cpuinfo);

struct MidrReading {
  std::vector<std::pair<unsigned, Midr>> cpus;  // by CPU number, ascending; empty when none
  std::string source;  // the file or pattern read, or why nothing could be
};

// Every CPU's MIDR: from <sys>/devices/system/cpu/cpu*/regs/identification/midr_el1, else from
// <proc>/cpuinfo.
MidrReading read_midrs(const std::filesystem::path& sys, const std::filesystem::path& proc);

}  // namespace vperf
