#include "symbols/function_probe_points.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <limits>

#include "support/fake_event_fs.h"

namespace vperf::symbols {
namespace {

// probe_target's instruction starts in the -O0 workload (objdump: push %rbp; mov %rsp,%rbp; ...).
const std::vector<uint64_t> kStarts = {0, 1, 4, 7, 11};

TEST(CheckFunctionOffset, OnlyInstructionStartsInsideTheFunctionAreProbePoints) {
  for (uint64_t offset : kStarts) EXPECT_TRUE(check_function_offset("probe_target", 15, offset, kStarts).ok()) << offset;
  Result<void> inside = check_function_offset("probe_target", 15, 2, kStarts);
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.error().message,
            "probe_target+2 is inside an instruction of probe_target (15 bytes): the nearest instruction boundaries are +1 and +4");
  Result<void> last = check_function_offset("probe_target", 15, 14, kStarts);
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.error().message,
            "probe_target+14 is inside an instruction of probe_target (15 bytes): the nearest instruction boundaries are +11 and the function's end, +15");
  for (uint64_t past : {uint64_t{15}, uint64_t{16}, std::numeric_limits<uint64_t>::max()}) {
    Result<void> refused = check_function_offset("probe_target", 15, past, kStarts);
    ASSERT_FALSE(refused.ok()) << past;
    EXPECT_EQ(refused.error().message, "probe_target+" + std::to_string(past) + " is past the end of probe_target, which is 15 bytes long");
    EXPECT_NE(refused.error().hint.find("from 0 to 14"), std::string::npos) << refused.error().hint;
  }
}

// Where the boundaries cannot be known, an offset cannot be proven: refused with the reason;
// the entry needs no proof.
TEST(CheckFunctionOffset, AnUnprovableOffsetIsRefusedWithTheReason) {
  const Result<std::vector<uint64_t>> unknown = Error{"its byte at +3 decodes to no x86-64 instruction capstone knows"};
  EXPECT_TRUE(check_function_offset("f", 10, 0, unknown).ok());
  Result<void> refused = check_function_offset("f", 10, 4, unknown);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "f+4 cannot be proven to be the start of an instruction: its byte at +3 decodes to no x86-64 instruction capstone knows");
}

// The symbol table's path: a function's offset is checked against its size (a symbol of size 0
// ends at the next one), decoded only when inside it, and the sum never wraps.
TEST(FunctionProbePoints, OffsetsAreCheckedAgainstEachInstanceOfTheFunction) {
  SymbolNames names;
  const std::vector<SymbolSource> symbols = {{0x1000, 0x20, names.keep("f")}, {0x1020, 0, names.keep("g")}, {0x1030, 0x10, names.keep("h")}};
  const std::vector<LoadSegment> segments = {{0x1000, 0x1000, 0x100, 0x100, true}};
  std::vector<std::pair<uint64_t, uint64_t>> decoded;
  auto starts = [&](uint64_t entry, uint64_t size) -> Result<std::vector<uint64_t>> {
    decoded.emplace_back(entry, size);
    return std::vector<uint64_t>{0, 2, 4, 8};
  };
  Result<std::vector<FunctionProbePoint>> points = function_probe_points(symbols, segments, "lib.so", "f", 4, starts);
  ASSERT_TRUE(points.ok()) << points.error().describe();
  EXPECT_EQ(points->front().address, 0x1004u);
  EXPECT_EQ(points->front().file_offset, 0x1004u);
  EXPECT_FALSE(function_probe_points(symbols, segments, "lib.so", "f", 3, starts).ok());
  EXPECT_EQ(decoded, (std::vector<std::pair<uint64_t, uint64_t>>{{0x1000, 0x20}, {0x1000, 0x20}}));
  // g has no size: it ends where h starts, 16 bytes on.
  EXPECT_TRUE(function_probe_points(symbols, segments, "lib.so", "g", 8, starts).ok());
  Result<std::vector<FunctionProbePoint>> past = function_probe_points(symbols, segments, "lib.so", "g", 16, starts);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().message, "g+16 is past the end of g, which is 16 bytes long");
  decoded.clear();
  Result<std::vector<FunctionProbePoint>> wrapped =
      function_probe_points(symbols, segments, "lib.so", "h", std::numeric_limits<uint64_t>::max(), starts);
  ASSERT_FALSE(wrapped.ok());
  EXPECT_EQ(wrapped.error().message, "h+18446744073709551615 is past the end of h, which is 16 bytes long");
  EXPECT_TRUE(decoded.empty());
  EXPECT_EQ(function_probe_points(symbols, segments, "lib.so", "nothing", 0, starts).error().message, "no function nothing in lib.so");
}

// What is not an ELF file is named for what it is, and a FIFO is never opened (the test would
// block in open() otherwise).
TEST(OpenProbeTarget, WhatIsNoElfFileIsNamed) {
  test::TempTree dir;
  const std::filesystem::path fifo = dir.root() / "fifo", empty = dir.root() / "empty", truncated = dir.root() / "truncated";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(empty.string()).close();
  std::filesystem::copy_file(VPERF_WORKLOAD, truncated);
  EXPECT_TRUE(open_probe_target(truncated).ok());
  const uint64_t whole = std::filesystem::file_size(truncated);
  auto message = [](const std::filesystem::path& path) {
    Result<ElfFile> elf = open_probe_target(path);
    return elf.ok() ? std::string("opened") : elf.error().message;
  };
  EXPECT_EQ(message(dir.root()), dir.root().string() + " is a directory, not a regular file");
  EXPECT_EQ(message(fifo), fifo.string() + " is a FIFO, not a regular file");
  EXPECT_EQ(message("/dev/zero"), "/dev/zero is a character device, not a regular file");
  EXPECT_EQ(message(empty), empty.string() + ": not an ELF file");
  std::filesystem::resize_file(truncated, whole - 1);  // the section headers come last
  EXPECT_EQ(message(truncated), truncated.string() + " is a truncated ELF file: its section headers end at byte " + std::to_string(whole) +
                                    ", past its end (" + std::to_string(whole - 1) + " bytes)");
  std::filesystem::resize_file(truncated, 40);  // not even the header
  EXPECT_EQ(message(truncated), truncated.string() + " is a truncated or damaged ELF file: libelf cannot read it (elf_begin " + truncated.string() +
                                    ": invalid ELF file data; 40 bytes)");
}

}  // namespace
}  // namespace vperf::symbols
