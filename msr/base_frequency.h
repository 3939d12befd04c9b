#pragma once
// The base (non-turbo) frequency that turbo ratios and utilisation are measured against, chosen
// from the best source available, without I/O: the caller gathers the inputs (msr/ sits below
// host/, so CPUID comes in as a number, not through host/cpuid_source.h).
//
//   1. MSR_PLATFORM_INFO (0xCE) bits 15:8, the maximum non-turbo ratio, x 100 MHz. The bus
//      clock is 100 MHz on Intel since Sandy Bridge (2011); Nehalem and Westmere used
//      133.33 MHz, where this would read 25% low. AMD has no MSR_PLATFORM_INFO.
//   2. CPUID leaf 0x16 EAX bits 15:0, "processor base frequency (MHz)" (Intel, Skylake and
//      later). Hypervisors often report the leaf with zeros; zero means "not given".
//   3. /proc/cpuinfo "cpu MHz" of the first CPU. On a VM this is the TSC rate the hypervisor
//      reports; on bare metal with cpufreq it is the *current* clock, so it is the last resort.
// A source that is present but zero is skipped.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace vperf::msr {

inline constexpr double kBusClockMhz = 100.0;

enum class BaseFrequencySource { PlatformInfo, CpuidLeaf16, ProcCpuinfo };

struct BaseFrequencyInputs {
  std::optional<uint64_t> platform_info;  // raw MSR_PLATFORM_INFO, when readable
  std::optional<uint32_t> cpuid_16_eax;   // CPUID.16H:EAX, when the leaf exists
  std::optional<double> cpuinfo_mhz;      // first "cpu MHz" of /proc/cpuinfo
};

struct BaseFrequency {
  double mhz = 0;
  BaseFrequencySource source = BaseFrequencySource::PlatformInfo;
  // How it was derived: "MSR_PLATFORM_INFO[15:8] = 25 x 100 MHz", "CPUID.16H:EAX",
  // "/proc/cpuinfo cpu MHz".
  std::string derivation;
};

// The error says which sources were missing or zero.
Result<BaseFrequency> choose_base_frequency(const BaseFrequencyInputs& inputs);

// Short name for JSON: "msr_platform_info", "cpuid_0x16", "proc_cpuinfo".
std::string_view source_key(BaseFrequencySource source);

// The first "cpu MHz : 2000.000" of /proc/cpuinfo text; nullopt when there is none (ARM,
// some VMs) or it does not parse.
std::optional<double> parse_cpuinfo_mhz(std::string_view cpuinfo);

}  // namespace vperf::msr
