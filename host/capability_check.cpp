#include "host/capability_check.h"

#include <array>

#include "core/strings.h"
#include "host/arm_verdicts.h"
#include "host/verdicts.h"
#include "msr/msr_register.h"

namespace vperf::host {

namespace {

// The MSRs a turbo measurement needs: MPERF/APERF for the ratio, PLATFORM_INFO for the base.
constexpr std::array kProbedMsrs{msr::address::kMperf, msr::address::kAperf, msr::address::kPlatformInfo};
constexpr int kMsrProbeCpu = 0;

MsrProbe probe_msr(const msr::MsrReader& reader, uint32_t address, const HostPaths& paths) {
  MsrProbe p;
  p.address = address;
  const msr::MsrRegister* reg = msr::find_register(address);
  p.name = reg ? std::string(reg->name) : hex(address);
  auto value = reader.read(kMsrProbeCpu, address);
  if (value) {
    p.value = *value;
  } else {
    p.errno_value = value.error().errno_value;
    p.error = value.error().describe();
    p.hint = msr::msr_error_hint(p.errno_value, paths.proc / "modules");
  }
  return p;
}

// What a libpfm4 PMU name stands for, so that it can be held against the live probes.
enum class LibpfmPmuRole { PerfEventsItself, Core, Uncore, Power };

struct LibpfmNameRule {
  std::string_view fragment;
  LibpfmPmuRole role;
};

// libpfm4 names: "perf", "perf_raw" (perf_events' own tables), "ivb", "spr", "amd64_fam19h_zen3"
// (core), "*_unc_*", "amd64_fam19h_zen3_l3" (uncore), "rapl" / "intel_rapl" (power).
constexpr std::array kLibpfmNameRules{
    LibpfmNameRule{"perf", LibpfmPmuRole::PerfEventsItself},  // exact match only, see below
    LibpfmNameRule{"unc", LibpfmPmuRole::Uncore},
    LibpfmNameRule{"_l3", LibpfmPmuRole::Uncore},
    LibpfmNameRule{"_df", LibpfmPmuRole::Uncore},
    LibpfmNameRule{"rapl", LibpfmPmuRole::Power},
};

LibpfmPmuRole classify_libpfm_pmu(std::string_view name) {
  if (name == "perf" || name == "perf_raw") return LibpfmPmuRole::PerfEventsItself;
  for (const auto& rule : kLibpfmNameRules)
    if (rule.role != LibpfmPmuRole::PerfEventsItself && name.find(rule.fragment) != std::string_view::npos)
      return rule.role;
  return LibpfmPmuRole::Core;
}

std::string hardware_open_summary(const LiveProbes& live) {
  const PerfEventProbe* cycles = live.perf.find("cycles");
  if (!cycles) return "cycles was not probed";
  if (cycles->outcome.opened) return "perf_event_open(cycles) works";
  return "perf_event_open of cycles failed with " + errno_text(cycles->outcome.errno_value) +
         (live.perf.any_hardware_opened() ? "" : ", and so did every other hardware event");
}

std::vector<std::string> pmus_of_kind(const LiveProbes& live, PmuKind kind) {
  std::vector<std::string> names;
  for (const auto& p : live.pmus)
    if (p.kind == kind) names.push_back(p.name);
  return names;
}

}  // namespace

const PmuInfo* LiveProbes::find_pmu(std::string_view name) const {
  for (const auto& p : pmus)
    if (p.name == name) return &p;
  return nullptr;
}

const PmuInfo* LiveProbes::core_pmu() const {
  for (const auto& p : pmus)
    if (p.kind == PmuKind::Core && counts_cpu_cycles(p.name)) return &p;
  return nullptr;
}

const MsrProbe* LiveProbes::find_msr(uint32_t address) const {
  for (const auto& m : msrs)
    if (m.address == address) return &m;
  return nullptr;
}

const Verdict* CheckResult::find_verdict(std::string_view name) const {
  for (const auto& v : verdicts)
    if (v.name == name) return &v;
  return nullptr;
}

std::string_view verdict_basis_name(VerdictBasis basis) {
  switch (basis) {
    case VerdictBasis::LiveProbe: return "live probe";
    case VerdictBasis::Cpuid: return "cpuid";
    case VerdictBasis::Architecture: return "architecture";
    case VerdictBasis::Unknown: return "unknown";
  }
  return "unknown";
}

LiveProbes run_live_probes(const LiveProbeDeps& deps) {
  LiveProbes live;
  live.privileged = deps.privileged;
  live.perf = probe_perf(deps.opener);
  live.pmus = probe_pmus(deps.paths.pmu_root);
  if (deps.probe_msrs)
    for (uint32_t address : kProbedMsrs) live.msrs.push_back(probe_msr(deps.msr_reader, address, deps.paths));
  live.kernel = probe_kernel_settings(deps.paths);
  live.kvm.path = deps.kvm.path();
  auto version = deps.kvm.api_version();
  if (version) {
    live.kvm.api_version = *version;
  } else {
    live.kvm.errno_value = version.error().errno_value;
    live.kvm.error = version.error().describe();
  }
  return live;
}

std::vector<Disagreement> find_disagreements(const CpuidReport& cpuid, const LiveProbes& live,
                                             const std::vector<std::string>& libpfm_present_pmus) {
  std::vector<Disagreement> out;
  const bool hardware_works = live.perf.any_hardware_opened();

  for (const std::string& name : libpfm_present_pmus) {
    const std::string claim = "PMU '" + name + "' is present";
    switch (classify_libpfm_pmu(name)) {
      case LibpfmPmuRole::PerfEventsItself:
        break;  // perf_events' generic tables: present wherever perf_event_open exists
      case LibpfmPmuRole::Core:
        if (!hardware_works) out.push_back({"libpfm4", claim + " (core PMU, from CPU family/model)", hardware_open_summary(live)});
        break;
      case LibpfmPmuRole::Uncore:
        if (pmus_of_kind(live, PmuKind::Uncore).empty())
          out.push_back({"libpfm4", claim + " (uncore PMU)", "sysfs has no uncore PMU: the kernel found no uncore hardware"});
        break;
      case LibpfmPmuRole::Power:
        if (!live.find_pmu("power"))
          out.push_back({"libpfm4", claim + " (RAPL)", "sysfs has no power PMU"});
        break;
    }
  }

  if (cpuid.amd) {
    if ((cpuid.amd->perf_ctr_ext_core || cpuid.amd->perfmon_v2) && !hardware_works)
      out.push_back({"CPUID", "AMD PerfCtrExtCore/PerfMonV2 advertise " + std::to_string(cpuid.amd->core_counters()) +
                                  " core counters",
                     hardware_open_summary(live)});
  } else if (cpuid.arch.version >= 1 && cpuid.arch.gp_counters > 0 && !hardware_works) {
    out.push_back({"CPUID leaf 0xA",
                   "version " + std::to_string(cpuid.arch.version) + " with " + std::to_string(cpuid.arch.gp_counters) +
                       " GP counters",
                   hardware_open_summary(live)});
  } else if (cpuid.cpu.is_intel() && cpuid.arch.version == 0 && hardware_works) {
    out.push_back({"CPUID leaf 0xA", "no architectural PMU (version 0)",
                   "perf_event_open of hardware events works anyway (a model-specific or paravirtual PMU driver)"});
  }

  if (const PmuInfo* core = live.core_pmu()) {
    if (auto it = core->caps.find("max_precise"); it != core->caps.end()) {
      auto claimed = parse_u64(std::string(trim(it->second)));
      const int probed = live.perf.max_precise();
      if (claimed && static_cast<int>(*claimed) != probed)
        out.push_back({"sysfs caps", core->name + "/caps/max_precise = " + it->second,
                       "precise_ip up to " + std::to_string(probed) + " opened on cycles"});
    }
  }
  return out;
}

CheckResult evaluate_check(CheckInputs inputs) {
  CheckResult result;
  result.cpuid = std::move(inputs.cpuid);
  result.arm = std::move(inputs.arm);
  result.cpuid_from_dump = inputs.cpuid_from_dump;
  result.live = std::move(inputs.live);
  result.libpfm_present_pmus = std::move(inputs.libpfm_present_pmus);
  // libpfm4 describes this machine; held against a dump of another machine it means nothing.
  if (result.live)
    result.disagreements = find_disagreements(result.cpuid, *result.live, result.libpfm_present_pmus);
  if (result.arm && result.live)
    result.verdicts = decide_arm_verdicts(*result.arm, *result.live);
  else
    result.verdicts = decide_verdicts(result.cpuid, result.live ? &*result.live : nullptr);
  return result;
}

}  // namespace vperf::host
