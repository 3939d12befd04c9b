// perf's jitdump format (symbols/jitdump.h) from bytes laid out as the specification gives them,
// and the ELF file written for one function (symbols/jit_elf.h) read back by vperf's own ELF
// reader: the code at the text offset perf's MMAP2 records name, its symbol, its build-id.
#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>
#include <string>
#include <vector>

#include "symbols/elf_file.h"
#include "symbols/jit_elf.h"
#include "symbols/jitdump.h"
#include "core/files.h"
#include "support/fake_event_fs.h"

namespace vperf::symbols {
namespace {

template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

std::vector<uint8_t> header(uint64_t flags = 0, uint32_t magic = kJitdumpMagic, uint32_t version = 1) {
  std::vector<uint8_t> h;
  for (uint32_t word : {magic, version, 40u, uint32_t{EM_X86_64}, 0u, 4242u}) put(h, word);
  put(h, uint64_t{1000});
  put(h, flags);
  return h;
}

void code_load(std::vector<uint8_t>& out, const std::string& name, uint64_t address, uint64_t index, std::vector<uint8_t> code) {
  put(out, uint32_t{0});
  put(out, static_cast<uint32_t>(16 + 8 + 32 + name.size() + 1 + code.size()));
  put(out, uint64_t{2000 + index});
  put(out, uint32_t{4242});
  put(out, uint32_t{4243});
  for (uint64_t v : {address, address, uint64_t{code.size()}, index}) put(out, v);
  out.insert(out.end(), name.begin(), name.end());
  out.push_back(0);
  out.insert(out.end(), code.begin(), code.end());
}

TEST(Jitdump, LoadsMovesAndSkippedKindsInFileOrder) {
  std::vector<uint8_t> bytes = header();
  code_load(bytes, "hot", 0x7f0000001000, 0, {0xc3});
  // A debug-info record (kind 2), skipped by its size.
  put(bytes, uint32_t{2});
  put(bytes, uint32_t{16 + 16});
  put(bytes, uint64_t{2500});
  put(bytes, uint64_t{0x7f0000001000});
  put(bytes, uint64_t{0});
  // A move of function 0.
  put(bytes, uint32_t{1});
  put(bytes, uint32_t{16 + 8 + 40});
  put(bytes, uint64_t{3000});
  put(bytes, uint32_t{4242});
  put(bytes, uint32_t{4243});
  for (uint64_t v : {uint64_t{0x7f0000001000}, uint64_t{0x7f0000001000}, uint64_t{0x7f0000002000}, uint64_t{1}, uint64_t{0}}) put(bytes, v);
  code_load(bytes, "cold", 0x7f0000003000, 1, {0x90, 0xc3});
  Result<Jitdump> dump = parse_jitdump(bytes);
  ASSERT_TRUE(dump.ok()) << dump.error().describe();
  EXPECT_EQ(dump->elf_machine, uint32_t{EM_X86_64});
  EXPECT_EQ(dump->pid, 4242u);
  EXPECT_FALSE(dump->arch_timestamps);
  ASSERT_EQ(dump->entries.size(), 3u);
  EXPECT_EQ(dump->entries[0].load.name, "hot");
  EXPECT_EQ(dump->entries[0].load.code, std::vector<uint8_t>{0xc3});
  EXPECT_EQ(dump->entries[0].load.tid, 4243u);
  EXPECT_EQ(dump->entries[0].load.timestamp, 2000u);
  EXPECT_TRUE(dump->entries[1].is_move);
  EXPECT_EQ(dump->entries[1].move.new_code_addr, 0x7f0000002000u);
  EXPECT_EQ(dump->entries[2].load.name, "cold");
  EXPECT_EQ(dump->entries[2].load.code, (std::vector<uint8_t>{0x90, 0xc3}));
  EXPECT_EQ(dump->skipped_records, 1u);
  EXPECT_FALSE(dump->truncated);
}

// A JIT still writing leaves its last record cut: what came before it stands. CODE_CLOSE ends
// the file whatever follows.
TEST(Jitdump, ACutLastRecordEndsTheFileAndCloseEndsIt) {
  std::vector<uint8_t> bytes = header();
  code_load(bytes, "first", 0x1000, 0, {0xc3});
  std::vector<uint8_t> second;
  code_load(second, "second", 0x2000, 1, {0xc3, 0xc3});
  bytes.insert(bytes.end(), second.begin(), second.end() - 3);
  Result<Jitdump> cut = parse_jitdump(bytes);
  ASSERT_TRUE(cut.ok()) << cut.error().describe();
  EXPECT_EQ(cut->entries.size(), 1u);
  EXPECT_TRUE(cut->truncated);

  std::vector<uint8_t> closed = header();
  put(closed, uint32_t{3});
  put(closed, uint32_t{16});
  put(closed, uint64_t{5});
  code_load(closed, "after", 0x3000, 2, {0xc3});
  Result<Jitdump> ended = parse_jitdump(closed);
  ASSERT_TRUE(ended.ok());
  EXPECT_TRUE(ended->entries.empty());
}

// Sizes come from the file and are bounded by it: a code size larger than its record, a name
// without its NUL, a bad magic, a newer version, a header cut short are each one Error.
TEST(Jitdump, MalformedInputIsAnErrorNamingIt) {
  std::vector<uint8_t> big_code = header();
  code_load(big_code, "f", 0x1000, 0, {0xc3});
  std::memcpy(big_code.data() + 40 + 16 + 8 + 16, "\xff\xff\xff\xff\xff\xff\xff\x7f", 8);  // code_size
  EXPECT_NE(parse_jitdump(big_code).error().message.find("larger than the record"), std::string::npos);
  std::vector<uint8_t> no_nul = header();
  code_load(no_nul, "f", 0x1000, 0, {});
  no_nul.back() = 'g';  // the name's NUL
  EXPECT_FALSE(parse_jitdump(no_nul).ok());
  EXPECT_NE(parse_jitdump(header(0, 0x12345678)).error().message.find("not a jitdump"), std::string::npos);
  EXPECT_NE(parse_jitdump(header(0, __builtin_bswap32(kJitdumpMagic))).error().message.find("other byte order"), std::string::npos);
  EXPECT_NE(parse_jitdump(header(0, kJitdumpMagic, 2)).error().message.find("version 2"), std::string::npos);
  std::vector<uint8_t> short_header = header();
  short_header.resize(20);
  EXPECT_FALSE(parse_jitdump(short_header).ok());
  EXPECT_TRUE(parse_jitdump(header(1)).value().arch_timestamps);
}

TEST(Jitdump, MarkersAreJitPidDotDumpOfTheMappingProcess) {
  EXPECT_TRUE(is_jitdump_marker("/tmp/jit-4242.dump", 4242));
  EXPECT_TRUE(is_jitdump_marker("/home/u/.debug/jit/java-jit-20240101/jit-7.dump", 0));
  EXPECT_FALSE(is_jitdump_marker("/tmp/jit-4242.dump", 4243));
  EXPECT_FALSE(is_jitdump_marker("jit-4242.dump", 4242));  // perf wants a directory
  EXPECT_FALSE(is_jitdump_marker("/tmp/jit-.dump", 0));
  EXPECT_FALSE(is_jitdump_marker("/tmp/jit-42x.dump", 0));
  EXPECT_FALSE(is_jitdump_marker("/tmp/jit-42.dump.old", 42));
  EXPECT_FALSE(is_jitdump_marker("/tmp/perf-42.map", 42));
}

TEST(JitElf, HoldsTheCodeAtItsTextOffsetWithItsSymbolAndBuildId) {
  test::TempTree dir;
  const std::vector<uint8_t> code = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
  const std::filesystem::path path = dir.root() / "jitted-1-0.so";
  Result<std::vector<uint8_t>> id = write_jit_elf(path, EM_X86_64, "jit_hot", 0x7f0000001000, code);
  ASSERT_TRUE(id.ok()) << id.error().describe();
  EXPECT_EQ(id->size(), 20u);
  Result<ElfFile> elf = ElfFile::open(path);
  ASSERT_TRUE(elf.ok()) << elf.error().describe();
  EXPECT_EQ(elf->type(), uint16_t{ET_DYN});
  ASSERT_TRUE(elf->build_id().has_value());
  EXPECT_EQ(elf->build_id()->bytes, *id);
  std::vector<SymbolSource> symbols = elf->function_symbols();
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols[0].name, "jit_hot");
  EXPECT_EQ(symbols[0].start, kJitElfTextOffset);
  EXPECT_EQ(symbols[0].size, code.size());
  std::vector<LoadSegment> segments = elf->load_segments();
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(file_offset_to_vaddr(segments, kJitElfTextOffset), kJitElfTextOffset);
  // The bytes at the text offset are the code.
  Result<std::string> bytes = read_file(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(kJitElfTextOffset, code.size()), std::string(code.begin(), code.end()));
  // Another function, another id; the same one again, the same id.
  EXPECT_NE(write_jit_elf(dir.root() / "b.so", EM_X86_64, "jit_cold", 0x7f0000001040, code).value(), *id);
  EXPECT_EQ(write_jit_elf(dir.root() / "c.so", EM_X86_64, "jit_hot", 0x7f0000001000, code).value(), *id);
}

}  // namespace
}  // namespace vperf::symbols
