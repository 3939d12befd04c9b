#pragma once
// The kernel PMUs in sysfs, grouped by what they are for, with their event aliases and caps.
// The kernel registers a PMU only when a driver found its hardware, so unlike libpfm4's
// family/model tables this list is evidence.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace vperf::host {

enum class PmuKind { Core, Uncore, Msr, Power, Software, Tracing, Other };
std::string_view pmu_kind_name(PmuKind kind);

struct PmuInfo {
  std::string name;
  PmuKind kind = PmuKind::Other;
  uint32_t type = 0;
  std::vector<std::string> events;  // alias names from events/
  std::map<std::string, std::string> caps;  // caps/* (core PMUs: pmu_name, max_precise, branches)
};

PmuKind classify_pmu(std::string_view name);
// The core PMU whose facts check reports: x86's cpu (cpu_core on a hybrid CPU), arm64's armv8_*.
bool counts_cpu_cycles(std::string_view name);
// Arm's Statistical Profiling Extension (arm_spe_0): arm64's precise sampling, PEBS's counterpart.
bool is_arm_spe(std::string_view name);
std::vector<PmuInfo> probe_pmus(const std::filesystem::path& root);

}  // namespace vperf::host
