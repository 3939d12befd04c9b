#include "host/pmu_inventory.h"

#include <array>

#include "events/sysfs_pmu.h"

namespace vperf::host {

namespace {

struct PmuNameRule {
  std::string_view pattern;
  bool prefix;  // false: the whole name must match
  PmuKind kind;
};

// Names the kernel's drivers register (arch/x86/events/*, drivers/perf/* for arm64: the CPU
// PMU is "armv8_pmuv3" from a generic DT node, "armv8_pmuv3_0" from ACPI, "armv8_cortex_a72" or
// "armv8_neoverse_n1"-style names from a specific DT node; SPE is "arm_spe_0"). First match wins.
constexpr std::array kPmuNameRules{
    PmuNameRule{"cpu", false, PmuKind::Core},        PmuNameRule{"cpu_core", false, PmuKind::Core},
    PmuNameRule{"cpu_atom", false, PmuKind::Core},   PmuNameRule{"cpu_lowpower", false, PmuKind::Core},
    PmuNameRule{"ibs_op", false, PmuKind::Core},     PmuNameRule{"ibs_fetch", false, PmuKind::Core},
    PmuNameRule{"uncore_", true, PmuKind::Uncore},   PmuNameRule{"amd_df", true, PmuKind::Uncore},
    PmuNameRule{"amd_l3", true, PmuKind::Uncore},    PmuNameRule{"amd_umc", true, PmuKind::Uncore},
    PmuNameRule{"amd_iommu", true, PmuKind::Uncore}, PmuNameRule{"cstate_", true, PmuKind::Msr},
    PmuNameRule{"msr", false, PmuKind::Msr},         PmuNameRule{"power", false, PmuKind::Power},
    PmuNameRule{"power_", true, PmuKind::Power},     PmuNameRule{"software", false, PmuKind::Software},
    PmuNameRule{"breakpoint", false, PmuKind::Software}, PmuNameRule{"tracepoint", false, PmuKind::Tracing},
    PmuNameRule{"kprobe", false, PmuKind::Tracing},  PmuNameRule{"uprobe", false, PmuKind::Tracing},
    PmuNameRule{"armv8_", true, PmuKind::Core},      PmuNameRule{"armv7_", true, PmuKind::Core},
    PmuNameRule{"arm_spe_", true, PmuKind::Core},    PmuNameRule{"arm_cmn", true, PmuKind::Uncore},
    PmuNameRule{"arm_dsu", true, PmuKind::Uncore},   PmuNameRule{"arm_ccn", true, PmuKind::Uncore},
    PmuNameRule{"arm_cspmu", true, PmuKind::Uncore}, PmuNameRule{"smmuv3_pmcg", true, PmuKind::Uncore},
    PmuNameRule{"hisi_", true, PmuKind::Uncore},     PmuNameRule{"nvidia_", true, PmuKind::Uncore},
};

}  // namespace

std::string_view pmu_kind_name(PmuKind kind) {
  switch (kind) {
    case PmuKind::Core: return "core";
    case PmuKind::Uncore: return "uncore";
    case PmuKind::Msr: return "msr";
    case PmuKind::Power: return "power";
    case PmuKind::Software: return "software";
    case PmuKind::Tracing: return "tracing";
    case PmuKind::Other: return "other";
  }
  return "other";
}

bool counts_cpu_cycles(std::string_view name) {
  return name == "cpu" || name == "cpu_core" || name.starts_with("armv8_") ||
         name.starts_with("armv7_");
}

bool is_arm_spe(std::string_view name) { return name.starts_with("arm_spe_"); }

PmuKind classify_pmu(std::string_view name) {
  for (const auto& rule : kPmuNameRules)
    if (rule.prefix ? name.starts_with(rule.pattern) : name == rule.pattern) return rule.kind;
  return PmuKind::Other;
}

std::vector<PmuInfo> probe_pmus(const std::filesystem::path& root) {
  std::vector<PmuInfo> out;
  for (const events::SysfsPmu& pmu : events::load_sysfs_pmus(root)) {
    PmuInfo info;
    info.name = pmu.name;
    info.kind = classify_pmu(pmu.name);
    info.type = pmu.type;
    for (const auto& e : pmu.events) info.events.push_back(e.name);
    info.caps = pmu.caps;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace vperf::host
