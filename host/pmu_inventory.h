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
std::vector<PmuInfo> probe_pmus(const std::filesystem::path& root);

}  // namespace vperf::host
