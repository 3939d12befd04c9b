#pragma once
// The verdicts of `vperf check` as a rule table: each rule names a question ("can I measure
// IPC?") and decides it from the evidence, preferring live probes, falling back to CPUID when
// there are none (a dump), and saying "unknown" when neither can tell. Fixes name the knob a
// user really turns; the per-hypervisor knobs are data (kGuestPmuKnobs in verdicts.cpp).
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/capability_check.h"

namespace vperf::host {

struct VerdictRule {
  std::string_view name;
  std::string_view question;
  Verdict (*decide)(const CpuidReport& cpuid, const LiveProbes* live);
};

std::span<const VerdictRule> verdict_rules();
// All verdicts in table order. `live` is nullptr for a CPUID dump.
std::vector<Verdict> decide_verdicts(const CpuidReport& cpuid, const LiveProbes* live);

// The questions every architecture answers; the kernel-only verdicts are the same everywhere.
inline constexpr std::string_view kIpcQuestion = "Can I measure instructions per cycle?";
inline constexpr std::string_view kTurboQuestion = "Can I measure the turbo ratio (APERF/MPERF)?";
inline constexpr std::string_view kLlcQuestion = "Can I count last-level-cache references and misses?";
inline constexpr std::string_view kGuestProfilingQuestion = "Can I profile KVM guests from here with the host PMU?";
inline constexpr std::string_view kSamplingQuestion = "Do hardware samples come once per period?";
inline constexpr std::string_view kKernelSymbolsQuestion = "Can I resolve kernel symbols?";
inline constexpr std::string_view kTracepointsQuestion = "Can I use tracepoints?";
inline constexpr std::string_view kUprobesQuestion = "Can I add user-space probes?";
inline constexpr std::string_view kKprobesQuestion = "Can I add kernel probes?";
Verdict decide_kernel_symbols(const LiveProbes* live);
Verdict decide_tracepoints(const LiveProbes* live);
Verdict decide_uprobes(const LiveProbes* live);
Verdict decide_kprobes(const LiveProbes* live);
// From the sampling probes: yes when every probed hardware event's samples follow its period.
// `pmu_fix` is the architecture's and hypervisor's way to get a PMU, for when none samples.
Verdict decide_sampling(const LiveProbes* live, std::string_view pmu_fix);
// From counting probes of perf's generic events (ipc, llc): `what` names them in the reason,
// `cpu_summary` says what the CPU claims, `pmu_fix` how to get a PMU.
Verdict counting_verdict(const LiveProbes& live, std::initializer_list<const char*> names, std::string_view what,
                         std::string_view cpu_summary, std::string_view pmu_fix);
// Whether /dev/kvm answered the stable API version.
bool kvm_runs_guests(const KvmProbe& kvm);
// The guest-profiling verdict's evidence (/dev/kvm and the host PMU), without its fix, which is
// the architecture's.
Verdict guest_profiling_evidence(const LiveProbes& live);
// "cycles: 64 samples for 6400192 counted at period 100003 (64.0 expected)"
std::string sampling_probe_text(const SamplingProbe& probe);
// "failed, ENOENT (...)", "counted 1234", "opened, but reading failed: ..."
std::string outcome_text(const PerfOpenOutcome& o);
bool permission_errno(int errno_value);
inline constexpr std::string_view kParanoidFix =
    "sysctl kernel.perf_event_paranoid=2 (user-space counting) or run as root / with CAP_PERFMON";

// How to get a PMU into this guest, for the hypervisor CPUID names; generic text on bare metal.
std::string guest_pmu_fix(const CpuidReport& cpuid);
// "0..3: all failed, ENOENT (...)" or "0: ok, 1: ok, 2: EOPNOTSUPP (...), 3: ..."
std::string precise_levels_text(const PerfProbeReport& perf);
// "ENOENT (No such file or directory)"
std::string errno_text(int errno_value);

}  // namespace vperf::host
