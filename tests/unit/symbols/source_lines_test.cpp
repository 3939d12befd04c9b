#include "symbols/source_lines.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "symbols/demangle.h"
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

// Every byte of every function of the workload, against LLVM's own DWARF reader: frames_at's
// index of each compile unit (built once, then searched) must give the inline chain that
// llvm-symbolizer --inlining gives, function by function and line by line, innermost first.
// The workload has inlining of every kind: C++ and C, always_inline chains, a helper inlined
// into two functions, an aliased function, a recursion inlined into itself (inline_shared.c).
TEST(SourceLines, EveryAddressOfTheWorkloadMatchesLlvmSymbolizer) {
  VPERF_REQUIRE(!test::find_program("llvm-symbolizer").empty(), "llvm-symbolizer (LLVM's DWARF reader) for the inline chains");
  auto info = DwarfInfo::open(VPERF_WORKLOAD_DWARF);
  ASSERT_TRUE(info.ok()) << info.error().describe();
  auto elf = ElfFile::open(VPERF_WORKLOAD_DWARF);
  ASSERT_TRUE(elf.ok());
  auto table = SymbolTable::build(elf->function_symbols(), SizeInference::Elf);
  std::vector<uint64_t> addresses;
  for (const Symbol& symbol : table.symbols())
    for (uint64_t a = symbol.start; a < symbol.end; ++a) addresses.push_back(a);
  ASSERT_GT(addresses.size(), 1000u);
  test::TempTree tree;
  std::string input;
  for (uint64_t a : addresses) {
    char line[32];
    std::snprintf(line, sizeof line, "0x%llx\n", static_cast<unsigned long long>(a));
    input += line;
  }
  tree.write("addresses", input);
  test::ProgramResult r = test::run_program({"sh", "-c", std::string("llvm-symbolizer --inlining --no-demangle --obj='") +
                                                             VPERF_WORKLOAD_DWARF + "' < '" + (tree.root() / "addresses").string() + "'"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // llvm-symbolizer: per address, "function\nfile:line:column\n" per frame, then an empty line;
  // file "??" or line 0 where no DWARF function covers the address (the name then comes from
  // the ELF symbols, or is "??" too).
  std::istringstream in(r.out);
  size_t index = 0, chains = 0, inlined = 0, uncovered = 0;
  std::vector<std::pair<std::string, int>> theirs;
  bool no_dwarf = false;
  for (std::string line; std::getline(in, line) && index < addresses.size();) {
    if (!line.empty()) {
      std::string where;
      std::getline(in, where);
      // "file:line:column": the line is the number before the last colon.
      size_t last = where.rfind(':');
      size_t before = last == std::string::npos ? std::string::npos : where.rfind(':', last - 1);
      int number = before == std::string::npos ? 0 : std::atoi(where.c_str() + before + 1);
      theirs.emplace_back(line, number);
      no_dwarf = where.starts_with("??:") || where.ends_with(":0:0");
      continue;
    }
    const uint64_t a = addresses[index++];
    auto ours = info->frames_at(a);
    if (theirs.size() == 1 && no_dwarf) {
      EXPECT_FALSE(ours.ok()) << std::hex << a;
      ++uncovered;
    } else {
      ASSERT_TRUE(ours.ok()) << std::hex << a << ": " << ours.error().describe();
      ASSERT_EQ(ours->size(), theirs.size()) << std::hex << a << ": innermost " << theirs[0].first;
      for (size_t f = 0; f < theirs.size(); ++f) {
        // llvm-symbolizer names the out-of-line frame after the ELF symbol at the address when
        // there is one (main.cold, an alias): frames_at gives DWARF's name, as addr2line does.
        const Symbol* symbol = table.find(a);
        const bool symbol_named = f + 1 == theirs.size() && symbol != nullptr && symbol->name == theirs[f].first;
        if (!symbol_named) {
          EXPECT_EQ((*ours)[f].function, demangle(theirs[f].first)) << std::hex << a << ", frame " << f;
        }
        EXPECT_EQ((*ours)[f].location.line, theirs[f].second) << std::hex << a << ", frame " << f << " " << theirs[f].first;
        EXPECT_EQ((*ours)[f].inlined, f + 1 < theirs.size()) << std::hex << a << ", frame " << f;
      }
      ++chains;
      if (theirs.size() > 1) ++inlined;
    }
    theirs.clear();
  }
  EXPECT_EQ(index, addresses.size());
  std::cout << addresses.size() << " addresses: " << chains << " in a function (" << inlined << " in inlined code), " << uncovered
            << " in none\n";
  EXPECT_GT(inlined, 100u);
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
