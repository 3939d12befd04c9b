#include "symbols/elf_file.h"

#include <gtest/gtest.h>

#include <regex>

#include "symbols/build_id.h"
#include "symbols/demangle.h"
#include "symbols/dso.h"
#include "test_programs.h"

namespace vperf::symbols {
namespace {

// The build-id `readelf -n` prints for a file.
std::string readelf_build_id(const std::filesystem::path& path) {
  test::ProgramResult r = test::run_program({"readelf", "-n", path.string()});
  std::smatch m;
  static const std::regex re("Build ID: ([0-9a-f]+)");
  return std::regex_search(r.out, m, re) ? m[1].str() : "";
}

TEST(BuildId, HexRoundTrip) {
  auto id = BuildId::from_hex("00ff10ab");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->bytes, (std::vector<uint8_t>{0x00, 0xff, 0x10, 0xab}));
  EXPECT_EQ(id->hex(), "00ff10ab");
  EXPECT_FALSE(BuildId::from_hex("abc").has_value());
  EXPECT_FALSE(BuildId::from_hex("zz").has_value());
  EXPECT_FALSE(BuildId::from_hex("").has_value());
}

TEST(ElfFile, BuildIdMatchesReadelf) {
  VPERF_REQUIRE(!test::find_program("readelf").empty(), "readelf");
  for (std::filesystem::path path : {std::filesystem::path(VPERF_WORKLOAD), std::filesystem::path("/usr/lib/x86_64-linux-gnu/libc.so.6")}) {
    if (!std::filesystem::exists(path)) continue;
    auto elf = ElfFile::open(path);
    ASSERT_TRUE(elf.ok()) << elf.error().describe();
    auto id = elf->build_id();
    ASSERT_TRUE(id.has_value()) << path;
    EXPECT_EQ(id->hex(), readelf_build_id(path)) << path;
  }
}

TEST(ElfFile, FixedBuildIdOfACompiledProgram) {
  VPERF_REQUIRE(!test::find_program("g++").empty(), "g++");
  test::TempTree tree;
  auto path = test::compile_test_program(tree, "prog");
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf.ok()) << elf.error().describe();
  ASSERT_TRUE(elf->build_id().has_value());
  EXPECT_EQ(elf->build_id()->hex(), test::kTestBuildId);
  EXPECT_TRUE(elf->has_symtab());
  EXPECT_TRUE(elf->has_debug_info());
}

TEST(ElfFile, WorkloadFunctionsMatchNm) {
  VPERF_REQUIRE(!test::find_program("nm").empty(), "nm");
  auto elf = ElfFile::open(VPERF_WORKLOAD);
  ASSERT_TRUE(elf.ok()) << elf.error().describe();
  EXPECT_EQ(elf->type(), ET_DYN);  // a PIE
  auto table = SymbolTable::build(elf->function_symbols(), SizeInference::Elf);
  for (const char* name : {"spin_leaf_hash", "spin_leaf_math", "spin_phase_hash", "spin_phase_math", "spin_phase_outer"}) {
    uint64_t nm = test::nm_address(VPERF_WORKLOAD, name);
    ASSERT_NE(nm, 0u) << name;
    const Symbol* sym = table.find_by_name(name);
    ASSERT_NE(sym, nullptr) << name;
    EXPECT_EQ(sym->start, nm) << name;
    EXPECT_EQ(table.find(nm + 1)->name, name);
  }
}

TEST(ElfFile, StrippedFileFallsBackToDynsym) {
  VPERF_REQUIRE(!test::find_program("g++").empty(), "g++");
  test::TempTree tree;
  auto path = test::compile_test_program(tree, "prog", {"-rdynamic", "-s"});
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf.ok());
  EXPECT_FALSE(elf->has_symtab());
  auto table = SymbolTable::build(elf->function_symbols(), SizeInference::Elf);
  EXPECT_NE(table.find_by_name("outer_function"), nullptr);  // exported by -rdynamic
}

TEST(ElfFile, FileOffsetsMapThroughTheExecutableSegment) {
  std::vector<LoadSegment> segs{{0x0, 0x0, 0x1058, 0x1058, false},
                                {0x2000, 0x2000, 0x3661, 0x3661, true},
                                {0x8db0, 0x7db0, 0x348, 0x388, false}};
  EXPECT_EQ(file_offset_to_vaddr(segs, 0x2dab), 0x2dabu);
  EXPECT_EQ(file_offset_to_vaddr(segs, 0x7dc0), 0x8dc0u);
  EXPECT_EQ(file_offset_to_vaddr(segs, 0x100000), std::nullopt);
  // A prelinked-style layout where vaddr and offset differ in the text segment.
  std::vector<LoadSegment> shifted{{0x400000, 0x1000, 0x5000, 0x5000, true}};
  EXPECT_EQ(file_offset_to_vaddr(shifted, 0x1234), 0x400234u);
}

TEST(ElfFile, NotAnElfIsAnError) {
  test::TempTree tree;
  tree.write("text", "hello");
  EXPECT_FALSE(ElfFile::open(tree.root() / "text").ok());
  EXPECT_FALSE(ElfFile::open(tree.root() / "absent").ok());
  EXPECT_FALSE(ElfFile::from_image(std::vector<char>(64, 'x'), "junk").ok());
}

}  // namespace
}  // namespace vperf::symbols

namespace vperf::symbols {
namespace {

TEST(ElfFile, PltEntriesGetNameAtPltSymbolsAsPerfSynthesizes) {
  auto elf = ElfFile::open(VPERF_WORKLOAD);
  ASSERT_TRUE(elf.ok()) << elf.error().describe();
  auto names = std::make_shared<SymbolNames>();
  auto plt = elf->plt_symbols(*names);
  ASSERT_GT(plt.size(), 2u);
  // No symbol for the PLT header (perf 6.1 has none): entries follow in .rela.plt order, one
  // entry size apart.
  EXPECT_TRUE(plt[0].name.ends_with("@plt")) << plt[0].name;
  EXPECT_TRUE(plt[1].name.ends_with("@plt")) << plt[1].name;
  EXPECT_EQ(plt[2].start, plt[1].start + plt[1].size);
  auto table = SymbolTable::build(plt, SizeInference::Elf, names);
  EXPECT_NE(table.find_by_name("syscall@plt"), nullptr);
  // perf demangles the target's name, then appends "@plt" (the demangler itself drops what
  // follows a mangled name): so do demangle and the DSO's table.
  EXPECT_EQ(demangle("_ZSt17__throw_bad_allocv@plt"), "std::__throw_bad_alloc@plt");
  Dso dso(DsoKind::User, VPERF_WORKLOAD, Dso::elf_loader(SymbolConfig{}, VPERF_WORKLOAD, std::nullopt));
  EXPECT_NE(dso.symbols().find_by_name("std::__throw_bad_alloc@plt"), nullptr);
}

}  // namespace
}  // namespace vperf::symbols
