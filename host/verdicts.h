#pragma once
// The verdicts of `vperf check` as a rule table: each rule names a question ("can I measure
// IPC?") and decides it from the evidence, preferring live probes, falling back to CPUID when
// there are none (a dump), and saying "unknown" when neither can tell. Fixes name the knob a
// user really turns; the per-hypervisor knobs are data (kGuestPmuKnobs in verdicts.cpp).
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

// How to get a PMU into this guest, for the hypervisor CPUID names; generic text on bare metal.
std::string guest_pmu_fix(const CpuidReport& cpuid);
// "0..3: all failed, ENOENT (...)" or "0: ok, 1: ok, 2: EOPNOTSUPP (...), 3: ..."
std::string precise_levels_text(const PerfProbeReport& perf);
// "ENOENT (No such file or directory)"
std::string errno_text(int errno_value);

}  // namespace vperf::host
