// One symbol's listing from synthetic hits and code: which instruction each sample counts for,
// the local-period percentages and how they round, and perf annotate --stdio's row layout.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "report/annotate_listing.h"
#include "report/annotate_printer.h"

namespace vperf::report {
namespace {

// push %rbp; mov %rdi,%rsi; mov $0x7d0,%r8d; imul %rdi,%rax; ret
const std::vector<uint8_t> kCode = {0x55, 0x48, 0x89, 0xfe, 0x41, 0xb8, 0xd0, 0x07, 0x00, 0x00, 0x48, 0x0f, 0xaf, 0xc7, 0xc3};
constexpr uint64_t kStart = 0x2d60;

std::shared_ptr<const symbols::Map> map_with_symbol() {
  auto dso = std::make_shared<symbols::Dso>(symbols::DsoKind::User, "/opt/app/bin/prog", [] {
    symbols::DsoContents contents;
    contents.symbols = symbols::SymbolTable::build({{kStart, kCode.size(), "hot_loop"}, {0x2d50, 0x10, "before"}},
                                                   symbols::SizeInference::Elf);
    return Result<symbols::DsoContents>(std::move(contents));
  });
  auto map = std::make_shared<symbols::Map>();
  map->start = 0x555555554000;
  map->end = 0x555555558000;
  map->dso = dso;
  return map;
}

SymbolHits hits_of(const std::shared_ptr<const symbols::Map>& map, std::map<uint64_t, AddressHits> by_address) {
  SymbolHits hits;
  hits.event = "cpu-clock";
  hits.map = map;
  hits.symbol = map->dso->symbols().find(kStart);
  hits.by_address = std::move(by_address);
  for (const auto& [address, h] : hits.by_address) {
    hits.samples += h.samples;
    hits.period += h.period;
  }
  return hits;
}

std::vector<const ListingLine*> instructions(const SymbolListing& listing) {
  std::vector<const ListingLine*> out;
  for (const ListingLine& line : listing.lines)
    if (line.kind == ListingLine::Kind::Instruction) out.push_back(&line);
  return out;
}

TEST(AnnotateListing, PercentagesAreLocalPeriodAndMidInstructionHitsCountForTheirInstruction) {
  auto map = map_with_symbol();
  ASSERT_NE(map->dso->symbols().find(kStart), nullptr);
  // 0x2d61: mov; 0x2d66 is inside `mov $0x7d0,%r8d` (0x2d64..0x2d69); 0x2d6e: ret.
  SymbolHits hits = hits_of(map, {{0x2d61, {1, 1000}}, {0x2d66, {2, 2000}}, {0x2d64, {1, 1000}}, {0x2d6e, {4, 4000}}});
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  SourceFiles sources;
  SymbolListing listing = build_listing(hits, SymbolCode{kStart, kCode, ".text", "/opt/app/bin/prog"}, *d, sources);
  auto rows = instructions(listing);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0]->hits.samples, 0u);
  EXPECT_EQ(rows[1]->hits.samples, 1u);
  EXPECT_EQ(rows[2]->hits.samples, 3u);
  EXPECT_EQ(rows[2]->hits.period, 3000u);
  EXPECT_EQ(rows[4]->hits.samples, 4u);
  EXPECT_DOUBLE_EQ(rows[1]->percent, 12.5);
  EXPECT_DOUBLE_EQ(rows[2]->percent, 37.5);
  EXPECT_DOUBLE_EQ(rows[4]->percent, 50.0);
  EXPECT_EQ(listing.unplaced_samples, 0u);
  EXPECT_EQ(listing.samples, 8u);
}

TEST(AnnotateListing, PercentagesWeighByPeriodNotBySampleCount) {
  auto map = map_with_symbol();
  SymbolHits hits = hits_of(map, {{0x2d60, {1, 3000}}, {0x2d6e, {3, 1000}}});
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  SourceFiles sources;
  auto rows = instructions(build_listing(hits, SymbolCode{kStart, kCode, ".text", "x"}, *d, sources));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_DOUBLE_EQ(rows[0]->percent, 75.0);
  EXPECT_DOUBLE_EQ(rows[4]->percent, 25.0);
}

TEST(AnnotateListing, HitsPastTheBytesReadAreCountedAsUnplaced) {
  auto map = map_with_symbol();
  SymbolHits hits = hits_of(map, {{0x2d60, {1, 1}}, {0x2d6e, {2, 2}}});
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  SourceFiles sources;
  std::vector<uint8_t> cut(kCode.begin(), kCode.begin() + 10);  // the section ended early
  SymbolListing listing = build_listing(hits, SymbolCode{kStart, cut, ".text", "x"}, *d, sources);
  EXPECT_EQ(listing.unplaced_samples, 2u);
  EXPECT_EQ(instructions(listing).size(), 3u);
}

TEST(AnnotatePrinter, PercentRoundsAsPrintf) {
  EXPECT_EQ(format_percent(0), "    0.00");
  EXPECT_EQ(format_percent(100), "  100.00");
  EXPECT_EQ(format_percent(percent_of(1, 3)), "   33.33");
  EXPECT_EQ(format_percent(percent_of(2, 3)), "   66.67");
  EXPECT_EQ(format_percent(percent_of(9, 189)), "    4.76");   // perf's row for 9 of 189 samples
  EXPECT_EQ(format_percent(percent_of(146, 189)), "   77.25");
  EXPECT_EQ(format_percent(percent_of(1, 40000)), "    0.00");  // 0.0025: below half a hundredth
  EXPECT_EQ(format_percent(percent_of(1, 10000)), "    0.01");
  EXPECT_EQ(percent_of(5, 0), 0.0);
}

TEST(AnnotatePrinter, RowsFollowPerfAnnotateStdio) {
  auto map = map_with_symbol();
  SymbolHits hits = hits_of(map, {{0x2d6a, {3, 3}}, {0x2d6e, {1, 1}}});
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  SourceFiles sources;
  SymbolListing listing = build_listing(hits, SymbolCode{kStart, kCode, ".text", "x"}, *d, sources);
  std::ostringstream out;
  print_listing_text(listing, out);
  std::string header = " Percent |\tSource code & Disassembly of prog for cpu-clock (4 samples, percent: local period)";
  std::string expected = header + "\n" + std::string(header.size() + 5, '-') + "\n" +
                         "         :\n"
                         "         :      Disassembly of section .text:\n"
                         "         :\n"
                         "         :      0000000000002d60 <hot_loop>:\n"
                         "    0.00 :   2d60:   push   %rbp\n"
                         "    0.00 :   2d61:   mov    %rdi,%rsi\n"
                         "    0.00 :   2d64:   mov    $0x7d0,%r8d\n"
                         "   75.00 :   2d6a:   imul   %rdi,%rax\n"
                         "   25.00 :   2d6e:   ret\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(AnnotatePrinter, HeaderAndDashesAsPerfPrintsThem) {
  // perf 6.1 for 189 cpu-clock samples in vperf-workload: a 105-character header, 110 dashes.
  SymbolListing listing;
  listing.dso_short = "vperf-workload";
  listing.event = "cpu-clock";
  listing.samples = 189;
  std::ostringstream out;
  print_listing_text(listing, out);
  std::string text = out.str();
  std::string first = text.substr(0, text.find('\n'));
  EXPECT_EQ(first, " Percent |\tSource code & Disassembly of vperf-workload for cpu-clock (189 samples, percent: local period)");
  EXPECT_EQ(first.size(), 105u);
  EXPECT_EQ(text.substr(first.size() + 1), std::string(110, '-') + "\n");
}

TEST(AnnotatePrinter, JsonCarriesCountsPerInstruction) {
  auto map = map_with_symbol();
  SymbolHits hits = hits_of(map, {{0x2d6a, {3, 3}}, {0x2d6e, {1, 1}}});
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  SourceFiles sources;
  boost::json::object o = listing_json(build_listing(hits, SymbolCode{kStart, kCode, ".text", "x"}, *d, sources));
  EXPECT_EQ(o.at("symbol").as_string(), "hot_loop");
  EXPECT_EQ(o.at("address").as_string(), "0x2d60");
  const auto& rows = o.at("instructions").as_array();
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[3].at("offset").as_uint64(), 0xau);
  EXPECT_EQ(rows[3].at("samples").as_uint64(), 3u);
  EXPECT_EQ(rows[3].at("mnemonic").as_string(), "imul");
  EXPECT_DOUBLE_EQ(rows[3].at("percent").as_double(), 75.0);
}

}  // namespace
}  // namespace vperf::report
