// Separate debuginfo in a fake debug root: a stripped binary whose symbols and DWARF live in
// ROOT/.build-id/01/23...67.debug, made with objcopy --only-keep-debug as Debian's -dbg and
// -dbgsym packages are.
#include "symbols/debuginfo.h"

#include <gtest/gtest.h>

#include "symbols/dso.h"
#include "symbols/elf_file.h"
#include "test_programs.h"

namespace vperf::symbols {
namespace {

struct SplitProgram {
  test::TempTree tree;
  std::filesystem::path binary;
  std::filesystem::path debug_root;
  uint64_t outer = 0;  // nm address of outer_function before stripping
};

// Returns false (and the test skips) without g++/objcopy/strip.
bool make_split_program(SplitProgram& p) {
  if (test::find_program("g++").empty() || test::find_program("objcopy").empty() || test::find_program("strip").empty())
    return false;
  p.binary = test::compile_test_program(p.tree, "prog");
  p.outer = test::nm_address(p.binary, "outer_function");
  p.debug_root = p.tree.root() / "debug";
  auto id = BuildId::from_hex(test::kTestBuildId);
  std::filesystem::path debug_file = build_id_debug_path(p.debug_root, *id);
  std::filesystem::create_directories(debug_file.parent_path());
  EXPECT_EQ(test::run_program({"objcopy", "--only-keep-debug", p.binary.string(), debug_file.string()}).exit_code, 0);
  EXPECT_EQ(test::run_program({"strip", "--strip-all", p.binary.string()}).exit_code, 0);
  return true;
}

TEST(Debuginfo, BuildIdPathLayout) {
  auto id = BuildId::from_hex("abcdef0123");
  EXPECT_EQ(build_id_debug_path("/usr/lib/debug", *id), "/usr/lib/debug/.build-id/ab/cdef0123.debug");
}

TEST(Debuginfo, FindsTheDebugFileByBuildIdInAConfiguredRoot) {
  SplitProgram p;
  if (!make_split_program(p)) GTEST_SKIP() << "needs g++, objcopy and strip";
  SymbolConfig config;
  config.debug_dirs = {p.tree.root() / "elsewhere", p.debug_root};
  auto binary = ElfFile::open(p.binary);
  ASSERT_TRUE(binary.ok());
  EXPECT_FALSE(binary->has_symtab());
  auto candidates = debuginfo_candidates(config, p.binary, binary->build_id(), binary->debuglink());
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates.front(), build_id_debug_path(p.debug_root, *BuildId::from_hex(test::kTestBuildId)));
}

TEST(Debuginfo, DsoTakesSymbolsAndDwarfFromTheDebugFile) {
  SplitProgram p;
  if (!make_split_program(p)) GTEST_SKIP() << "needs g++, objcopy and strip";
  SymbolConfig config;
  config.debug_dirs = {p.debug_root};
  Dso dso(DsoKind::User, p.binary.string(), Dso::elf_loader(config, p.binary.string(), std::nullopt));
  ASSERT_FALSE(dso.load_error().has_value()) << dso.load_error()->describe();
  const Symbol* outer = dso.symbols().find_by_name("outer_function");
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->start, p.outer);
  EXPECT_NE(dso.symbols().find_by_name("demo::Widget::twice"), nullptr);  // demangled
  EXPECT_EQ(dso.contents().symbol_file.parent_path().parent_path().filename(), ".build-id");
  auto line = dso.source_line(p.outer);
  ASSERT_TRUE(line.has_value());
  EXPECT_TRUE(line->file.ends_with("prog.cpp")) << line->file;
}

TEST(Debuginfo, WithoutTheRootOnlyDynamicSymbolsRemain) {
  SplitProgram p;
  if (!make_split_program(p)) GTEST_SKIP() << "needs g++, objcopy and strip";
  SymbolConfig config;
  config.debug_dirs = {p.tree.root() / "empty"};
  Dso dso(DsoKind::User, p.binary.string(), Dso::elf_loader(config, p.binary.string(), std::nullopt));
  EXPECT_EQ(dso.symbols().find_by_name("outer_function"), nullptr);
  EXPECT_FALSE(dso.inline_frames(p.outer).ok());
}

TEST(Debuginfo, AStaleDebugFileWithAnotherBuildIdIsSkipped) {
  SplitProgram p;
  if (!make_split_program(p)) GTEST_SKIP() << "needs g++, objcopy and strip";
  SymbolConfig config;
  config.debug_dirs = {p.debug_root};
  // The recording says the binary had another build-id: neither the binary nor the debug file fits.
  Dso dso(DsoKind::User, p.binary.string(),
          Dso::elf_loader(config, p.binary.string(), BuildId::from_hex("ffffffffffffffffffffffffffffffffffffffff")));
  EXPECT_TRUE(dso.symbols().empty());
  ASSERT_TRUE(dso.load_error().has_value());
  EXPECT_NE(dso.load_error()->message.find("build-id"), std::string::npos) << dso.load_error()->message;
}

TEST(Debuginfo, SystemLibcDebugPackageIsFoundByBuildId) {
  // Skipped only where the files are absent; an existing libc that does not open, or has no
  // build-id (Debian's always has one), is a failure.
  std::filesystem::path libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  VPERF_REQUIRE(std::filesystem::exists(libc), libc.string());
  auto elf = ElfFile::open(libc);
  ASSERT_TRUE(elf.ok()) << elf.error().describe();
  ASSERT_TRUE(elf->build_id().has_value()) << libc << " has no build-id note";
  VPERF_REQUIRE(std::filesystem::exists(build_id_debug_path("/usr/lib/debug", *elf->build_id())),
                "libc6-dbg (the debug file of this libc, by build-id)");
  Dso dso(DsoKind::User, libc.string(), Dso::elf_loader(SymbolConfig{}, libc.string(), std::nullopt));
  // Local symbols exist only in the debug file's .symtab.
  EXPECT_NE(dso.symbols().find_by_name("__libc_start_call_main"), nullptr);
}

}  // namespace
}  // namespace vperf::symbols
