#include "host/verdicts.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/strings.h"
#include "msr/msr_register.h"

namespace vperf::host {

namespace {

struct GuestPmuKnob {
  std::string_view hypervisor_vendor;  // HypervisorSignature::vendor
  std::string_view fix;
};

constexpr std::string_view kKvmPmuFix =
    "give the guest a virtual PMU: libvirt <cpu mode='host-passthrough'/> with <pmu state='on'/>, or QEMU "
    "-cpu host,pmu=on";

constexpr std::array kGuestPmuKnobs{
    GuestPmuKnob{"KVM", kKvmPmuFix},
    GuestPmuKnob{"KVM (Hyper-V emulation)", kKvmPmuFix},
    GuestPmuKnob{"Xen", "boot Xen with vpmu=arch (or vpmu=on) so that guests get a virtual PMU"},
    GuestPmuKnob{"VMware", "enable \"Virtualize CPU performance counters\" in the VM's CPU settings "
                           "(vpmc.enable = \"TRUE\" in the .vmx)"},
    GuestPmuKnob{"Hyper-V", "on the Hyper-V host: Set-VMProcessor -VMName NAME -Perfmon @(\"pmu\") "
                            "(Windows Server 2022 / Windows 11 hosts and newer)"},
    GuestPmuKnob{"QEMU TCG", "TCG emulation has no PMU; run the guest under KVM with -cpu host,pmu=on"},
};

constexpr std::string_view kGenericGuestFix =
    "run on bare metal, or ask the hypervisor for a virtual PMU (libvirt <cpu mode='host-passthrough'/> with "
    "<pmu state='on'/>, QEMU -cpu host,pmu=on, Xen vpmu=arch, VMware \"virtualize CPU performance counters\")";

const char* kTracefsMount = "mount -t tracefs nodev /sys/kernel/tracing";

std::string hypervisor_vendor(const CpuidReport& cpuid) {
  const HypervisorSignature* hv = cpuid.hypervisor.primary_signature();
  if (!hv) return "";
  return hv->vendor.empty() ? "'" + hv->signature + "'" : hv->vendor;
}

std::string cpuid_pmu_summary(const CpuidReport& cpuid) {
  std::string s;
  if (cpuid.amd) {
    s = "CPUID: AMD PerfCtrExtCore=" + std::to_string(cpuid.amd->perf_ctr_ext_core) +
        ", PerfMonV2=" + std::to_string(cpuid.amd->perfmon_v2);
  } else {
    s = "CPUID leaf 0xA: version " + std::to_string(cpuid.arch.version) + ", " +
        std::to_string(cpuid.arch.gp_counters) + " GP counters, " + std::to_string(cpuid.arch.fixed_counters) +
        " fixed";
  }
  std::string hv = hypervisor_vendor(cpuid);
  if (!hv.empty()) s += "; hypervisor " + hv;
  return s;
}


// Fix for a hardware event that did not open: permissions, or no PMU at all.
std::string fix_for_open_failure(std::string_view pmu_fix, const PerfOpenOutcome& o) {
  if (permission_errno(o.errno_value)) return std::string(kParanoidFix);
  if (o.opened && !o.count.value_or(0)) return "the counter opens but does not count: " + std::string(pmu_fix);
  return std::string(pmu_fix);
}

}  // namespace

Verdict counting_verdict(const LiveProbes& live, std::initializer_list<const char*> names, std::string_view what,
                         std::string_view cpu_summary, std::string_view pmu_fix) {
  Verdict v;
  v.basis = VerdictBasis::LiveProbe;
  v.available = true;
  std::vector<std::string> parts;
  const PerfOpenOutcome* first_failure = nullptr;
  for (const char* name : names) {
    const PerfEventProbe* p = live.perf.find(name);
    if (!p) continue;
    parts.push_back(std::string(name) + " " + outcome_text(p->outcome));
    if (!p->counted()) {
      v.available = false;
      if (!first_failure) first_failure = &p->outcome;
    }
  }
  v.reason = join(parts, "; ");
  if (v.available) {
    v.reason = std::string(what) + " count in user space (" + v.reason + ")";
  } else {
    v.reason = "perf_event_open: " + v.reason + ". " + std::string(cpu_summary);
    if (live.perf.software_control.opened && !permission_errno(first_failure->errno_value))
      v.reason += ". Software events work, so the hardware PMU is missing, not permission";
    v.fix = fix_for_open_failure(pmu_fix, *first_failure);
  }
  return v;
}

namespace {

Verdict counting_verdict(const CpuidReport& cpuid, const LiveProbes& live, std::initializer_list<const char*> names,
                         const char* what) {
  return counting_verdict(live, names, what, cpuid_pmu_summary(cpuid), guest_pmu_fix(cpuid));
}

bool event_unavailable(const ArchPerfmon& a, std::string_view name) {
  for (const auto& e : a.unavailable_events)
    if (e == name) return true;
  return false;
}

// CPUID-only prediction for the counting verdicts of a dump.
Verdict predicted_counting_verdict(const CpuidReport& cpuid, std::initializer_list<std::string_view> arch_events) {
  Verdict v;
  v.basis = VerdictBasis::Cpuid;
  if (cpuid.amd) {
    // AMD has no leaf 0xA: bare metal always has the legacy counters, but a guest's CPUID
    // cannot say whether the VMM backs them (Firecracker T2A advertises PerfCtrExtCore and
    // backs nothing), so a guest's verdict is unknown rather than a guess.
    const bool guest = cpuid.cpu.hypervisor_bit;
    v.available = !guest;
    v.reason = "predicted from CPUID: AMD, " + std::to_string(cpuid.amd->core_counters()) + " core counters (" +
               cpuid_pmu_summary(cpuid) + ")";
    if (guest) {
      v.basis = VerdictBasis::Unknown;
      v.reason += "; an AMD guest's CPUID does not say whether the hypervisor backs the counters "
                  "(Firecracker T2A advertises PerfCtrExtCore without them): confirm with a live vperf check";
    }
  } else {
    const ArchPerfmon& a = cpuid.arch;
    v.available = a.version >= 1 && a.gp_counters >= 1;
    std::vector<std::string> missing;
    for (std::string_view e : arch_events)
      if (event_unavailable(a, e)) missing.emplace_back(e);
    if (!missing.empty()) v.available = false;
    v.reason = "predicted from " + cpuid_pmu_summary(cpuid);
    if (!missing.empty()) v.reason += "; EBX marks unavailable: " + join(missing, ", ");
  }
  if (!v.available) v.fix = guest_pmu_fix(cpuid);
  return v;
}

Verdict unknown_from_dump(std::string what) {
  Verdict v;
  v.basis = VerdictBasis::Unknown;
  v.available = false;
  v.reason = "not predictable from a CPUID dump: " + what + " depends on the kernel of the dumped machine";
  v.fix = "run vperf check on that machine";
  return v;
}

Verdict decide_ipc(const CpuidReport& cpuid, const LiveProbes* live) {
  if (!live) return predicted_counting_verdict(cpuid, {"core-cycles", "instructions"});
  return counting_verdict(cpuid, *live, {"cycles", "instructions"}, "cycles and instructions");
}

Verdict decide_llc(const CpuidReport& cpuid, const LiveProbes* live) {
  if (!live) return predicted_counting_verdict(cpuid, {"llc-references", "llc-misses"});
  return counting_verdict(cpuid, *live, {"cache-references", "cache-misses"}, "cache-references and cache-misses");
}

std::string msr_probe_text(const MsrProbe& m) {
  if (m.value) return m.name + " readable";
  return m.name + ": " + errno_text(m.errno_value);
}

Verdict decide_turbo(const CpuidReport& cpuid, const LiveProbes* live) {
  Verdict v;
  const std::string cpuid_bit = "CPUID.6.ECX[0] (APERF/MPERF) = " + std::to_string(cpuid.cpu.aperf_mperf);
  if (!live) {
    v.basis = VerdictBasis::Cpuid;
    v.available = cpuid.cpu.aperf_mperf;
    v.reason = "predicted from " + cpuid_bit;
    if (!v.available)
      v.fix = cpuid.cpu.hypervisor_bit ? "the hypervisor hides APERF/MPERF; measure turbo on the host"
                                       : "this CPU has no APERF/MPERF";
    return v;
  }
  v.basis = VerdictBasis::LiveProbe;
  const MsrProbe* mperf = live->find_msr(msr::address::kMperf);
  const MsrProbe* aperf = live->find_msr(msr::address::kAperf);
  const bool msr_device = mperf && aperf && mperf->value && aperf->value;
  const PmuInfo* msr_pmu = live->find_pmu("msr");
  auto has_event = [&](std::string_view e) {
    if (!msr_pmu) return false;
    for (const auto& name : msr_pmu->events)
      if (name == e) return true;
    return false;
  };
  const bool msr_pmu_events = has_event("aperf") && has_event("mperf");
  v.available = msr_device || msr_pmu_events;
  std::vector<std::string> parts;
  if (mperf) parts.push_back(msr_probe_text(*mperf));
  if (aperf) parts.push_back(msr_probe_text(*aperf));
  parts.push_back(msr_pmu ? "msr PMU events: " + (msr_pmu->events.empty() ? std::string("none")
                                                                          : join(msr_pmu->events, ", ")) +
                                (msr_pmu_events ? "" : " (no aperf/mperf)")
                          : "no msr PMU in sysfs");
  parts.push_back(cpuid_bit);
  v.reason = join(parts, "; ");
  if (v.available) {
    v.reason = "APERF/MPERF readable (" + v.reason + ")";
    return v;
  }
  if (!cpuid.cpu.aperf_mperf) {
    v.fix = cpuid.cpu.hypervisor_bit
                ? "the hypervisor does not pass APERF/MPERF through (CPUID.6.ECX[0]=0); measure turbo on the host"
                : "this CPU has no APERF/MPERF";
  } else if (mperf && !mperf->value) {
    v.fix = mperf->hint.empty() ? mperf->error : mperf->hint;
  }
  return v;
}

Verdict decide_precise(const CpuidReport& cpuid, const LiveProbes* live) {
  Verdict v;
  if (!live) {
    v.basis = VerdictBasis::Cpuid;
    if (cpuid.amd) {
      v.available = cpuid.amd->ibs;
      v.reason = "predicted from CPUID: IBS (0x80000001.ECX[10]) = " + std::to_string(cpuid.amd->ibs);
    } else {
      v.available = cpuid.arch.version >= 1 && cpuid.arch.gp_counters >= 1 && cpuid.cpu.ds && cpuid.cpu.pdcm;
      v.reason = "predicted from CPUID: PEBS needs DS (1.EDX[21]) = " + std::to_string(cpuid.cpu.ds) +
                 " and PDCM (1.ECX[15]) = " + std::to_string(cpuid.cpu.pdcm) + "; " + cpuid_pmu_summary(cpuid);
    }
    if (!v.available) v.fix = guest_pmu_fix(cpuid);
    return v;
  }
  v.basis = VerdictBasis::LiveProbe;
  const int max = live->perf.max_precise();
  v.available = max >= 1;
  v.reason = "cycles sampling with precise_ip " + precise_levels_text(live->perf) + "; branch stack: " +
             (live->perf.branch_stack.opened ? "ok" : errno_text(live->perf.branch_stack.errno_value));
  if (const PmuInfo* core = live->core_pmu())
    if (auto it = core->caps.find("max_precise"); it != core->caps.end())
      v.reason += "; " + core->name + "/caps/max_precise = " + it->second;
  if (v.available) {
    v.reason = "max precise_ip " + std::to_string(max) + " (" + v.reason + ")";
  } else if (max == 0) {
    v.fix = cpuid.cpu.hypervisor_bit ? "the guest PMU has no PEBS/IBS; PEBS in KVM guests needs an Ice Lake or "
                                       "newer host with the guest PMU on (" + guest_pmu_fix(cpuid) + ")"
                                     : "this CPU or kernel has no PEBS/IBS; use non-precise sampling (skid)";
  } else {
    v.fix = permission_errno(live->perf.precise[0].errno_value) ? std::string(kParanoidFix) : guest_pmu_fix(cpuid);
  }
  return v;
}

}  // namespace

Verdict decide_kernel_symbols(const LiveProbes* live) {
  if (!live) return unknown_from_dump("kernel symbol visibility");
  Verdict v;
  const KernelSettings& k = live->kernel;
  const std::string kptr = k.kptr_restrict ? std::to_string(*k.kptr_restrict) : "unreadable";
  const std::string paranoid = k.perf_event_paranoid ? std::to_string(*k.perf_event_paranoid) : "unreadable";
  v.available = k.kallsyms_addresses_visible.value_or(false);
  if (!k.kallsyms_addresses_visible) {
    v.reason = "/proc/kallsyms: " + k.kallsyms_error;
    v.fix = "the kernel needs CONFIG_KALLSYMS; mount /proc";
    return v;
  }
  v.reason = std::string("/proc/kallsyms shows ") + (v.available ? "real addresses" : "only zero addresses") +
             " to this process (kptr_restrict=" + kptr + ", perf_event_paranoid=" + paranoid +
             (live->privileged ? ", running as root" : "") + ")";
  if (!v.available) {
    v.fix = "sysctl kernel.kptr_restrict=0";
    if (!live->privileged) v.fix += ", or run as root (kptr_restrict=1 shows addresses to CAP_SYSLOG)";
  } else if (!live->privileged && k.perf_event_paranoid.value_or(2) > 1) {
    v.reason += "; sampling kernel code needs perf_event_paranoid <= 1";
    v.fix = "sysctl kernel.perf_event_paranoid=1 to sample kernel code as this user";
  }
  return v;
}

namespace {

std::string tracefs_fix(const TracefsState& t, std::string_view missing_feature) {
  if (!t.mount_point) return t.mountable ? kTracefsMount : "the kernel has no tracefs (CONFIG_TRACING)";
  return std::string(missing_feature);
}

std::string tracefs_where(const TracefsState& t) {
  if (t.mount_point) return "tracefs at " + t.mount_point->string();
  return t.mountable ? "tracefs is not mounted (but can be)" : "tracefs is not mounted and not available";
}

}  // namespace

Verdict decide_tracepoints(const LiveProbes* live) {
  if (!live) return unknown_from_dump("tracefs");
  Verdict v;
  const TracefsState& t = live->kernel.tracefs;
  v.available = t.events_dir;
  v.reason = tracefs_where(t) + (t.mount_point ? (t.events_dir ? " has events/" : " has no events/") : "");
  if (!v.available) v.fix = tracefs_fix(t, "the kernel was built without tracepoint events (CONFIG_EVENT_TRACING)");
  return v;
}

namespace {

// uprobes and kprobes: a tracefs control file and a PMU of the same name.
Verdict decide_dynamic_probes(const LiveProbes* live, const std::string& kind, bool TracefsState::*control_file,
                              const char* kernel_fix) {
  if (!live) return unknown_from_dump(kind + " support");
  Verdict v;
  const TracefsState& t = live->kernel.tracefs;
  const std::string file = kind + "_events";
  v.available = t.*control_file;
  v.reason = tracefs_where(t) + (t.mount_point ? (v.available ? " has " : " has no ") + file : std::string());
  v.reason += live->find_pmu(kind) ? "; " + kind + " PMU in sysfs" : "; no " + kind + " PMU in sysfs";
  if (!v.available) v.fix = tracefs_fix(t, kernel_fix);
  return v;
}

}  // namespace

Verdict decide_uprobes(const LiveProbes* live) {
  return decide_dynamic_probes(live, "uprobe", &TracefsState::uprobe_events,
                               "rebuild the kernel with CONFIG_UPROBES=y and CONFIG_UPROBE_EVENTS=y");
}

Verdict decide_kprobes(const LiveProbes* live) {
  return decide_dynamic_probes(live, "kprobe", &TracefsState::kprobe_events,
                               "rebuild the kernel with CONFIG_KPROBES=y and CONFIG_KPROBE_EVENTS=y");
}

namespace {

Verdict decide_guest_profiling(const CpuidReport& cpuid, const LiveProbes* live) {
  if (!live) {
    Verdict v = unknown_from_dump("/dev/kvm");
    v.reason += "; CPUID advertises " + std::string(cpuid.cpu.vmx ? "VMX" : cpuid.cpu.svm ? "SVM" : "no VMX/SVM");
    return v;
  }
  Verdict v = guest_profiling_evidence(*live);
  const KvmProbe& kvm = live->kvm;
  if (v.available) return v;
  if (kvm_runs_guests(kvm)) {
    v.reason += ". Guests can run here, but their samples would have no hardware clock; only software sampling of "
                "vCPU threads works";
    v.fix = guest_pmu_fix(cpuid);
  } else if (kvm.errno_value == ENOENT) {
    v.fix = cpuid.cpu.vmx || cpuid.cpu.svm ? "modprobe kvm_intel (or kvm_amd)"
                                           : "enable VT-x/AMD-V (in a VM: nested virtualization, e.g. libvirt "
                                             "<cpu mode='host-passthrough'/>)";
  } else if (permission_errno(kvm.errno_value)) {
    v.fix = "run as root or join the kvm group";
  } else {
    v.fix = guest_pmu_fix(cpuid);
  }
  return v;
}

// The rules that ask only the kernel, in the table's signature.
template <Verdict (*decide)(const LiveProbes*)>
Verdict kernel_rule(const CpuidReport&, const LiveProbes* live) {
  return decide(live);
}

Verdict decide_x86_sampling(const CpuidReport& cpuid, const LiveProbes* live) {
  return decide_sampling(live, guest_pmu_fix(cpuid));
}

constexpr std::array kRules{
    VerdictRule{"ipc", kIpcQuestion, decide_ipc},
    VerdictRule{"turbo", kTurboQuestion, decide_turbo},
    VerdictRule{"llc", kLlcQuestion, decide_llc},
    VerdictRule{"precise", "Can I sample precisely (PEBS/IBS, precise_ip >= 1)?", decide_precise},
    VerdictRule{"sampling", kSamplingQuestion, decide_x86_sampling},
    VerdictRule{"kernel_symbols", kKernelSymbolsQuestion, kernel_rule<decide_kernel_symbols>},
    VerdictRule{"tracepoints", kTracepointsQuestion, kernel_rule<decide_tracepoints>},
    VerdictRule{"uprobes", kUprobesQuestion, kernel_rule<decide_uprobes>},
    VerdictRule{"kprobes", kKprobesQuestion, kernel_rule<decide_kprobes>},
    VerdictRule{"guest_profiling", kGuestProfilingQuestion, decide_guest_profiling},
};

}  // namespace

bool kvm_runs_guests(const KvmProbe& kvm) { return kvm.api_version && *kvm.api_version == kKvmStableApiVersion; }

Verdict guest_profiling_evidence(const LiveProbes& live) {
  Verdict v;
  const KvmProbe& kvm = live.kvm;
  const PerfEventProbe* cycles = live.perf.find("cycles");
  const bool host_pmu = cycles && cycles->counted();
  v.available = kvm_runs_guests(kvm) && host_pmu;
  v.reason = (kvm.api_version ? kvm.path + " answers KVM_GET_API_VERSION = " + std::to_string(*kvm.api_version)
                              : kvm.path + ": " + errno_text(kvm.errno_value)) +
             "; host PMU: " + (host_pmu ? "cycles count" : "cycles " + (cycles ? outcome_text(cycles->outcome) : "not probed"));
  return v;
}

std::string outcome_text(const PerfOpenOutcome& o) {
  if (!o.opened) return "failed, " + errno_text(o.errno_value);
  if (o.count) return "counted " + std::to_string(*o.count);
  return "opened, but reading failed: " + o.error;
}

bool permission_errno(int e) { return e == EACCES || e == EPERM; }

std::string sampling_probe_text(const SamplingProbe& p) {
  std::string text = p.event + ": ";
  if (!p.outcome.opened) return text + "failed, " + errno_text(p.outcome.errno_value);
  if (!p.samples) return text + (p.ring_error.empty() ? "no samples read" : p.ring_error);
  char expected[32];
  std::snprintf(expected, sizeof expected, "%.1f", p.expected());
  text += std::to_string(*p.samples) + " samples for " + std::to_string(p.outcome.count.value_or(0)) +
          " counted at period " + std::to_string(p.period) + " (" + expected + " expected)";
  if (p.throttled) text += ", throttled " + std::to_string(p.throttled) + " times";
  if (p.lost) text += ", " + std::to_string(p.lost) + " lost-records";
  return text;
}

Verdict decide_sampling(const LiveProbes* live, std::string_view pmu_fix) {
  if (!live) return unknown_from_dump("whether samples follow the period");
  Verdict v;
  std::vector<std::string> parts, following, late;
  const SamplingProbe* unopened = nullptr;
  bool unjudged = false;
  for (const SamplingProbe& p : live->perf.sampling) {
    parts.push_back(sampling_probe_text(p));
    if (!p.outcome.opened) {
      if (!unopened) unopened = &p;
      continue;
    }
    std::optional<bool> follows = p.follows_period();
    if (!follows) unjudged = true;
    else (*follows ? following : late).push_back(p.event);
  }
  v.reason = join(parts, "; ");
  v.available = !parts.empty() && following.size() == parts.size();
  if (!late.empty()) {
    v.reason += ". The samples of " + join(late, ", ") +
                " do not follow the period: the PMU delivers its overflow interrupt late or not at all (QEMU "
                "TCG's emulated PMU gives instructions about one sample per timer tick), so a profile on it "
                "would be wrong";
    v.fix = following.empty() ? "sample on a software event (-e cpu-clock) instead"
                              : "sample on " + join(following, ", ") + " instead (-e " + following.front() + ")";
  } else if (unopened) {
    v.fix = fix_for_open_failure(pmu_fix, unopened->outcome) + "; meanwhile sample on -e cpu-clock";
  } else if (unjudged) {
    v.basis = VerdictBasis::Unknown;
    v.reason += ". Too few periods, a ring buffer that could not be read, or the kernel's throttling: not judged";
    v.fix = "run vperf check again on an idle machine; a ring buffer refused with EPERM needs a larger "
            "kernel.perf_event_mlock_kb or root";
  }
  return v;
}

std::string precise_levels_text(const PerfProbeReport& perf) {
  bool same = !perf.precise.empty();
  for (const auto& o : perf.precise)
    same = same && !o.opened && o.errno_value == perf.precise.front().errno_value;
  if (same)
    return "0.." + std::to_string(perf.precise.size() - 1) + ": all failed, " + errno_text(perf.precise.front().errno_value);
  std::vector<std::string> levels;
  for (size_t i = 0; i < perf.precise.size(); ++i)
    levels.push_back(std::to_string(i) + ": " + (perf.precise[i].opened ? "ok" : errno_text(perf.precise[i].errno_value)));
  return join(levels, ", ");
}

std::string errno_text(int errno_value) {
  if (errno_value == 0) return "no error code";
  const char* name = strerrorname_np(errno_value);
  std::string text = name ? name : "errno " + std::to_string(errno_value);
  return text + " (" + std::strerror(errno_value) + ")";
}

std::string guest_pmu_fix(const CpuidReport& cpuid) {
  const HypervisorSignature* hv = cpuid.hypervisor.primary_signature();
  if (!hv) {
    if (cpuid.cpu.hypervisor_bit) return std::string(kGenericGuestFix);
    return "the kernel has no PMU driver for this CPU: check `dmesg | grep -i 'performance events'` and use a "
           "kernel that supports this model";
  }
  std::string fix(kGenericGuestFix);
  for (const auto& knob : kGuestPmuKnobs)
    if (knob.hypervisor_vendor == hv->vendor) fix = std::string(knob.fix);
  // A zeroed leaf 0xA is the VMM's decision, not the host CPU's: say where to look.
  if (cpuid.cpu.is_intel() && cpuid.arch.version == 0)
    fix += " (this guest's CPUID leaf 0xA is all zero: the VMM hides the PMU; a VMM without such a switch cannot "
           "expose one)";
  return fix;
}

std::span<const VerdictRule> verdict_rules() { return kRules; }

std::vector<Verdict> decide_verdicts(const CpuidReport& cpuid, const LiveProbes* live) {
  std::vector<Verdict> out;
  for (const VerdictRule& rule : kRules) {
    Verdict v = rule.decide(cpuid, live);
    v.name = std::string(rule.name);
    v.question = std::string(rule.question);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace vperf::host
