#pragma once
// `vperf check [--cpuid-dump FILE [--cpu N]] [--json]`: which PMCs this machine (or the machine
// of a CPUID dump) exposes, and what can be measured. The logic is in host/capability_check.h;
// this is the command's option handling, callable in-process from tests.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace vperf::cli {

struct CheckOptions {
  std::string cpuid_dump;     // empty: CPUID of this machine, plus live probes
  std::optional<int> cpu;     // with cpuid_dump: the CPU number in the dump (hybrids: P or E core)
  bool json = false;
  // PMU names libpfm4 calls present on this machine; checked against the live probes.
  std::vector<std::string> libpfm_present_pmus;
};

// Throws UserError for an unreadable dump (exit 1) and usage_error for a malformed one or a CPU
// the dump does not have (exit 2). Returns the exit status.
int run_check(const CheckOptions& options, std::ostream& out);

// Names of the PMUs libpfm4 reports present (pfm_pmu_info_t.is_present) on this machine, or an
// empty list if libpfm4 cannot be initialised.
std::vector<std::string> libpfm_present_pmu_names();

}  // namespace vperf::cli
