#include "unwind/perf_regs.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

#include <vector>

namespace vperf::unwind {
namespace {

// perf record --call-graph dwarf's mask: AX..SS (bits 0-11) and R8..R15 (bits 16-23).
constexpr uint64_t kPerfDwarfMask = 0xff0fff;

// A regs array for `mask` whose every value is 1000 + its perf register index.
std::vector<uint64_t> regs_for(uint64_t mask) {
  std::vector<uint64_t> regs;
  for (unsigned bit = 0; bit < 64; ++bit)
    if ((mask >> bit) & 1) regs.push_back(1000 + bit);
  return regs;
}

TEST(PerfRegister, FindsEachRegisterByItsBitOrderInTheMask) {
  std::vector<uint64_t> regs = regs_for(kPerfDwarfMask);
  ASSERT_EQ(regs.size(), 20u);
  EXPECT_EQ(perf_register(kPerfDwarfMask, regs, kPerfRegAx), 1000u);
  EXPECT_EQ(perf_register(kPerfDwarfMask, regs, kPerfRegIp), 1008u);
  EXPECT_EQ(perf_register(kPerfDwarfMask, regs, kPerfRegSp), 1007u);
  // R8 is bit 16 but the 13th value: DS..GS (bits 12-15) are not in the mask.
  EXPECT_EQ(perf_register(kPerfDwarfMask, regs, kPerfRegR8), 1016u);
  EXPECT_EQ(regs[12], 1016u);
  EXPECT_EQ(perf_register(kPerfDwarfMask, regs, kPerfRegR15), 1023u);
  EXPECT_FALSE(perf_register(kPerfDwarfMask, regs, 12)) << "DS is not recorded";
  EXPECT_FALSE(perf_register(kPerfDwarfMask, regs, 64));
}

TEST(PerfRegister, ShortArrayHasNoValueForTheMissingTail) {
  std::vector<uint64_t> regs = regs_for(kPerfDwarfMask);
  regs.resize(9);  // AX..IP
  EXPECT_EQ(perf_register(kPerfDwarfMask, regs, kPerfRegIp), 1008u);
  EXPECT_FALSE(perf_register(kPerfDwarfMask, regs, 9));
  EXPECT_FALSE(perf_register(kPerfDwarfMask, regs, kPerfRegR8));
  EXPECT_FALSE(perf_register(kPerfDwarfMask, {}, kPerfRegAx));
}

TEST(DwarfRegisters, MapsPerfsX86_64OrderToTheDwarfNumbers) {
  std::optional<DwarfRegisters> d = dwarf_registers(PERF_SAMPLE_REGS_ABI_64, kPerfDwarfMask, regs_for(kPerfDwarfMask));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->abi, RegisterAbi::X86_64);
  ASSERT_EQ(d->count, 17u);
  EXPECT_EQ(d->known, (1u << 17) - 1) << "all 17 DWARF registers are in perf's mask";
  // DWARF 0 rax 1 rdx 2 rcx 3 rbx 4 rsi 5 rdi 6 rbp 7 rsp 8-15 r8-r15 16 rip;
  // perf AX=0 BX=1 CX=2 DX=3 SI=4 DI=5 BP=6 SP=7 IP=8 R8=16.
  const uint64_t perf_index_of_dwarf[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
  for (unsigned dwarf = 0; dwarf < 17; ++dwarf) EXPECT_EQ(d->values[dwarf], 1000 + perf_index_of_dwarf[dwarf]) << dwarf;
  EXPECT_EQ(d->ip, 1008u);
  EXPECT_EQ(d->sp, 1007u);
  EXPECT_TRUE(d->has_sp);
}

TEST(DwarfRegisters, AnyMaskDecodesByBitOrder) {
  const uint64_t mask = (1u << kPerfRegBp) | (1u << kPerfRegSp) | (1u << kPerfRegIp) | (1u << kPerfRegR15);
  std::vector<uint64_t> regs = {0x7ffd0010, 0x7ffd0000, 0x401000, 0xf15};
  std::optional<DwarfRegisters> d = dwarf_registers(PERF_SAMPLE_REGS_ABI_64, mask, regs);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->known, (1u << 6) | (1u << 7) | (1u << 15) | (1u << 16));
  EXPECT_TRUE(d->has(6));
  EXPECT_FALSE(d->has(0));
  EXPECT_EQ(d->values[6], 0x7ffd0010u);
  EXPECT_EQ(d->values[7], 0x7ffd0000u);
  EXPECT_EQ(d->values[15], 0xf15u);
  EXPECT_EQ(d->values[16], 0x401000u);
  EXPECT_EQ(d->ip, 0x401000u);
  EXPECT_EQ(d->sp, 0x7ffd0000u);
}

TEST(DwarfRegisters, I386UsesItsOwnNumbering) {
  std::vector<uint64_t> regs = regs_for(kPerfDwarfMask);
  std::optional<DwarfRegisters> d = dwarf_registers(PERF_SAMPLE_REGS_ABI_32, kPerfDwarfMask, regs);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->abi, RegisterAbi::I386);
  ASSERT_EQ(d->count, 9u);
  // DWARF 0 eax 1 ecx 2 edx 3 ebx 4 esp 5 ebp 6 esi 7 edi 8 eip.
  const uint64_t perf_index_of_dwarf[9] = {0, 2, 3, 1, 7, 6, 4, 5, 8};
  for (unsigned dwarf = 0; dwarf < 9; ++dwarf) EXPECT_EQ(d->values[dwarf], 1000 + perf_index_of_dwarf[dwarf]) << dwarf;
  EXPECT_FALSE(d->has(9));
}

TEST(DwarfRegisters, NoneWithoutAbiOrIp) {
  EXPECT_FALSE(dwarf_registers(PERF_SAMPLE_REGS_ABI_NONE, kPerfDwarfMask, {})) << "a kernel thread has no user regs";
  EXPECT_FALSE(dwarf_registers(7, kPerfDwarfMask, regs_for(kPerfDwarfMask))) << "an ABI this kernel does not have";
  const uint64_t no_ip = kPerfDwarfMask & ~(uint64_t{1} << kPerfRegIp);
  EXPECT_FALSE(dwarf_registers(PERF_SAMPLE_REGS_ABI_64, no_ip, regs_for(no_ip)));
  std::vector<uint64_t> truncated = regs_for(kPerfDwarfMask);
  truncated.resize(8);  // AX..SP: the IP is cut off
  EXPECT_FALSE(dwarf_registers(PERF_SAMPLE_REGS_ABI_64, kPerfDwarfMask, truncated));
}

TEST(DwarfRegisters, IpWithoutSpStillGivesTheIp) {
  const uint64_t mask = uint64_t{1} << kPerfRegIp;
  std::optional<DwarfRegisters> d = dwarf_registers(PERF_SAMPLE_REGS_ABI_64, mask, std::vector<uint64_t>{0x1234});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->ip, 0x1234u);
  EXPECT_FALSE(d->has_sp);
}

}  // namespace
// arm64 (enum perf_event_arm64_regs): X0..X30, SP and PC in index order, as perf record
// --call-graph dwarf asks for them (0x1ffffffff); X0..X30 and SP keep their numbers in DWARF,
// the PC starts the unwind. Plain -g records LR alone, which holds no PC: no frame to start.
TEST(PerfRegs, Arm64RegistersKeepTheirNumbersAndThePcStartsTheUnwind) {
  const uint64_t all = (uint64_t{1} << 33) - 1;
  std::vector<uint64_t> regs(33);
  for (size_t i = 0; i < regs.size(); ++i) regs[i] = 0x1000 + i;
  std::optional<DwarfRegisters> d = dwarf_registers(PERF_SAMPLE_REGS_ABI_64, all, regs, RegisterArch::Arm64);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->abi, RegisterAbi::Arm64);
  EXPECT_EQ(d->count, 32u);
  EXPECT_EQ(d->values[29], 0x1000u + 29) << "x29, the frame pointer";
  EXPECT_EQ(d->values[30], 0x1000u + 30) << "x30, the link register";
  EXPECT_EQ(d->values[31], 0x1000u + 31) << "sp";
  EXPECT_EQ(d->ip, 0x1000u + 32);
  EXPECT_TRUE(d->has_sp);
  EXPECT_EQ(d->sp, 0x1000u + 31);
  EXPECT_EQ(d->known, 0xffffffffu);
  EXPECT_FALSE(dwarf_registers(PERF_SAMPLE_REGS_ABI_64, kArm64LinkRegisterMask, std::vector<uint64_t>{0x4000}, RegisterArch::Arm64));
  EXPECT_FALSE(dwarf_registers(PERF_SAMPLE_REGS_ABI_32, all, regs, RegisterArch::Arm64)) << "no 32-bit arm64 ABI here";
  EXPECT_EQ(register_arch("aarch64"), RegisterArch::Arm64);
  EXPECT_EQ(register_arch("x86_64"), RegisterArch::X86);
}

}  // namespace vperf::unwind
