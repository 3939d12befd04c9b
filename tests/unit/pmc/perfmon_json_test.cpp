// The perfmon JSON importer, mapfile.csv selection and raw-encoding parser, on Intel's real
// files (VPERF_TESTDATA) and on malformed input.
#include <gtest/gtest.h>

#include "pmc/perfmon_encoding.h"
#include "pmc/perfmon_json.h"
#include "pmc/perfmon_mapfile.h"
#include "pmc/pmc_encoding.h"

namespace vperf::events {
namespace {

const std::filesystem::path kPerfmonRoot = std::filesystem::path(VPERF_TESTDATA) / "perfmon";

const PerfmonEvent& find(const PerfmonFile& f, const std::string& name) {
  for (const PerfmonEvent& e : f.events)
    if (e.name == name) return e;
  throw std::runtime_error("no event " + name);
}

TEST(PerfmonJson, OldSchemaIvyBridge) {
  Result<PerfmonFile> f = load_perfmon_file(kPerfmonRoot / "IVB/events/ivybridge_core.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->events.size(), 318u);
  const PerfmonEvent& offcore = find(*f, "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE");
  EXPECT_EQ(offcore.event_codes, (std::vector<uint32_t>{0xb7, 0xbb}));
  EXPECT_EQ(offcore.msr_indexes, (std::vector<uint32_t>{0x1a6, 0x1a7}));
  EXPECT_EQ(offcore.msr_value, 0x10001u);
  const PerfmonEvent& ref = find(*f, "CPU_CLK_UNHALTED.REF_TSC");
  EXPECT_EQ(ref.fixed_counter, 2);
  EXPECT_EQ(encode_perfmon_event(ref, CoreLayout::Intel).config, 0x300u);
  const PerfmonEvent& inst = find(*f, "INST_RETIRED.ANY");
  EXPECT_EQ(encode_perfmon_event(inst, CoreLayout::Intel).raw_syntax, "rc0");
  const PerfmonEvent& any = find(*f, "CPU_CLK_UNHALTED.THREAD_P_ANY");
  EXPECT_TRUE(any.any_thread);
  EXPECT_EQ(encode_perfmon_event(any, CoreLayout::Intel).pmu_syntax, "cpu/event=0x3c,umask=0x00,any/");
  EXPECT_EQ(find(*f, "MEM_UOPS_RETIRED.ALL_LOADS").pebs, 1);
}

TEST(PerfmonJson, NewSchemaSapphireRapids) {
  Result<PerfmonFile> core = load_perfmon_file(kPerfmonRoot / "SPR/events/sapphirerapids_core.json");
  ASSERT_TRUE(core.ok()) << core.error().message;
  EXPECT_EQ(core->events.size(), 411u);
  const PerfmonEvent& ocr = find(*core, "OCR.DEMAND_DATA_RD.ANY_RESPONSE");
  EXPECT_EQ(ocr.event_codes, (std::vector<uint32_t>{0x2a, 0x2b}));
  EXPECT_EQ(encode_perfmon_event(ocr, CoreLayout::Intel).config1_term, "offcore_rsp");
  EXPECT_EQ(find(*core, "TOPDOWN.SLOTS").fixed_counter, 3);
  EXPECT_EQ(find(*core, "MEM_LOAD_RETIRED.L3_MISS").pebs, 1);  // "Precise": "1"
  const PerfmonEvent& prec = find(*core, "INST_RETIRED.PREC_DIST");
  EXPECT_TRUE(prec.precise_distribution);
  EXPECT_EQ(encode_perfmon_event(prec, CoreLayout::Intel).max_precise, 3);
  Result<PerfmonFile> uncore = load_perfmon_file(kPerfmonRoot / "SPR/events/sapphirerapids_uncore.json");
  ASSERT_TRUE(uncore.ok()) << uncore.error().message;
  size_t with_ext = 0;
  for (const PerfmonEvent& e : uncore->events) with_ext += e.umask_ext != 0;
  EXPECT_GT(with_ext, 10u);
  const PerfmonEvent& cha = uncore->events.front();
  EXPECT_TRUE(cha.is_uncore());
  EXPECT_TRUE(encode_perfmon_event(cha, CoreLayout::Intel).raw_syntax.empty());
}

TEST(PerfmonJson, MalformedInputNamesFileEventAndField) {
  Result<PerfmonFile> bad_json = parse_perfmon_json("{\"Events\": [", "x.json");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_NE(bad_json.error().message.find("x.json"), std::string::npos);

  Result<PerfmonFile> bad_field =
      parse_perfmon_json(R"([{"EventName": "A.B", "EventCode": "0x3c"}, {"EventName": "C.D", "EventCode": "0x3c", "UMask": "zz"}])", "y.json");
  ASSERT_FALSE(bad_field.ok());
  const std::string& m = bad_field.error().message;
  EXPECT_NE(m.find("y.json"), std::string::npos) << m;
  EXPECT_NE(m.find("#2"), std::string::npos) << m;
  EXPECT_NE(m.find("C.D"), std::string::npos) << m;
  EXPECT_NE(m.find("UMask"), std::string::npos) << m;

  EXPECT_FALSE(parse_perfmon_json(R"({"Events": [{"EventCode": "0x3c"}]})", "z").ok());          // no name
  EXPECT_FALSE(parse_perfmon_json(R"({"Events": [{"EventName": "A"}]})", "z").ok());             // no code
  EXPECT_FALSE(parse_perfmon_json(R"({"Events": [{"EventName": "A", "EventCode": "0x3c", "CounterMask": "256"}]})", "z").ok());
  EXPECT_FALSE(parse_perfmon_json(R"({"Events": [{"EventName": "A", "EventCode": "0x3c", "Invert": "2"}]})", "z").ok());
  EXPECT_FALSE(parse_perfmon_json(R"({"Events": {}})", "z").ok());
  EXPECT_FALSE(parse_perfmon_json("42", "z").ok());
}

// Atom cores list one UMask per offcore MSR (Silvermont_core.json, OFFCORE_RESPONSE: EventCode
// "0xB7", UMask "0x01,0x02", MSRIndex "0x1a6,0x1a7"); every pair encodes and decodes.
TEST(PerfmonJson, AUmaskListIsOneUmaskPerMsr) {
  Result<PerfmonFile> f = parse_perfmon_json(
      R"({"Events": [{"EventName": "OFFCORE_RESPONSE", "EventCode": "0xB7", "UMask": "0x01,0x02",
                     "MSRIndex": "0x1a6,0x1a7", "MSRValue": "0x10001"}]})",
      "atom.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  const PerfmonEvent& e = f->events.at(0);
  EXPECT_EQ(e.umask, 0x01u);
  EXPECT_EQ(e.umask_alternatives, (std::vector<uint32_t>{0x02}));
  PerfmonEncoding enc = encode_perfmon_event(e, CoreLayout::Intel);
  EXPECT_EQ(enc.config, 0x1b7u);
  EXPECT_EQ(enc.alternative_configs, (std::vector<uint64_t>{0x2b7}));
  EXPECT_EQ(enc.config1, 0x10001u);
  EXPECT_FALSE(parse_perfmon_json(R"([{"EventName": "A", "EventCode": "0x3c", "UMask": "0x01,0x100"}])", "z").ok());
}

TEST(PerfmonMapfile, SteppingSplitsSkylakeFromCascadeLake) {
  CpuSignature skx{"GenuineIntel", 6, 0x55, 4};
  CpuSignature clx{"GenuineIntel", 6, 0x55, 7};
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-55-[01234]", skx));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-55-[01234]", clx));
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-55-[56789ABCDEF]", clx));
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-3A", CpuSignature{"GenuineIntel", 6, 0x3a, 9}));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-3A", CpuSignature{"GenuineIntel", 6, 0x3e, 4}));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-[", skx));  // invalid regex matches nothing
}

// Every key shape of Intel's mapfile.csv (intel/perfmon and Linux's tools/perf copy of it).
TEST(PerfmonMapfile, KeysWithGroupsClassesAndRangesMatchLikeTheRegexTheyAre) {
  CpuSignature hsw{"GenuineIntel", 6, 0x45, 1};
  CpuSignature gnr{"GenuineIntel", 6, 0xae, 1};
  CpuSignature snb{"GenuineIntel", 6, 0x2a, 7};
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-(3C|45|46)", hsw));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-(3C|46)", hsw));
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-A[DE]", gnr));
  EXPECT_TRUE(mapfile_key_matches("genuineintel-6-a[de]", gnr)) << "Intel's tools match without case";
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-(4E|5E|8E|9E|A5|A6)", CpuSignature{"GenuineIntel", 6, 0xa5, 0}));
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-[0-3]A", snb));
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-2.", snb));
  EXPECT_TRUE(mapfile_key_matches("GenuineIntel-6-(2A|[4-5]5)-[0-9]", snb));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-2", snb)) << "the whole key matches the whole signature";
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-(2A", snb));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-2A)", snb));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-2A|", snb));
}

// Issue 14: a key built to make a backtracking regex explode ("(.*)*" nested six times took
// minutes in std::regex). Quantifiers are outside the mapfile's syntax: no match, at once.
TEST(PerfmonMapfile, HostileKeysMatchNothingInLinearTime) {
  CpuSignature skx{"GenuineIntel", 6, 0x55, 4};
  EXPECT_FALSE(mapfile_key_matches("(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*X", skx));
  EXPECT_FALSE(mapfile_key_matches("GenuineIntel-6-55.*", skx));
  EXPECT_FALSE(mapfile_key_matches("((GenuineIntel))-6-55", skx)) << "nesting is not mapfile syntax";
  EXPECT_FALSE(mapfile_key_matches(std::string(100000, '('), skx));
  std::string long_alternation = "GenuineIntel-6-(";
  for (int i = 0; i < 20000; ++i) long_alternation += "5.|";
  long_alternation += "55)-4";
  EXPECT_TRUE(mapfile_key_matches(long_alternation, skx));
}

TEST(PerfmonMapfile, ImportChoosesCoreAndUncoreFilesOfTheModel) {
  PerfmonImport skx = import_perfmon(kPerfmonRoot, CpuSignature{"GenuineIntel", 6, 0x55, 4});
  ASSERT_EQ(skx.files.size(), 2u);
  EXPECT_NE(skx.files[0].source.find("skylakex_core.json"), std::string::npos);
  EXPECT_NE(skx.files[1].source.find("skylakex_uncore.json"), std::string::npos);
  ASSERT_EQ(skx.notes.size(), 1u);  // skylakex_uncore_experimental.json is not in the test data
  EXPECT_THROW(import_perfmon(kPerfmonRoot, CpuSignature{"GenuineIntel", 6, 0x55, 7}), UserError);  // CLX files absent
  EXPECT_THROW(import_perfmon(kPerfmonRoot, CpuSignature{"GenuineIntel", 6, 0x01, 0}), UserError);
}

TEST(RawEncoding, ParsesPerfSyntaxes) {
  Result<RawEncoding> r = parse_raw_encoding("r13c", CoreLayout::Intel);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->config, 0x13cu);
  Result<RawEncoding> t = parse_raw_encoding("cpu/event=0xa3,umask=0x04,cmask=4,inv,edge,any/", CoreLayout::Intel);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->config, 0xa3u | 0x04u << 8 | 4u << 24 | 1u << 23 | 1u << 18 | 1u << 21);
  Result<RawEncoding> o = parse_raw_encoding("cpu/event=0xb7,umask=0x1,offcore_rsp=0x10001/", CoreLayout::Intel);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->has_config1);
  EXPECT_EQ(o->config1, 0x10001u);
  for (const char* bad : {"r", "rXYZ", "cpu/event=0x3c", "cpu/bogus=1/", "cpu/umask=0x100/", "uncore_cha/event=1/", "cycles"}) {
    Result<RawEncoding> b = parse_raw_encoding(bad, CoreLayout::Intel);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.error().message.find(bad), std::string::npos) << b.error().message;
  }
  // AMD: event select bits 8-11 live in config:32-35.
  Result<RawEncoding> amd = parse_raw_encoding("cpu/event=0x1c0,umask=0x00/", CoreLayout::Amd);
  ASSERT_TRUE(amd.ok());
  EXPECT_EQ(amd->config, 0x1000000c0u);
  EXPECT_EQ(perf_cpu_pmu_syntax(amd->config, 0, "", CoreLayout::Amd), "cpu/event=0x1c0,umask=0x00/");
}

// arm64's PMUv3: the event is config:0-15 and nothing else; the PMU is armv8_pmuv3 (device
// tree), armv8_pmuv3_0 (ACPI servers) or a core-named armv8_*/armv9_* one.
TEST(RawEncoding, ArmPmuv3Syntax) {
  for (const char* text : {"r11", "0x11", "armv8_pmuv3/event=0x11/", "armv8_pmuv3_0/event=17/", "armv9_neoverse_n2/event=0x11/"}) {
    Result<RawEncoding> r = parse_raw_encoding(text, CoreLayout::Arm);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message;
    EXPECT_EQ(r->config, 0x11u) << text;
  }
  Result<RawEncoding> pop = parse_raw_encoding("armv8_pmuv3_0/event=0x4000/", CoreLayout::Arm);
  ASSERT_TRUE(pop.ok());
  EXPECT_EQ(pop->config, 0x4000u);
  EXPECT_EQ(split_core_config(0x4000, CoreLayout::Arm).event, 0x4000u) << "not an Intel umask";
  EXPECT_EQ(split_core_config(0x4000, CoreLayout::Arm).umask, 0u);
  EXPECT_EQ(perf_cpu_pmu_syntax(0x4000, 0, "", CoreLayout::Arm), "armv8_pmuv3_0/event=0x4000/");
  EXPECT_EQ(perf_cpu_pmu_syntax(0x8, 0, "", CoreLayout::Arm, "armv8_pmuv3"), "armv8_pmuv3/event=0x8/");
  EXPECT_EQ(perf_cpu_pmu_syntax(0x100000011, 0, "", CoreLayout::Arm), "armv8_pmuv3_0/event=0x11,config=0x100000011/")
      << "bits no term names do not vanish";
  for (const char* bad : {"cpu/event=0x11/", "armv8_pmuv3/umask=1/", "armv8_pmuv3/event=0x10000/", "armv8_pmuv3/inv/"}) {
    Result<RawEncoding> b = parse_raw_encoding(bad, CoreLayout::Arm);
    EXPECT_FALSE(b.ok()) << bad;
  }
  EXPECT_EQ(core_pmu_for_layout(CoreLayout::Arm).name, "armv8_pmuv3_0");
  EXPECT_TRUE(config1_term_for_event_code(0xb7, CoreLayout::Arm).empty()) << "Intel's offcore table is not arm64's";
}

}  // namespace
}  // namespace vperf::events
