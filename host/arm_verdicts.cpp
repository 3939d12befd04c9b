#include "host/arm_verdicts.h"

#include <algorithm>
#include <array>
#include <cerrno>

#include "core/strings.h"
#include "host/verdicts.h"

namespace vperf::host {

namespace {

struct ArmPmuKnob {
  std::string_view hypervisor_prefix;  // ArmPlatform::hypervisor starts with it
  std::string_view fix;
};

// Per platform, the knob that gives a guest the PMU. EC2's rule is its own: Graviton instances
// expose the full PMU only at whole-socket sizes and .metal, smaller sizes a basic set.
constexpr std::array kArmPmuKnobs{
    ArmPmuKnob{"AWS Nitro", "on EC2, Graviton exposes the full PMU only on whole-socket sizes and .metal (e.g. "
                            "c7g.16xlarge, c7g.metal); smaller sizes give a basic event set: pick one of those sizes"},
    ArmPmuKnob{"QEMU TCG", "QEMU TCG emulates PMUv3 with -cpu max (drop pmu=off); it counts instructions only with "
                           "-icount shift=N"},
    ArmPmuKnob{"KVM", "give the guest a virtual PMU: QEMU -cpu host,pmu=on, or libvirt <cpu mode='host-passthrough'/> "
                      "with <pmu state='on'/> (the host needs its own PMU driver, armv8_pmuv3)"},
    ArmPmuKnob{"Xen", "Xen on Arm gives a domain the PMU only with vpmu = 1 in its xl.cfg (Xen 4.18 and newer)"},
    ArmPmuKnob{"Hyper-V", "Hyper-V decides per VM size whether the guest gets the PMU: pick a size that exposes it, "
                          "or bare metal"},
};

constexpr std::string_view kArmGenericGuestFix =
    "run on bare metal, or ask the hypervisor for a virtual PMU (KVM: -cpu host,pmu=on, libvirt <pmu state='on'/>; "
    "EC2: a whole-socket Graviton size or .metal)";

constexpr std::string_view kArmNoDriverFix =
    "the kernel registered no arm64 PMU: it needs CONFIG_ARM_PMU (CONFIG_ARM_PMU_ACPI on ACPI machines) and "
    "firmware that describes the PMU (a device-tree arm,armv8-pmuv3 node or the ACPI MADT's GICC PMU interrupt)";

const PmuInfo* arm_cpu_pmu(const LiveProbes& live) { return live.core_pmu(); }

const PmuInfo* arm_spe_pmu(const LiveProbes& live) {
  for (const auto& p : live.pmus)
    if (is_arm_spe(p.name)) return &p;
  return nullptr;
}

bool lists_event(const PmuInfo* pmu, std::string_view name) {
  return pmu && std::find(pmu->events.begin(), pmu->events.end(), name) != pmu->events.end();
}

std::string counters_text(const LiveProbes& live) {
  const PerfProbeReport& p = live.perf;
  if (!p.group_capacity) return "";
  if (p.group_capacity_limited) return std::to_string(*p.group_capacity) + " or more counters";
  return std::to_string(*p.group_capacity) + " counters";
}

std::string arm_summary(const ArmCpuReport& arm, const LiveProbes& live) {
  std::string s = "MIDR: " + arm.summary();
  if (const PmuInfo* pmu = arm_cpu_pmu(live)) {
    s += "; PMU " + pmu->name;
    if (std::string counters = counters_text(live); !counters.empty()) s += " (" + counters + ")";
  } else {
    s += "; no arm64 PMU in sysfs";
  }
  const ArmPlatform& p = arm.platform;
  if (!p.hypervisor.empty()) s += "; hypervisor " + p.hypervisor;
  else if (p.kind == ArmPlatformKind::BareMetal) s += "; bare metal";
  return s;
}

Verdict decide_arm_ipc(const ArmCpuReport& arm, const LiveProbes& live) {
  Verdict v = counting_verdict(live, {"cycles", "instructions"}, "cycles and instructions", arm_summary(arm, live),
                               arm_pmu_fix(arm));
  const PerfEventProbe* cycles = live.perf.find("cycles");
  const PerfEventProbe* instructions = live.perf.find("instructions");
  // QEMU TCG counts cycles from its virtual clock always, instructions only under -icount.
  if (!v.available && cycles && cycles->counted() && instructions && !instructions->outcome.opened &&
      arm.platform.hypervisor == "QEMU TCG")
    v.fix = "boot QEMU with -icount shift=N: TCG's PMU counts instructions (inst_retired) only then";
  return v;
}

Verdict decide_arm_turbo(const ArmCpuReport&, const LiveProbes&) {
  Verdict v;
  v.basis = VerdictBasis::Architecture;
  v.available = false;
  v.reason = "arm64 has no APERF/MPERF; its Activity Monitors (AMU: core and constant-frequency cycles) are read "
             "by the kernel only, for frequency invariance";
  v.fix = "for the average frequency while running, divide cycles by task-clock (vperf stat prints it as GHz beside "
          "cycles)";
  return v;
}

Verdict decide_arm_llc(const ArmCpuReport& arm, const LiveProbes& live) {
  Verdict v;
  const PmuInfo* pmu = arm_cpu_pmu(live);
  const PerfEventProbe* cycles = live.perf.find("cycles");
  const bool counting = cycles && cycles->counted();
  const bool listed = lists_event(pmu, "ll_cache_rd") && lists_event(pmu, "ll_cache_miss_rd");
  v.available = counting && listed;
  if (!pmu) {
    v.reason = "no arm64 PMU in sysfs";
    v.fix = arm_pmu_fix(arm);
    return v;
  }
  std::vector<std::string> cache_events;
  for (const auto& e : pmu->events)
    if (e.find("cache") != std::string::npos) cache_events.push_back(e);
  v.reason = pmu->name + " lists " + (cache_events.empty() ? std::string("no cache events") : join(cache_events, " ")) +
             " (the kernel lists the common events PMCEID says the core implements)";
  if (v.available) {
    v.reason = "ll_cache_rd and ll_cache_miss_rd count (-e ll_cache_rd,ll_cache_miss_rd): " + v.reason;
  } else if (!counting) {
    v.reason = "hardware events do not count (cycles " + (cycles ? outcome_text(cycles->outcome) : "not probed") +
               "); " + v.reason;
    v.fix = arm_pmu_fix(arm);
  } else if (lists_event(pmu, "l2d_cache_refill")) {
    v.fix = "this core (or its virtual PMU) has no LL_CACHE_RD/LL_CACHE_MISS_RD; count the L2 with "
            "-e l2d_cache,l2d_cache_refill";
  } else if (arm.platform.hypervisor == "QEMU TCG") {
    v.fix = "QEMU TCG's emulated PMU implements no cache events (only cycles, instructions and stalls): count "
            "caches on real hardware, or in a KVM guest with -cpu host,pmu=on";
  } else {
    v.fix = "this PMU implements no cache events: on a VM, the hypervisor filters them (KVM passes the host's "
            "events with -cpu host,pmu=on); on bare metal the core lacks them";
  }
  return v;
}

Verdict decide_arm_precise(const ArmCpuReport& arm, const LiveProbes& live) {
  Verdict v;
  const PmuInfo* spe = arm_spe_pmu(live);
  v.available = spe != nullptr;
  if (spe) {
    v.reason = "Statistical Profiling Extension: " + spe->name + " in sysfs (perf record -e " + spe->name + "//)";
    return v;
  }
  v.reason = "no arm_spe PMU in sysfs: arm64's precise sampling is SPE, which guests do not get (KVM does not "
             "virtualize it) and bare metal has only with the arm_spe_pmu driver";
  v.fix = arm.is_guest() ? "SPE needs bare metal (EC2: a Graviton .metal instance); in this VM sample on cycles, "
                           "which skids"
                         : "modprobe arm_spe_pmu (CONFIG_ARM_SPE_PMU); the driver also needs the kernel booted "
                           "with kpti=off, and a core with SPE (Neoverse N1/V1/N2/V2 have it)";
  return v;
}

Verdict decide_arm_guest_profiling(const ArmCpuReport& arm, const LiveProbes& live) {
  Verdict v = guest_profiling_evidence(live);
  const KvmProbe& kvm = live.kvm;
  if (v.available) return v;
  if (kvm_runs_guests(kvm)) {
    v.reason += ". Guests can run here, but their samples would have no hardware clock";
    v.fix = arm_pmu_fix(arm);
  } else if (kvm.errno_value == ENOENT) {
    v.fix = arm.is_guest() ? "an arm64 guest runs KVM only where the hypervisor offers nested virtualization "
                             "(rare in clouds): use a .metal instance"
                           : "KVM needs the kernel booted at EL2 (dmesg: 'kvm [1]: Hyp mode initialized' or VHE)";
  } else if (permission_errno(kvm.errno_value)) {
    v.fix = "run as root or join the kvm group";
  } else {
    v.fix = arm_pmu_fix(arm);
  }
  return v;
}

struct ArmVerdictRule {
  std::string_view name;
  std::string_view question;
  Verdict (*decide)(const ArmCpuReport& arm, const LiveProbes& live);
};

template <Verdict (*decide)(const LiveProbes*)>
Verdict kernel_rule(const ArmCpuReport&, const LiveProbes& live) {
  return decide(&live);
}

Verdict decide_arm_sampling(const ArmCpuReport& arm, const LiveProbes& live) {
  return decide_sampling(&live, arm_pmu_fix(arm));
}

constexpr std::array kArmRules{
    ArmVerdictRule{"ipc", kIpcQuestion, decide_arm_ipc},
    ArmVerdictRule{"turbo", kTurboQuestion, decide_arm_turbo},
    ArmVerdictRule{"llc", kLlcQuestion, decide_arm_llc},
    ArmVerdictRule{"precise", "Can I sample precisely (SPE on arm64)?", decide_arm_precise},
    ArmVerdictRule{"sampling", kSamplingQuestion, decide_arm_sampling},
    ArmVerdictRule{"kernel_symbols", kKernelSymbolsQuestion, kernel_rule<decide_kernel_symbols>},
    ArmVerdictRule{"tracepoints", kTracepointsQuestion, kernel_rule<decide_tracepoints>},
    ArmVerdictRule{"uprobes", kUprobesQuestion, kernel_rule<decide_uprobes>},
    ArmVerdictRule{"kprobes", kKprobesQuestion, kernel_rule<decide_kprobes>},
    ArmVerdictRule{"guest_profiling", kGuestProfilingQuestion, decide_arm_guest_profiling},
};

}  // namespace

std::string arm_pmu_fix(const ArmCpuReport& arm) {
  const ArmPlatform& p = arm.platform;
  for (const auto& knob : kArmPmuKnobs)
    if (p.hypervisor.starts_with(knob.hypervisor_prefix)) return std::string(knob.fix);
  if (p.kind == ArmPlatformKind::BareMetal) return std::string(kArmNoDriverFix);
  if (p.kind == ArmPlatformKind::VirtualMachine) return std::string(kArmGenericGuestFix);
  return std::string(kArmNoDriverFix) + "; in a VM: " + std::string(kArmGenericGuestFix);
}

std::vector<Verdict> decide_arm_verdicts(const ArmCpuReport& arm, const LiveProbes& live) {
  std::vector<Verdict> out;
  for (const ArmVerdictRule& rule : kArmRules) {
    Verdict v = rule.decide(arm, live);
    v.name = std::string(rule.name);
    v.question = std::string(rule.question);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace vperf::host
