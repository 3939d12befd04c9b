#pragma once
// The user registers a --call-graph dwarf sample carries (PERF_SAMPLE_REGS_USER), turned into
// the DWARF register numbers CFI uses.
//
// Layout in a sample: `abi` (PERF_SAMPLE_REGS_ABI_NONE/_32/_64), then one u64 per bit set in
// attr.sample_regs_user, in ascending bit order. Bit i is perf's register index i of
// <asm/perf_regs.h> (enum perf_event_x86_regs): AX=0 BX CX DX SI DI BP SP IP=8 FLAGS CS SS
// DS ES FS GS=15 R8=16 .. R15=23. perf record --call-graph dwarf asks for 0xff0fff (all general
// registers, IP and FLAGS, CS/SS, no DS..GS), as vperf record does (events/record_attr.h); any
// mask decodes here by its bit order.
//
// DWARF numbers (System V psABI): x86-64 0 rax 1 rdx 2 rcx 3 rbx 4 rsi 5 rdi 6 rbp 7 rsp,
// 8..15 r8..r15, 16 the return address column (rip); i386 0 eax 1 ecx 2 edx 3 ebx 4 esp 5 ebp
// 6 esi 7 edi 8 eip. A 32-bit process on a 64-bit kernel reports ABI_32 with the registers
// zero-extended.
//
// arm64 (enum perf_event_arm64_regs): X0..X30 = 0..30 (X29 the frame pointer, X30 the link
// register), SP = 31, PC = 32; perf record --call-graph dwarf asks for all 33 (0x1ffffffff),
// and plain -g for LR alone (1 << 30: the leaf's caller, see leaf_caller). Their DWARF numbers
// (AADWARF64) are the same for X0..X30 and SP; the PC is no DWARF register, it starts the unwind.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace vperf::unwind {

// perf's register index for the x86 registers unwinding needs.
enum PerfRegX86 : uint8_t {
  kPerfRegAx = 0,
  kPerfRegBx = 1,
  kPerfRegCx = 2,
  kPerfRegDx = 3,
  kPerfRegSi = 4,
  kPerfRegDi = 5,
  kPerfRegBp = 6,
  kPerfRegSp = 7,
  kPerfRegIp = 8,
  kPerfRegR8 = 16,
  kPerfRegR15 = 23,
};

// perf's register index for the arm64 registers that name frames.
enum PerfRegArm64 : uint8_t {
  kPerfRegArm64Lr = 30,
  kPerfRegArm64Sp = 31,
  kPerfRegArm64Pc = 32,
};
// The user registers perf records for plain -g on arm64 (evsel__config_callchain).
inline constexpr uint64_t kArm64LinkRegisterMask = uint64_t{1} << kPerfRegArm64Lr;

// The machine a recording was made on (the perf.data header's arch): which enum the sample's
// register indexes are of.
enum class RegisterArch : uint8_t { X86, Arm64 };
// perf's header arch ("x86_64", "aarch64", uname -m) as a RegisterArch; x86 for the rest.
RegisterArch register_arch(std::string_view uname_machine);

enum class RegisterAbi : uint8_t { X86_64, I386, Arm64 };

// The most DWARF registers an ABI's CFI uses here (x86-64: 17; arm64: X0..X30 and SP, 32).
inline constexpr unsigned kMaxDwarfRegisters = 32;

// The value of perf register `perf_reg` in a sample's regs array recorded under `mask`;
// nullopt if the mask lacks it or the array is too short for the mask.
std::optional<uint64_t> perf_register(uint64_t mask, std::span<const uint64_t> regs, unsigned perf_reg);

struct DwarfRegisters {
  RegisterAbi abi = RegisterAbi::X86_64;
  unsigned count = 0;                    // DWARF registers of the ABI: 17 or 9
  uint64_t values[kMaxDwarfRegisters]{};  // by DWARF number
  uint32_t known = 0;                    // bit n: the sample had DWARF register n (n < 32)
  uint64_t ip = 0;
  uint64_t sp = 0;
  bool has_sp = false;

  bool has(unsigned dwarf_reg) const { return dwarf_reg < count && ((known >> dwarf_reg) & 1) != 0; }
};

// The DWARF view of a sample's user registers recorded on `arch`; nullopt when the sample has
// none (ABI_NONE: a kernel thread), an unknown ABI, or lacks IP (no frame at all). Without SP
// the stack copy cannot be placed, so only the ip frame comes out.
std::optional<DwarfRegisters> dwarf_registers(uint64_t abi, uint64_t mask, std::span<const uint64_t> regs,
                                              RegisterArch arch = RegisterArch::X86);

}  // namespace vperf::unwind
