// Reading a symbol's code: from an ELF file's section (checked against the same function's
// bytes as this test program runs them) and from an ELF core file's PT_LOAD segments (a
// synthetic /proc/kcore).
#include <elf.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "report/annotate_code.h"
#include "support/fake_event_fs.h"

extern "C" __attribute__((noinline, used)) int vperf_annotate_code_probe(int x) {
  return x * 7 + 3;  // some code whose bytes the test compares
}

namespace vperf::report {
namespace {

TEST(AnnotateCode, ElfBytesAreTheBytesThatRun) {
  auto elf = symbols::ElfFile::open("/proc/self/exe");
  ASSERT_TRUE(elf) << elf.error().describe();
  std::optional<symbols::SymbolSource> probe;
  for (const auto& s : elf->function_symbols())
    if (s.name == "vperf_annotate_code_probe") probe = s;
  ASSERT_TRUE(probe.has_value()) << "the test binary has no symbol for its probe function";
  ASSERT_GT(probe->size, 0u);
  auto code = read_elf_code(*elf, probe->start, probe->size);
  ASSERT_TRUE(code) << code.error().describe();
  EXPECT_EQ(code->section, ".text");
  EXPECT_EQ(code->address, probe->start);
  ASSERT_EQ(code->bytes.size(), probe->size);
  const auto* running = reinterpret_cast<const uint8_t*>(&vperf_annotate_code_probe);
  EXPECT_EQ(std::memcmp(code->bytes.data(), running, probe->size), 0);
}

TEST(AnnotateCode, ElfAddressOutsideEverySectionIsAnError) {
  auto elf = symbols::ElfFile::open("/proc/self/exe");
  ASSERT_TRUE(elf);
  auto code = read_elf_code(*elf, 0xffffffff00000000ULL, 16);
  ASSERT_FALSE(code);
  EXPECT_NE(code.error().message.find("no section holds"), std::string::npos) << code.error().message;
}

// An ELF core file with two PT_LOAD segments, the second mapping `payload` at 0xffffffff81000000.
std::string fake_core(const std::vector<uint8_t>& payload) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_CORE;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 2;
  Elf64_Phdr other{};
  other.p_type = PT_LOAD;
  other.p_vaddr = 0xffff888000000000ULL;
  other.p_offset = 0x1000;
  other.p_filesz = 0x10;
  Elf64_Phdr text{};
  text.p_type = PT_LOAD;
  text.p_vaddr = 0xffffffff81000000ULL;
  text.p_offset = 0x2000;
  text.p_filesz = payload.size();
  std::string file(0x2000 + payload.size(), '\0');
  std::memcpy(file.data(), &eh, sizeof eh);
  std::memcpy(file.data() + sizeof eh, &other, sizeof other);
  std::memcpy(file.data() + sizeof eh + sizeof other, &text, sizeof text);
  std::memset(file.data() + 0x1000, 0xcc, 0x10);
  std::memcpy(file.data() + 0x2000, payload.data(), payload.size());
  return file;
}

TEST(AnnotateCode, CoreFileSegmentsMapKernelAddresses) {
  test::TempTree tree;
  std::vector<uint8_t> payload = {0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55, 0x48, 0x89, 0xe5, 0xc3};
  tree.write("kcore", fake_core(payload));
  auto code = read_core_code(tree.root() / "kcore", 0xffffffff81000005ULL, 4);
  ASSERT_TRUE(code) << code.error().describe();
  EXPECT_EQ(code->address, 0xffffffff81000005ULL);
  EXPECT_EQ(code->bytes, (std::vector<uint8_t>{0x55, 0x48, 0x89, 0xe5}));
  EXPECT_TRUE(code->section.empty());
  // Cut at the segment's end.
  auto tail = read_core_code(tree.root() / "kcore", 0xffffffff81000008ULL, 100);
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->bytes, (std::vector<uint8_t>{0xe5, 0xc3}));
}

TEST(AnnotateCode, CoreFileErrorsSayWhy) {
  test::TempTree tree;
  tree.write("kcore", fake_core({0xc3}));
  auto unmapped = read_core_code(tree.root() / "kcore", 0xffffffffa0000000ULL, 4);
  ASSERT_FALSE(unmapped);
  EXPECT_NE(unmapped.error().message.find("no segment maps"), std::string::npos);
  tree.write("garbage", std::string(200, 'x'));
  auto garbage = read_core_code(tree.root() / "garbage", 0xffffffff81000000ULL, 4);
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().message.find("not a 64-bit ELF core file"), std::string::npos);
  auto missing = read_core_code(tree.root() / "none", 0xffffffff81000000ULL, 4);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().errno_value, ENOENT);
}

TEST(AnnotateCode, JitCodeCannotBeRead) {
  symbols::Dso jit(symbols::DsoKind::Jit, "/tmp/perf-42.map", {});
  symbols::Symbol s{0x1000, 0x1010, "jitted", symbols::SymbolBinding::Global};
  auto code = read_symbol_code(jit, s, CodeSources{});
  ASSERT_FALSE(code);
  EXPECT_NE(code.error().message.find("JIT"), std::string::npos);
}

}  // namespace
}  // namespace vperf::report
