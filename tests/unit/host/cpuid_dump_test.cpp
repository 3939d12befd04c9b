#include "host/cpuid_dump.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace vperf::host {
namespace {

const std::filesystem::path kDumps = std::filesystem::path(VPERF_TESTDATA) / "cpuid";

CpuidDump parse_ok(std::string_view text) {
  auto r = parse_cpuid_dump(text, "test.txt");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : CpuidDump{};
}

std::string parse_error(std::string_view text) {
  auto r = parse_cpuid_dump(text, "bad.txt");
  EXPECT_FALSE(r.ok()) << "parsed although it should not";
  return r.ok() ? "" : r.error().message;
}

TEST(CpuidDumpParser, CpuidRSingleCpu) {
  auto dump = parse_ok(
      "Disclaimer: cpuid may not support decoding of all cpuid registers.\n"
      "CPU:\n"
      "   0x00000000 0x00: eax=0x00000020 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
      "  0x00000004 0x01: eax=0x04000122 ebx=0x01c0003f ecx=0x0000003f edx=0x00000000\n");
  EXPECT_EQ(dump.format, CpuidDumpFormat::CpuidR);
  ASSERT_EQ(dump.cpus.size(), 1u);
  EXPECT_EQ(dump.cpus[0].number, 0);
  EXPECT_EQ(dump.cpus[0].leaves.at({0, 0}).eax, 0x20u);
  EXPECT_EQ(dump.cpus[0].leaves.at({4, 1}), (CpuidRegs{0x04000122, 0x01c0003f, 0x3f, 0}));
}

TEST(CpuidDumpParser, CpuidRSeveralCpusAndCrlf) {
  auto dump = parse_ok(
      "CPU 0:\r\n   0x00000000 0x00: eax=0x00000016 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\r\n"
      "CPU 1:\r\n   0x00000000 0x00: eax=0x00000017 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\r\n");
  ASSERT_EQ(dump.cpus.size(), 2u);
  EXPECT_EQ(dump.cpus[1].number, 1);
  EXPECT_EQ(dump.cpus[1].leaves.at({0, 0}).eax, 0x17u);
  EXPECT_EQ(select_dump_cpu(dump, 1).value(), 1u);
  EXPECT_EQ(select_dump_cpu(dump, std::nullopt).value(), 0u);
}

TEST(CpuidDumpParser, Aida64NewHeaderWithSubleafTagsAndLabels) {
  auto dump = parse_ok(
      "------[ CPUID Registers / Logical CPU #16 ]------\n"
      "CPUID 00000000: 00000020-756E6547-6C65746E-49656E69 [GenuineIntel]\n"
      "CPUID 0000000D: 00000207-00000340-00000A88-00000000 [SL 00] [x87]\n"
      "CPUID 0000000D: 00000008-00000A80-00000000-00000000 [SL 09] [PKRU]\n"
      "CPUID 80000004: 00000000-00000000-00000000-00000000 []\n"
      "CPUID 80000006: 48002200-68004200-02006140-03009140 [L2: 512 KB] / L3: 98304 KB]\n"
      "MSR 00000017: 00000000-00000000\n");
  EXPECT_EQ(dump.format, CpuidDumpFormat::Aida64);
  ASSERT_EQ(dump.cpus.size(), 1u);
  EXPECT_EQ(dump.cpus[0].number, 16);
  EXPECT_EQ(dump.cpus[0].leaves.size(), 5u);
  EXPECT_EQ(dump.cpus[0].leaves.at({0xD, 9}).ebx, 0xA80u);
  EXPECT_EQ(dump.cpus[0].leaves.count({0xD, 1}), 0u);
}

TEST(CpuidDumpParser, Aida64OldHeaderRepeatedLeavesAreImplicitSubleaves) {
  auto dump = parse_ok(
      "------[ Logical CPU #0 ]------\n"
      "CPUID 00000004: 1C004121-01C0003F-0000003F-00000000\n"
      "CPUID 00000004: 1C004122-01C0003F-0000003F-00000000\n"
      "CPUID 00000004: 1C004143-01C0003F-000001FF-00000000\n"
      "CPUID 0000000A: 07300403-00000000-00000000-00000603\n");
  ASSERT_EQ(dump.cpus.size(), 1u);
  const auto& leaves = dump.cpus[0].leaves;
  EXPECT_EQ(leaves.at({4, 0}).eax, 0x1C004121u);
  EXPECT_EQ(leaves.at({4, 1}).eax, 0x1C004122u);
  EXPECT_EQ(leaves.at({4, 2}).eax, 0x1C004143u);
  EXPECT_EQ(leaves.at({0xA, 0}).eax, 0x07300403u);
}

TEST(CpuidDumpParser, IvyBridgeFileHasImplicitSubleaves) {
  auto dump = load_cpuid_dump(kDumps / "intel-ivybridge-i7-3770k-baremetal.txt");
  ASSERT_TRUE(dump.ok()) << dump.error().message;
  const auto& leaves = dump->cpus.at(0).leaves;
  EXPECT_EQ(leaves.at({4, 3}).eax, 0x1C03C163u);
  EXPECT_EQ(leaves.at({0xB, 1}).ebx, 0x8u);
  EXPECT_EQ(leaves.at({0xD, 1}).eax, 0x100u);
  EXPECT_EQ(leaves.count({4, 4}), 0u);
}

TEST(CpuidDumpParser, AidaSectionsOtherThanCpusAreSkipped) {
  auto dump = parse_ok(
      "InstLatX64 header text\n"
      "------[ Versions ]------\n"
      "Program Version : 6.60\n"
      "------[ Logical CPU #2 ]------\n"
      "CPUID 00000000: 0000000D-756E6547-6C65746E-49656E69\n");
  ASSERT_EQ(dump.cpus.size(), 1u);
  EXPECT_EQ(dump.cpus[0].number, 2);
}

TEST(CpuidDumpParser, ErrorsNameFileLineAndToken) {
  EXPECT_EQ(parse_error("CPU:\n   0x0000000a 0x00: eax=0x0730040 ebx=0x00000000 ecx=0x00000000 edx=0xZZ\n"),
            "bad.txt:2: bad register value 'edx=0xZZ'");
  EXPECT_EQ(parse_error("------[ Logical CPU #0 ]------\nCPUID 0000000A: 07300403-00000000-00000000\n"),
            "bad.txt:2: expected four registers EAX-EBX-ECX-EDX '07300403-00000000-00000000'");
  EXPECT_EQ(parse_error("------[ Logical CPU #0 ]------\nCPUID 0000000A: 07300403-00000000-00000000-0603\n"),
            "bad.txt:2: bad register value '0603'");
  EXPECT_EQ(parse_error("CPU:\n0x0000000a 0x00 eax=0x1 ebx=0x0 ecx=0x0 edx=0x0\n"),
            "bad.txt:2: missing ':' after the subleaf '0x00'");
  EXPECT_EQ(parse_error("CPU:\n0x0000000a 0x00: eax=0x1 ebx=0x0 ecx=0x0\n").substr(0, 11), "bad.txt:2: ");
  EXPECT_EQ(parse_error("CPU:\n0x123456789 0x00: eax=0x1 ebx=0x0 ecx=0x0 edx=0x0\n"),
            "bad.txt:2: bad leaf number '0x123456789'");
  EXPECT_EQ(parse_error("CPU:\nhello world\n"),
            "bad.txt:2: unrecognized line in a CPU section (expected a CPUID record) 'hello world'");
  EXPECT_EQ(parse_error("------[ Logical CPU #x ]------\n"),
            "bad.txt:1: bad CPU number in section header '------[ Logical CPU #x ]------'");
  EXPECT_EQ(parse_error("------[ Logical CPU #0 ]------\nCPUID 00000007: 0-0-0-0 [SL 00\n"),
            "bad.txt:2: bad register value '0'");
  EXPECT_EQ(parse_error("------[ Logical CPU #0 ]------\nCPUID 00000007: 00000000-00000000-00000000-00000000 [SL 0\n"),
            "bad.txt:2: unclosed subleaf tag '[SL 0'");
  EXPECT_EQ(parse_error("------[ Logical CPU #0 ]------\nCPUID 00000007: 00000000-00000000-00000000-00000000 [SL zz]\n"),
            "bad.txt:2: bad subleaf tag '[SL zz]'");
  EXPECT_EQ(parse_error("------[ Logical CPU #0 ]------\nCPUID 00000007: 00000000-00000000-00000000-00000000 junk\n"),
            "bad.txt:2: unexpected text after the registers 'junk'");
}

TEST(CpuidDumpParser, DuplicateRecordIsAnError) {
  auto msg = parse_error(
      "CPU:\n0x00000000 0x00: eax=0x1 ebx=0x0 ecx=0x0 edx=0x0\n0x00000000 0x00: eax=0x2 ebx=0x0 ecx=0x0 edx=0x0\n");
  EXPECT_NE(msg.find("bad.txt:3: leaf 0x0 subleaf 0x0 appears twice"), std::string::npos) << msg;
}

TEST(CpuidDumpParser, FileWithoutRecordsIsAnError) {
  EXPECT_NE(parse_error("").find("bad.txt: no CPUID records found"), std::string::npos);
  EXPECT_NE(parse_error("just some prose\nand more\n").find("no CPUID records"), std::string::npos);
}

TEST(CpuidDumpParser, SelectingAMissingCpuListsTheOnesThere) {
  auto dump = load_cpuid_dump(kDumps / "intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt");
  ASSERT_TRUE(dump.ok()) << dump.error().message;
  ASSERT_EQ(dump->cpus.size(), 2u);
  EXPECT_EQ(select_dump_cpu(*dump, 4).value(), 1u);
  auto missing = select_dump_cpu(*dump, 3);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            (kDumps / "intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt").string() + " has no CPU 3; it has CPU 0 or 4");
}

TEST(CpuidDumpParser, MissingFileIsAnErrorWithErrno) {
  auto r = load_cpuid_dump(kDumps / "no-such-dump.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, ENOENT);
}

TEST(CpuidDumpParser, EveryTestdataDumpParses) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDumps)) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    auto dump = load_cpuid_dump(entry.path());
    ASSERT_TRUE(dump.ok()) << dump.error().message;
    EXPECT_FALSE(dump->cpus.empty()) << entry.path();
    EXPECT_TRUE(dump->cpus[0].leaves.count({0, 0})) << entry.path();
  }
  EXPECT_EQ(files, 16);
}

TEST(DumpCpuidSource, AnswersOnlyWhatTheDumpHolds) {
  auto dump = parse_ok("CPU 3:\n0x00000000 0x00: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4\n");
  DumpCpuidSource source(dump, 0);
  EXPECT_EQ(source.query(0, 0), (CpuidRegs{1, 2, 3, 4}));
  EXPECT_EQ(source.query(0, 1), std::nullopt);
  EXPECT_EQ(source.query(1, 0), std::nullopt);
  EXPECT_EQ(source.describe(), "dump test.txt, CPU 3");
}

}  // namespace
}  // namespace vperf::host
