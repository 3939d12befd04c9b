#pragma once
// The verdicts of `vperf check` on arm64: the same questions as on x86 where they have an
// answer there (IPC, LLC, precise sampling through SPE, samples that follow the period, the
// kernel's facilities, guest profiling), decided from the live probes and the PMU's sysfs
// events, with fixes in the words of the platform (EC2's Graviton sizes, KVM's pmu=on, QEMU's
// -icount, Xen's vpmu).
#include <string>
#include <vector>

#include "host/arm_cpu.h"
#include "host/capability_check.h"

namespace vperf::host {

std::vector<Verdict> decide_arm_verdicts(const ArmCpuReport& arm, const LiveProbes& live);

// How to get a PMU here, for the platform `arm` names.
std::string arm_pmu_fix(const ArmCpuReport& arm);

}  // namespace vperf::host
