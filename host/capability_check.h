#pragma once
// `vperf check`: which PMCs does this machine expose, and what can be measured here?
//
// Three kinds of evidence, in increasing order of trust:
//   1. model-based claims: libpfm4 says a PMU is "present" from the CPU family/model alone;
//   2. CPUID: what the CPU, or the hypervisor's idea of a CPU, advertises (leaf 0xA, 0x23, AMD);
//   3. live probes: what the kernel actually lets this process open, read and mount.
// Live probes win. Every place where a lower kind claims something a live probe contradicts is
// reported as a Disagreement. With a CPUID dump of another machine there are no live probes
// (they would describe this machine, not the dumped one), and verdicts are predictions from
// CPUID, marked as such; verdicts about the kernel cannot be predicted and say so.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/arm_cpu.h"
#include "host/cpuid_decode.h"
#include "host/host_paths.h"
#include "host/kernel_settings.h"
#include "host/kvm_device.h"
#include "host/perf_probe.h"
#include "host/pmu_inventory.h"
#include "msr/msr_reader.h"

namespace vperf::host {

struct MsrProbe {
  uint32_t address = 0;
  std::string name;
  std::optional<uint64_t> value;  // set when the read worked
  int errno_value = 0;
  std::string error;
  std::string hint;
};

struct KvmProbe {
  std::string path;
  std::optional<int> api_version;
  int errno_value = 0;
  std::string error;
};

struct LiveProbes {
  bool privileged = false;  // effective uid 0: perf_event_paranoid and kptr_restrict do not bind
  PerfProbeReport perf;
  std::vector<PmuInfo> pmus;
  std::vector<MsrProbe> msrs;  // IA32_MPERF, IA32_APERF, MSR_PLATFORM_INFO on CPU 0 (x86)
  KernelSettings kernel;
  KvmProbe kvm;

  const PmuInfo* find_pmu(std::string_view name) const;
  const PmuInfo* core_pmu() const;  // "cpu", "cpu_core" ... or nullptr
  const MsrProbe* find_msr(uint32_t address) const;
};

// The OS boundaries the live probes go through; tests pass fakes.
struct LiveProbeDeps {
  const perf::PerfEventOpener& opener;
  const msr::MsrReader& msr_reader;
  const KvmDevice& kvm;
  HostPaths paths;
  bool privileged = false;
  bool probe_msrs = true;  // x86 only: arm64 has no MSRs to read
};

LiveProbes run_live_probes(const LiveProbeDeps& deps);

// Architecture: a fact of the instruction set (arm64 has no APERF/MPERF), not of this machine.
enum class VerdictBasis { LiveProbe, Cpuid, Architecture, Unknown };
std::string_view verdict_basis_name(VerdictBasis basis);

struct Verdict {
  std::string name;  // "ipc", "turbo", ...
  std::string question;
  bool available = false;
  std::string reason;
  std::string fix;  // empty when available or when nothing can be done
  VerdictBasis basis = VerdictBasis::LiveProbe;
};

struct Disagreement {
  std::string claim_source;  // "libpfm4", "CPUID leaf 0xA", "sysfs caps"
  std::string claim;
  std::string live_finding;
};

struct CheckResult {
  CpuidReport cpuid;  // x86; empty on arm64
  std::optional<ArmCpuReport> arm;  // arm64: MIDR and platform; the verdicts are arm64's
  bool cpuid_from_dump = false;
  std::optional<LiveProbes> live;  // nullopt with --cpuid-dump
  std::vector<std::string> libpfm_present_pmus;
  std::vector<Disagreement> disagreements;
  std::vector<Verdict> verdicts;  // in rule-table order
  const Verdict* find_verdict(std::string_view name) const;
};

struct CheckInputs {
  CpuidReport cpuid;
  std::optional<ArmCpuReport> arm;  // set on arm64 (with live probes)
  bool cpuid_from_dump = false;
  std::optional<LiveProbes> live;
  // PMU names libpfm4 reports as present (pfm_get_pmu_info(...).is_present) on this machine.
  // libpfm4 decides from family/model only; each one is checked against the live probes.
  std::vector<std::string> libpfm_present_pmus;
};

CheckResult evaluate_check(CheckInputs inputs);

// What libpfm4 claims vs. what the live probes found; exposed for tests.
std::vector<Disagreement> find_disagreements(const CpuidReport& cpuid, const LiveProbes& live,
                                             const std::vector<std::string>& libpfm_present_pmus);

}  // namespace vperf::host
