#include "guest/vcpu_registers.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace vperf::guest {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A real answer: QEMU 7.2 (Debian 12) under TCG, the test guest of scripts/test-guest.sh with
// two vCPUs, through QMP's human-monitor-command "info registers -a"; vCPU 0 was in user space.
TEST(VcpuRegisters, RealQemuAnswerWithOneVcpuInUserSpace) {
  std::string text = read(std::string(VPERF_SOURCE_DIR) + "/tests/unit/guest/data/qemu-7.2-tcg-info-registers-a.txt");
  ASSERT_FALSE(text.empty());
  Result<std::vector<VcpuRegisters>> cpus = parse_info_registers(text);
  ASSERT_TRUE(cpus.ok()) << cpus.error().describe();
  ASSERT_EQ(cpus->size(), 2u);
  const VcpuRegisters& user = (*cpus)[0];
  EXPECT_EQ(user.index, 0);
  EXPECT_EQ(user.rip, 0x00007f3317dfaabcULL);
  EXPECT_EQ(user.cpl, 3);
  EXPECT_FALSE(user.in_kernel());
  EXPECT_FALSE(user.halted);
  EXPECT_EQ(user.rsp, 0x00007ffec4e767d0ULL);
  EXPECT_EQ(user.rbp, 0x0000555704b5eab0ULL);
  EXPECT_EQ(user.rdi, 0x0000555704b5eab0ULL);
  EXPECT_EQ(user.r10, 0x00007ffec4e756d0ULL);
  EXPECT_EQ(user.r13, 0x2u);
  EXPECT_EQ(user.rdx, 0x1u);
  EXPECT_EQ(user.cr3, 0x00000000024aa000ULL);
  const VcpuRegisters& idle = (*cpus)[1];
  EXPECT_EQ(idle.index, 1);
  EXPECT_EQ(idle.rip, 0xffffffff86c592ebULL);
  EXPECT_TRUE(idle.in_kernel());
  EXPECT_TRUE(idle.halted);
  EXPECT_EQ(idle.rsp, 0xffffcd704009bed8ULL);
  EXPECT_EQ(idle.cr3, 0x00000000013dc000ULL);
}

TEST(VcpuRegisters, ThirtyTwoBitNamesAndMissingFields) {
  Result<std::vector<VcpuRegisters>> cpus = parse_info_registers(
      "CPU#3\nEAX=00000001 EBX=00000000\nESI=0 EDI=0 EBP=00001000 ESP=00000ff0\n"
      "EIP=00001004 EFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0\n");
  ASSERT_TRUE(cpus.ok()) << cpus.error().describe();
  ASSERT_EQ(cpus->size(), 1u);
  EXPECT_EQ((*cpus)[0].index, 3);
  EXPECT_EQ((*cpus)[0].rip, 0x1004u);
  EXPECT_EQ((*cpus)[0].rsp, 0xff0u);
  EXPECT_EQ((*cpus)[0].rbp, 0x1000u);

  Result<std::vector<VcpuRegisters>> error = parse_info_registers("Error: CPU 7 not found\n");
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error().message.find("CPU 7 not found"), std::string::npos) << error.error().message;
  EXPECT_FALSE(parse_info_registers("CPU#0\nRAX=0\n").ok()) << "a block without RIP";
  EXPECT_FALSE(parse_info_registers("CPU#0\nRIP=ffffffff81000000 RFL=00000246\n").ok()) << "a block without CPL";
}

}  // namespace
}  // namespace vperf::guest
