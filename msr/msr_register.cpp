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

constexpr std::array kRegisters{
    MsrRegister{address::kPlatformInfo, "MSR_PLATFORM_INFO", "platform ratios (base and efficiency)",
                kPlatformInfoFields},
    MsrRegister{address::kMperf, "IA32_MPERF", "counts at a fixed (TSC) rate while the core is in C0", {}},
    MsrRegister{address::kAperf, "IA32_APERF", "counts at the actual core clock while in C0; APERF/MPERF = turbo ratio",
                {}},
    MsrRegister{address::kPerfStatus, "IA32_PERF_STATUS", "current performance state", kPerfStatusFields},
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
