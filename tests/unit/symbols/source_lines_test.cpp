#include "symbols/source_lines.h"

#include <gtest/gtest.h>

#include "symbols/dso.h"
#include "symbols/elf_file.h"
#include "test_programs.h"

namespace vperf::symbols {
namespace {

TEST(SourceLines, InlinedCalleeComesFirstWithTheCallSiteOfItsCaller) {
  VPERF_REQUIRE(!test::find_program("g++").empty(), "g++");
  test::TempTree tree;
  auto path = test::compile_test_program(tree, "prog");
  auto info = DwarfInfo::open(path);
  ASSERT_TRUE(info.ok()) << info.error().describe();
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf.ok());
  auto table = SymbolTable::build(elf->function_symbols(), SizeInference::Elf);
  const Symbol* outer = table.find_by_name("outer_function");
  ASSERT_NE(outer, nullptr);

  // Some address of outer_function is inlined code of inner_add.
  bool found_inline = false;
  for (uint64_t a = outer->start; a < outer->end && !found_inline; ++a) {
    auto frames = info->frames_at(a);
    if (!frames.ok() || frames->size() < 2) continue;
    found_inline = true;
    EXPECT_EQ((*frames)[0].function, "inner_add");
    EXPECT_TRUE((*frames)[0].inlined);
    EXPECT_GE((*frames)[0].location.line, 10);  // "volatile int sink = a;" or "return sink + b;"
    EXPECT_LE((*frames)[0].location.line, 11);
    EXPECT_EQ(frames->back().function, "outer_function");
    EXPECT_FALSE(frames->back().inlined);
    EXPECT_EQ(frames->back().location.line, 14);  // the call "int r = inner_add(x, 3);"
    EXPECT_TRUE(frames->back().location.file.ends_with("prog.cpp")) << frames->back().location.file;
  }
  EXPECT_TRUE(found_inline) << "no inlined frame found in outer_function";

  // An address of a function with nothing inlined: one frame, its own line.
  const Symbol* twice = table.find_by_name("_ZNK4demo6Widget5twiceEi");
  ASSERT_NE(twice, nullptr);
  auto frames = info->frames_at(twice->start);
  ASSERT_TRUE(frames.ok()) << frames.error().describe();
  ASSERT_EQ(frames->size(), 1u);
  EXPECT_EQ((*frames)[0].function, "demo::Widget::twice");
  EXPECT_EQ((*frames)[0].location.line, 7);
}

// vperf-workload-dwarf's `inline` workload, designed for this: inline_outer's hot loop is
// inline_inner's, inlined through inline_middle (src/workloads/inline.cpp).
TEST(SourceLines, TheWorkloadsDesignedInlineChain) {
  auto info = DwarfInfo::open(VPERF_WORKLOAD_DWARF);
  ASSERT_TRUE(info.ok()) << info.error().describe();
  auto elf = ElfFile::open(VPERF_WORKLOAD_DWARF);
  ASSERT_TRUE(elf.ok());
  auto table = SymbolTable::build(elf->function_symbols(), SizeInference::Elf);
  const Symbol* outer = table.find_by_name("inline_outer");
  ASSERT_NE(outer, nullptr);
  size_t full_chains = 0;
  for (uint64_t a = outer->start; a < outer->end; ++a) {
    auto frames = info->frames_at(a);
    ASSERT_TRUE(frames.ok()) << frames.error().describe();
    EXPECT_EQ(frames->back().function, "inline_outer");
    if (frames->size() != 3) continue;
    ++full_chains;
    EXPECT_EQ((*frames)[0].function, "inline_inner");
    EXPECT_EQ((*frames)[1].function, "inline_middle");
    EXPECT_TRUE((*frames)[0].inlined && (*frames)[1].inlined);
  }
  EXPECT_GT(full_chains, 0u) << "no address of inline_outer is inline_inner's code";
}

TEST(SourceLines, NoDwarfIsAnError) {
  VPERF_REQUIRE(!test::find_program("g++").empty(), "g++");
  test::TempTree tree;
  auto path = test::compile_test_program(tree, "prog", {"-s"});
  EXPECT_FALSE(DwarfInfo::open(path).ok());
  auto info = DwarfInfo::open(VPERF_WORKLOAD);
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->frames_at(0x1).ok());
}

}  // namespace
}  // namespace vperf::symbols
