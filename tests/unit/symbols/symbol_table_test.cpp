#include "symbols/symbol.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace vperf::symbols {
namespace {

TEST(SymbolTable, SortsAndInfersZeroSizesFromTheNextSymbol) {
  auto t = SymbolTable::build({{0x300, 0x10, "c"}, {0x100, 0, "a"}, {0x200, 0x20, "b"}}, SizeInference::Elf);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.symbols()[0].name, "a");
  EXPECT_EQ(t.symbols()[0].end, 0x200u);  // size 0: up to b
  EXPECT_EQ(t.symbols()[1].end, 0x220u);  // its own size
  EXPECT_EQ(t.find(0x1ff)->name, "a");
  EXPECT_EQ(t.find(0x21f)->name, "b");
  EXPECT_EQ(t.find(0x220), nullptr);  // the gap after b's size
  EXPECT_EQ(t.find(0x30f)->name, "c");
  EXPECT_EQ(t.find(0xff), nullptr);
}

TEST(SymbolTable, LastZeroSizedSymbolEndsOnePageOn) {
  auto t = SymbolTable::build({{0x1010, 0, "only"}}, SizeInference::Elf);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.symbols()[0].end, 0x3000u);  // perf: roundup(start, 4096) + 4096
}

TEST(SymbolTable, KeepsOneSymbolPerAddressTheWayPerfChooses) {
  // Global beats weak beats local; fewer leading underscores; then the longer name.
  auto t = SymbolTable::build({{0x100, 0x10, "__vdso_clock_gettime", SymbolBinding::Global},
                               {0x100, 0x10, "clock_gettime", SymbolBinding::Weak}},
                              SizeInference::Elf);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.symbols()[0].name, "__vdso_clock_gettime");
  auto u = SymbolTable::build({{0x100, 0x10, "__x", SymbolBinding::Global}, {0x100, 0x10, "x", SymbolBinding::Global}},
                              SizeInference::Elf);
  EXPECT_EQ(u.symbols()[0].name, "x");
  auto v = SymbolTable::build({{0x100, 0x10, "ab", SymbolBinding::Local}, {0x100, 0x10, "abc", SymbolBinding::Local}},
                              SizeInference::Elf);
  EXPECT_EQ(v.symbols()[0].name, "abc");
  auto sized = SymbolTable::build({{0x100, 0, "label", SymbolBinding::Global}, {0x100, 0x8, "func", SymbolBinding::Local}},
                                  SizeInference::Elf);
  EXPECT_EQ(sized.symbols()[0].name, "func");
}

TEST(SymbolTable, KallsymsAliasesKeepTheLastOneAsPerfDoes) {
  // All sizes 0: the first alias stays empty (its end is the alias's start) and loses.
  auto t = SymbolTable::build({{0x1000, 0, "_stext"}, {0x1000, 0, "_text"}, {0x1040, 0, "next"}}, SizeInference::Kallsyms);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.symbols()[0].name, "_text");
  EXPECT_EQ(t.symbols()[0].end, 0x1040u);
}

TEST(SymbolTable, FindsAnEnclosingSymbolBehindASmallerOne) {
  auto t = SymbolTable::build({{0x100, 0x100, "big"}, {0x110, 0x8, "small"}}, SizeInference::Elf);
  EXPECT_EQ(t.find(0x112)->name, "small");
  EXPECT_EQ(t.find(0x150)->name, "big");
  EXPECT_EQ(t.find_by_name("small")->start, 0x110u);
  EXPECT_EQ(t.find_by_name("nope"), nullptr);
}

}  // namespace
// A table of mangled names shows them demangled, as perf does after demangling at load, but
// demangles only what is reached; aliases are still chosen by the names perf compares.
TEST(SymbolTable, MangledNamesAreShownDemangledAndAliasesChosenByThem) {
  std::vector<Symbol> symbols = {
      {0x100, 0x110, "_ZN1a1bEv", SymbolBinding::Global},  // a::b, 4 characters (9 mangled)
      {0x100, 0x110, "abcde", SymbolBinding::Global},      // 5: the longer name wins, as in perf
      {0x200, 0x210, "_ZN5vperf9workloads8run_spinEmRKNS0_7OptionsE", SymbolBinding::Global},
      {0x300, 0x310, "plain_c", SymbolBinding::Global},
      {0x400, 0x410, "_ZdlPv@plt", SymbolBinding::Global},
  };
  const SymbolTable t = SymbolTable::from_symbols(symbols, nullptr, true);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.find(0x105)->name, "abcde") << "mangled, _ZN1a1bEv would have been the longer";
  const Symbol* spin = t.find(0x208);
  ASSERT_NE(spin, nullptr);
  EXPECT_EQ(spin->name, "vperf::workloads::run_spin");
  EXPECT_EQ(t.find(0x200), spin) << "one Symbol per symbol";
  EXPECT_EQ(t.find(0x300)->name, "plain_c");
  EXPECT_EQ(t.find(0x400)->name, "operator delete@plt");
  EXPECT_EQ(t.find_by_name("vperf::workloads::run_spin"), spin);
  std::vector<std::string_view> all;
  for (const Symbol& s : t.symbols()) all.push_back(s.name);
  EXPECT_EQ(all, (std::vector<std::string_view>{"abcde", "vperf::workloads::run_spin", "plain_c", "operator delete@plt"}));

  // Without `mangled` the names are taken as they are.
  EXPECT_EQ(SymbolTable::from_symbols(symbols, nullptr).find(0x208)->name, symbols[2].name);
}

}  // namespace vperf::symbols
