#include "unwind/perf_regs.h"

#include <linux/perf_event.h>

#include <array>
#include <bit>

namespace vperf::unwind {

namespace {

// DWARF register number -> perf register index, per ABI (see the header).
constexpr std::array<uint8_t, 17> kX86_64DwarfToPerf = {
    kPerfRegAx, kPerfRegDx, kPerfRegCx, kPerfRegBx, kPerfRegSi, kPerfRegDi, kPerfRegBp, kPerfRegSp,
    16,         17,         18,         19,         20,         21,         22,         23,  // r8..r15
    kPerfRegIp,
};
constexpr std::array<uint8_t, 9> kI386DwarfToPerf = {
    kPerfRegAx, kPerfRegCx, kPerfRegDx, kPerfRegBx, kPerfRegSp, kPerfRegBp, kPerfRegSi, kPerfRegDi, kPerfRegIp,
};
static_assert(kX86_64DwarfToPerf.size() <= kMaxDwarfRegisters);
constexpr unsigned kArm64DwarfRegisters = 32;  // X0..X30, SP: perf's index is the DWARF number
static_assert(kArm64DwarfRegisters <= kMaxDwarfRegisters);

std::optional<DwarfRegisters> arm64_registers(uint64_t mask, std::span<const uint64_t> regs) {
  DwarfRegisters out;
  out.abi = RegisterAbi::Arm64;
  out.count = kArm64DwarfRegisters;
  for (unsigned reg = 0; reg < kArm64DwarfRegisters; ++reg)
    if (std::optional<uint64_t> value = perf_register(mask, regs, reg)) {
      out.values[reg] = *value;
      out.known |= uint32_t{1} << reg;
    }
  std::optional<uint64_t> pc = perf_register(mask, regs, kPerfRegArm64Pc);
  if (!pc) return std::nullopt;
  std::optional<uint64_t> sp = perf_register(mask, regs, kPerfRegArm64Sp);
  out.ip = *pc;
  out.has_sp = sp.has_value();
  out.sp = sp.value_or(0);
  return out;
}

}  // namespace

std::optional<uint64_t> perf_register(uint64_t mask, std::span<const uint64_t> regs, unsigned perf_reg) {
  if (perf_reg >= 64 || ((mask >> perf_reg) & 1) == 0) return std::nullopt;
  // The registers below this one in the mask come first.
  const uint64_t below = perf_reg == 0 ? 0 : mask & ((uint64_t{1} << perf_reg) - 1);
  const auto index = static_cast<size_t>(std::popcount(below));
  if (index >= regs.size()) return std::nullopt;
  return regs[index];
}

RegisterArch register_arch(std::string_view uname_machine) {
  return uname_machine == "aarch64" || uname_machine == "arm64" ? RegisterArch::Arm64 : RegisterArch::X86;
}

std::optional<DwarfRegisters> dwarf_registers(uint64_t abi, uint64_t mask, std::span<const uint64_t> regs, RegisterArch arch) {
  if (arch == RegisterArch::Arm64) return abi == PERF_SAMPLE_REGS_ABI_64 ? arm64_registers(mask, regs) : std::nullopt;
  DwarfRegisters out;
  std::span<const uint8_t> table;
  if (abi == PERF_SAMPLE_REGS_ABI_64) {
    out.abi = RegisterAbi::X86_64;
    table = kX86_64DwarfToPerf;
  } else if (abi == PERF_SAMPLE_REGS_ABI_32) {
    out.abi = RegisterAbi::I386;
    table = kI386DwarfToPerf;
  } else {
    return std::nullopt;
  }
  out.count = static_cast<unsigned>(table.size());
  for (unsigned dwarf = 0; dwarf < table.size(); ++dwarf) {
    if (std::optional<uint64_t> value = perf_register(mask, regs, table[dwarf])) {
      out.values[dwarf] = abi == PERF_SAMPLE_REGS_ABI_32 ? (*value & 0xffffffffULL) : *value;
      out.known |= uint32_t{1} << dwarf;
    }
  }
  std::optional<uint64_t> ip = perf_register(mask, regs, kPerfRegIp);
  std::optional<uint64_t> sp = perf_register(mask, regs, kPerfRegSp);
  if (!ip) return std::nullopt;
  const uint64_t word = abi == PERF_SAMPLE_REGS_ABI_32 ? 0xffffffffULL : ~uint64_t{0};
  out.ip = *ip & word;
  out.has_sp = sp.has_value();
  out.sp = sp.value_or(0) & word;
  return out;
}

}  // namespace vperf::unwind
