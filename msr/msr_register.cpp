#include "msr/msr_register.h"

#include <algorithm>
#include <array>

#include "core/strings.h"

namespace vperf::msr {

namespace {

constexpr std::array kPlatformInfoFields{
    MsrField{"max_non_turbo_ratio", 8, 15, "maximum non-turbo ratio; x bus clock (100 MHz) = base frequency"},
    MsrField{"programmable_ratio_limit_turbo", 28, 28, "turbo ratio limits are programmable"},
    MsrField{"programmable_tdp_limit_turbo", 29, 29, "TDP limit for turbo is programmable"},
    MsrField{"max_efficiency_ratio", 40, 47, "maximum efficiency (lowest) ratio"},
};

constexpr std::array kPerfStatusFields{
    MsrField{"current_performance_state", 0, 15, "current P-state value; the ratio is bits 15:8 on Core parts"},
    MsrField{"current_ratio", 8, 15, "current core ratio (x bus clock)"},
};

// IA32_PERF_CAPABILITIES exists when CPUID.1.ECX[15] (PDCM) is set.
constexpr std::array kPerfCapabilitiesFields{
    MsrField{"lbr_format", 0, 5, "LBR record format (0x3f = architectural LBR)"},
    MsrField{"pebs_trap", 6, 6, "PEBS is trap-like (the IP is after the instruction)"},
    MsrField{"pebs_arch_regs", 7, 7, "PEBS records hold architectural registers"},
    MsrField{"pebs_record_format", 8, 11, "PEBS record format version"},
    MsrField{"freeze_while_smm", 12, 12, "counters can freeze while in SMM"},
    MsrField{"full_width_write", 13, 13, "GP counters are writable at full width (IA32_A_PMCx)"},
    MsrField{"pebs_baseline", 14, 14, "adaptive PEBS (baseline group)"},
    MsrField{"perf_metrics", 15, 15, "IA32_PERF_METRICS (topdown level 1) available"},
    MsrField{"pebs_output_pt", 16, 16, "PEBS output to Intel PT is available"},
};

// IA32_THERM_STATUS: status bits and their sticky logs, and the digital readout, which counts
// degrees below TjMax (MSR_TEMPERATURE_TARGET), not degrees.
constexpr std::array kThermStatusFields{
    MsrField{"thermal_status", 0, 0, "the core is above its thermal throttling temperature now"},
    MsrField{"thermal_status_log", 1, 1, "it has been since the log was cleared"},
    MsrField{"prochot", 2, 2, "PROCHOT# is asserted now"},
    MsrField{"prochot_log", 3, 3, "PROCHOT# has been asserted"},
    MsrField{"critical_temperature", 4, 4, "critical temperature reached"},
    MsrField{"critical_temperature_log", 5, 5, "critical temperature has been reached"},
    MsrField{"power_limit_notification", 10, 10, "the core runs below the OS-requested P-state (power limit)"},
    MsrField{"power_limit_notification_log", 11, 11, "it has since the log was cleared"},
    MsrField{"digital_readout", 16, 22, "degrees C below TjMax"},
    MsrField{"resolution_c", 27, 30, "resolution of the readout, degrees C"},
    MsrField{"reading_valid", 31, 31, "the digital readout is valid"},
};

constexpr std::array kTemperatureTargetFields{
    MsrField{"tcc_activation_offset", 24, 29, "degrees below TjMax at which throttling starts"},
    MsrField{"temperature_target", 16, 23, "TjMax, degrees C"},
};

// Ratios are multiples of the 100 MHz bus clock. On Skylake-SP and later 0x1AE holds the core
// counts of the eight groups whose limits 0x1AD holds, not more limits.
constexpr std::array kTurboRatioLimitFields{
    MsrField{"max_ratio_group_1", 0, 7, "max turbo ratio, 1 active core (or group 1)"},
    MsrField{"max_ratio_group_2", 8, 15, "2 active cores (or group 2)"},
    MsrField{"max_ratio_group_3", 16, 23, "3 active cores (or group 3)"},
    MsrField{"max_ratio_group_4", 24, 31, "4 active cores (or group 4)"},
    MsrField{"max_ratio_group_5", 32, 39, "5 active cores (or group 5)"},
    MsrField{"max_ratio_group_6", 40, 47, "6 active cores (or group 6)"},
    MsrField{"max_ratio_group_7", 48, 55, "7 active cores (or group 7)"},
    MsrField{"max_ratio_group_8", 56, 63, "8 active cores (or group 8)"},
};

constexpr std::array kTurboRatioLimit1Fields{
    MsrField{"field_1", 0, 7, "9 active cores' ratio, or group 1's core count (SKX and later)"},
    MsrField{"field_2", 8, 15, "10 active cores' ratio, or group 2's core count"},
    MsrField{"field_3", 16, 23, "11 active cores' ratio, or group 3's core count"},
    MsrField{"field_4", 24, 31, "12 active cores' ratio, or group 4's core count"},
    MsrField{"field_5", 32, 39, "13 active cores' ratio, or group 5's core count"},
    MsrField{"field_6", 40, 47, "14 active cores' ratio, or group 6's core count"},
    MsrField{"field_7", 48, 55, "15 active cores' ratio, or group 7's core count"},
    MsrField{"field_8", 56, 63, "16 active cores' ratio, or group 8's core count"},
};

constexpr std::array kRegisters{
    MsrRegister{address::kTimeStampCounter, "IA32_TIME_STAMP_COUNTER",
                "the TSC, as RDTSC reads it: counts at a fixed rate in every C-state", {}},
    MsrRegister{address::kPlatformInfo, "MSR_PLATFORM_INFO", "platform ratios (base and efficiency)",
                kPlatformInfoFields},
    MsrRegister{address::kMperf, "IA32_MPERF", "counts at a fixed (TSC) rate while the core is in C0", {}},
    MsrRegister{address::kAperf, "IA32_APERF", "counts at the actual core clock while in C0; APERF/MPERF = turbo ratio",
                {}},
    MsrRegister{address::kPerfStatus, "IA32_PERF_STATUS", "current performance state", kPerfStatusFields},
    MsrRegister{address::kThermStatus, "IA32_THERM_STATUS", "core thermal status and temperature readout",
                kThermStatusFields},
    MsrRegister{address::kTemperatureTarget, "MSR_TEMPERATURE_TARGET", "TjMax and the throttling offset",
                kTemperatureTargetFields},
    MsrRegister{address::kTurboRatioLimit, "MSR_TURBO_RATIO_LIMIT", "maximum turbo ratio by active cores",
                kTurboRatioLimitFields},
    MsrRegister{address::kTurboRatioLimit1, "MSR_TURBO_RATIO_LIMIT1",
                "more turbo ratios, or the core counts of 0x1AD's groups (SKX and later)", kTurboRatioLimit1Fields},
    MsrRegister{address::kPerfCapabilities, "IA32_PERF_CAPABILITIES", "PMU capabilities: LBR format, PEBS",
                kPerfCapabilitiesFields},
};

}  // namespace

uint64_t MsrField::extract(uint64_t value) const {
  const int width = high - low + 1;
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  return (value >> low) & mask;
}

std::span<const MsrRegister> known_registers() { return kRegisters; }

const MsrRegister* find_register(uint32_t address) {
  auto it = std::find_if(kRegisters.begin(), kRegisters.end(),
                         [address](const MsrRegister& r) { return r.address == address; });
  return it == kRegisters.end() ? nullptr : &*it;
}

const MsrRegister* find_register(std::string_view name) {
  auto it = std::find_if(kRegisters.begin(), kRegisters.end(),
                         [name](const MsrRegister& r) { return equals_nocase(r.name, name); });
  return it == kRegisters.end() ? nullptr : &*it;
}

std::vector<DecodedField> decode_fields(const MsrRegister& reg, uint64_t value) {
  std::vector<DecodedField> out;
  out.reserve(reg.fields.size());
  for (const MsrField& f : reg.fields) out.push_back({f.name, f.low, f.high, f.extract(value), f.meaning});
  return out;
}

std::optional<uint64_t> field_value(const MsrRegister& reg, std::string_view field, uint64_t value) {
  for (const MsrField& f : reg.fields)
    if (f.name == field) return f.extract(value);
  return std::nullopt;
}

}  // namespace vperf::msr
