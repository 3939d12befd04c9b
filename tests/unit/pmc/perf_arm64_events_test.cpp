#include "pmc/perf_arm64_events.h"

#include <gtest/gtest.h>

#include <map>

#include "pmc/perfmon_bundle.h"
#include "pmc/perfmon_encoding.h"

namespace vperf::events {
namespace {

TEST(PerfArm64Mapfile, RowsAndTheMatchingRule) {
  auto rows = parse_arm64_mapfile(
      "# Format:\n#Family-model,Version,Filename,EventType\n"
      "0x00000000410fd0c0,v1,arm/neoverse-n1,core\n"
      "0x00000000410fd4f0,v1,arm/neoverse-n2-v2,core\n"
      "0x00000000411fd990,v1,arm/future-r1p0,core\n"
      "0x00000000410fd0c0,v1,arm/cmn/sys,uncore\n",
      "mapfile.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u) << "only core rows";
  // Graviton2 / Altra: N1 r3p1 takes the r0p0 row; a V2 r0p1 takes the shared N2/V2 tables.
  EXPECT_EQ(arm64_row_for_midr(*rows, 0x413fd0c1)->dir, "arm/neoverse-n1");
  EXPECT_EQ(arm64_row_for_midr(*rows, 0x410fd4f1)->dir, "arm/neoverse-n2-v2");
  // A row's variant/revision is a minimum (perf 6.12): r1p0 and later, not r0p3.
  EXPECT_EQ(arm64_row_for_midr(*rows, 0x410fd993), nullptr);
  EXPECT_EQ(arm64_row_for_midr(*rows, 0x411fd990)->dir, "arm/future-r1p0");
  EXPECT_EQ(arm64_row_for_midr(*rows, 0x412fd991)->dir, "arm/future-r1p0");
  // QEMU's -cpu max is no core perf knows.
  EXPECT_EQ(arm64_row_for_midr(*rows, 0x000f0510), nullptr);
}

TEST(PerfArm64Mapfile, BadRowsAreErrorsNamingTheLine) {
  EXPECT_FALSE(parse_arm64_mapfile("0x410fd0c0,v1\n", "m").ok());
  EXPECT_FALSE(parse_arm64_mapfile("410fd0c0,v1,arm/n1,core\n", "m").ok());
  EXPECT_FALSE(parse_arm64_mapfile("0x1410fd0c0,v1,arm/n1,core\n", "m").ok());
  auto escape = parse_arm64_mapfile("\n0x410fd0c0,v1,../../etc,core\n", "m");
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.error().message.find("m line 2"), std::string::npos) << escape.error().message;
  EXPECT_FALSE(parse_arm64_mapfile("0x410fd0c0,v1,/etc,core\n", "m").ok());
}

constexpr std::string_view kStandard = R"([
  {"PublicDescription": "Instruction architecturally executed", "EventCode": "0x08", "EventName": "INST_RETIRED",
   "BriefDescription": "Instruction architecturally executed"},
  {"PublicDescription": "Sample Population", "EventCode": "0x4000", "EventName": "SAMPLE_POP",
   "BriefDescription": "Sample Population"},
  {"MetricName": "ipc", "MetricExpr": "INST_RETIRED / CPU_CYCLES"}
])";

Arm64StandardEvents standard_events() {
  size_t skipped = 0;
  Result<PerfmonFile> file = parse_perf_arm64_json(kStandard, "common-and-microarch.json", nullptr, skipped);
  EXPECT_TRUE(file.ok()) << file.error().message;
  Arm64StandardEvents out;
  for (const PerfmonEvent& e : file->events) out.emplace(e.name, e);
  return out;
}

TEST(PerfArm64Events, ArchStdEventsResolveAsPerfsJevents) {
  Arm64StandardEvents standard = standard_events();
  ASSERT_EQ(standard.size(), 2u) << "metrics are not events";
  size_t skipped = 0;
  Result<PerfmonFile> file = parse_perf_arm64_json(R"([
    {"ArchStdEvent": "INST_RETIRED", "PublicDescription": "Counts instructions that have been architecturally executed."},
    {"ArchStdEvent": "sample_pop", "EventCode": "0x99"},
    {"EventCode": "0x1D3", "EventName": "L2_CHI_CBUSY0", "BriefDescription": "Busy. ", "Errata": "AC03_CPU_29"},
    {"EventCode": "0x01", "EventName": "CPA_CYCLES", "Unit": "hisi_sccl,cpa"},
    {"ConfigCode": "0x02", "EventName": "UNCORE_X"}
  ])",
                                                   "arm/x/retired.json", &standard, skipped);
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_EQ(file->events.size(), 3u);
  const PerfmonEvent& inst = file->events[0];
  EXPECT_EQ(inst.name, "INST_RETIRED");
  EXPECT_EQ(inst.event_codes, std::vector<uint32_t>{0x08});
  EXPECT_EQ(inst.public_description, "Counts instructions that have been architecturally executed") << "its own wins";
  EXPECT_EQ(inst.brief_description, "Instruction architecturally executed") << "the standard one fills the gap";
  // The code always comes from the standard event (jevents ignores a model's own), the name too.
  EXPECT_EQ(file->events[1].name, "SAMPLE_POP");
  EXPECT_EQ(file->events[1].event_codes, std::vector<uint32_t>{0x4000});
  EXPECT_EQ(file->events[2].event_codes, std::vector<uint32_t>{0x1d3});
  EXPECT_EQ(file->events[2].brief_description, "Busy  Spec update: AC03_CPU_29");
  EXPECT_EQ(skipped, 2u) << "uncore entries are left out and counted";
  EXPECT_EQ(encode_perfmon_event(file->events[1], CoreLayout::Arm).pmu_syntax, "armv8_pmuv3_0/event=0x4000/");
  EXPECT_EQ(encode_perfmon_event(inst, CoreLayout::Arm).raw_syntax, "r8");
}

TEST(PerfArm64Events, MalformedTablesAreErrorsNamingTheEntry) {
  Arm64StandardEvents standard = standard_events();
  size_t skipped = 0;
  auto error_of = [&](std::string_view text) {
    Result<PerfmonFile> f = parse_perf_arm64_json(text, "arm/x/bad.json", &standard, skipped);
    return f.ok() ? std::string() : f.error().message;
  };
  EXPECT_NE(error_of(R"([{"ArchStdEvent": "NO_SUCH_EVENT"}])").find("entry 1: ArchStdEvent NO_SUCH_EVENT"),
            std::string::npos);
  EXPECT_NE(error_of(R"([{"EventName": "X", "EventCode": "0x10000"}])").find("16-bit"), std::string::npos);
  EXPECT_NE(error_of(R"([{"EventName": "X", "EventCode": "zz"}])").find("not a number"), std::string::npos);
  EXPECT_NE(error_of(R"([{"EventName": "X"}])").find("needs EventName and EventCode"), std::string::npos);
  EXPECT_NE(error_of(R"({"EventName": "X"})").find("JSON array"), std::string::npos);
  EXPECT_NE(error_of(R"([1])").find("not an object"), std::string::npos);
  EXPECT_NE(error_of("[{").find("not JSON"), std::string::npos);
}

// The bundle (Linux 6.12.117): the event counts perf's jevents makes of each Neoverse table
// (checked against a reimplementation of its rules and, for perf 6.1's models, perf 6.1's own
// listing in the arm64 guest: tests/arm64_guest/catalog_test.cpp).
TEST(PerfArm64Events, BundledNeoverseTables) {
  std::filesystem::path bundle = bundled_perf_arm64_dir();
  std::map<uint32_t, size_t> expected{{0x413fd0c1, 109}, {0x411fd401, 131}, {0x410fd493, 154}, {0x410fd4f1, 154}};
  for (const auto& [midr, count] : expected) {
    PerfmonImport imported = import_bundled_perf_arm64(bundle, midr);
    size_t events = 0;
    std::map<std::string, uint32_t> codes;
    for (const PerfmonFile& f : imported.files) {
      events += f.events.size();
      EXPECT_NE(f.info.find("Linux 6.12.117"), std::string::npos) << f.info;
      for (const PerfmonEvent& e : f.events) codes[e.name] = e.event_codes.front();
    }
    EXPECT_EQ(events, count) << std::hex << midr;
    EXPECT_EQ(codes.size(), count) << "no name twice";
    EXPECT_EQ(codes["CPU_CYCLES"], 0x11u);
    EXPECT_EQ(codes["INST_RETIRED"], 0x08u);
    EXPECT_EQ(codes["L1D_CACHE_REFILL"], 0x03u);
  }
  PerfmonImport qemu = import_bundled_perf_arm64(bundle, 0x000f0510);
  EXPECT_TRUE(qemu.files.empty());
  ASSERT_EQ(qemu.notes.size(), 1u);
  EXPECT_NE(qemu.notes[0].find("no entry for MIDR 0x000f0510"), std::string::npos);
}

}  // namespace
}  // namespace vperf::events
