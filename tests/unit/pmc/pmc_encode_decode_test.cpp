// encode, decode and the two NamedEventSources against libpfm4 (LIBPFM_FORCE_PMU through
// --model) and Intel's perfmon files in VPERF_TESTDATA.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "pmc/perfmon_event_source.h"
#include "pmc/pfm_event_source.h"
#include "pmc/pmc_catalog.h"
#include "pmc/pmc_decode.h"
#include "pmc/event_environment.h"
#include "pmc/pmc_encode.h"

namespace vperf::events {
namespace {

const std::filesystem::path kPerfmonRoot = std::filesystem::path(VPERF_TESTDATA) / "perfmon";

PmcCatalog catalog_for(const std::string& model, bool with_perfmon) {
  PmcCatalogOptions o;
  o.model = model;
  if (with_perfmon) o.perfmon = kPerfmonRoot;
  return load_pmc_catalog(o);
}

// encode goes through the whole resolver, as the CLI does.
std::unique_ptr<EventEnvironment> env_for(const std::string& model, bool with_perfmon) {
  EventEnvironmentOptions o;
  o.pmc.model = model;
  if (with_perfmon) o.pmc.perfmon = kPerfmonRoot;
  return EventEnvironment::load(o);
}

TEST(PmcEncode, InstRetiredAnyPOnSkylakeX) {
  auto skx = env_for("skx", false);
  std::vector<EncodedEvent> e = encode_events(*skx, {"INST_RETIRED.ANY_P", "INST_RETIRED:ANY_P:u:c=1:i:e"});
  ASSERT_EQ(e.size(), 2u);
  // The dotted name is Intel's, so Intel's table answers (bundled; no --perfmon needed).
  EXPECT_EQ(e[0].source, "perfmon");
  EXPECT_EQ(e[0].event.name, "INST_RETIRED.ANY_P");
  EXPECT_EQ(e[0].raw_syntax, "rc0");
  EXPECT_EQ(e[0].pmu_syntax, "cpu/event=0xc0,umask=0x00/");
  EXPECT_EQ(e[0].event.type, kPerfTypeRaw);
  EXPECT_EQ(e[0].event.max_precise, 0);  // skylakex_core.json: PEBS "0" (INST_RETIRED.PREC_DIST is the PEBS one)
  EXPECT_FALSE(e[0].other_catalog) << "libpfm4 agrees on rc0";
  // The colon name is libpfm4's, which calls ANY_P a PEBS event.
  EXPECT_EQ(e[1].source, "libpfm4");
  EXPECT_EQ(e[1].event.max_precise, 2);
  // SDM IA32_PERFEVTSELx: cmask 1 << 24, inv bit 23, edge bit 18.
  EXPECT_EQ(e[1].event.config, 0xc0u | (1u << 24) | (1u << 23) | (1u << 18));
  EXPECT_TRUE(e[1].event.exclude_kernel);
  EXPECT_FALSE(e[1].event.exclude_user);
  EXPECT_EQ(e[1].raw_syntax, "r18400c0:u");
  EXPECT_EQ(e[1].pmu_syntax, "cpu/event=0xc0,umask=0x00,cmask=0x01,edge,inv/u");
}

// With --model, cpu/.../ terms are the model's core PMU format (SDM IA32_PERFEVTSELx, AMD APM
// PERF_CTL), whatever PMU this machine has, or lacks.
TEST(PmcEncode, CpuTermsUseTheModelsFormat) {
  auto skx = env_for("skx", false);
  std::vector<EncodedEvent> e =
      encode_events(*skx, {"cpu/event=0x3c,umask=0x01,inv,cmask=0x02/k", "cpu/event=0xb7,umask=0x01,offcore_rsp=0x10001/"});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].event.type, kPerfTypeRaw);
  EXPECT_EQ(e[0].event.config, 0x13cu | (1u << 23) | (2u << 24));
  EXPECT_EQ(e[0].raw_syntax, "r280013c:k");
  EXPECT_TRUE(e[0].attr.exclude_user);
  EXPECT_EQ(e[1].event.config1, 0x10001u);
  EXPECT_TRUE(e[1].raw_syntax.empty()) << "rNNN cannot carry offcore_rsp: " << e[1].raw_syntax;
  EXPECT_EQ(e[1].pmu_syntax, "cpu/event=0xb7,umask=0x01,offcore_rsp=0x10001/");
  auto zen3 = env_for("zen3", false);
  // AMD event select 0x1c0: bits 7:0 in config[7:0], bits 11:8 in config[35:32].
  EXPECT_EQ(encode_events(*zen3, {"cpu/event=0x1c0/"}).at(0).event.config, 0x1000000c0u);
}

TEST(PmcEncode, PmuPrefixSelectsAnotherModel) {
  auto spr = env_for("spr", false);
  std::vector<EncodedEvent> e = encode_events(*spr, {"ivb::L2_STORE_LOCK_RQSTS:HIT_M"});
  EXPECT_EQ(e[0].event.config, 0x827u);  // Intel IVB: EventCode 0x27, UMask 0x08
  EXPECT_EQ(e[0].event.type, kPerfTypeRaw);
  EXPECT_EQ(e[0].event.pmu, "cpu");
}

TEST(PmcEncode, DottedNameResolvesThroughIntelsBundledTableByDefault) {
  auto ivb = env_for("ivb", false);
  ASSERT_FALSE(ivb->pmc().perfmon.empty()) << "no bundled table for ivb";
  std::vector<EncodedEvent> e = encode_events(*ivb, {"L2_STORE_LOCK_RQSTS.HIT_M"});
  EXPECT_EQ(e[0].source, "perfmon");
  EXPECT_EQ(e[0].event.name, "L2_STORE_LOCK_RQSTS.HIT_M");
  EXPECT_EQ(e[0].event.config, 0x827u);
}

// Issue 16: libpfm4 4.13 swaps umasks 0x01 and 0x04 of IVB's event 0x58; Intel's table
// (ivybridge_core.json: EventCode 0x58, UMask 0x01) wins, and the line says what libpfm4 has.
TEST(PmcEncode, IntelsTableWinsWhereLibpfmDisagreesAndTheLineSaysSo) {
  auto ivb = env_for("ivb", false);
  std::vector<EncodedEvent> e =
      encode_events(*ivb, {"MOVE_ELIMINATION.INT_ELIMINATED", "MOVE_ELIMINATION:INT_ELIMINATED"});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].source, "perfmon");
  EXPECT_EQ(e[0].raw_syntax, "r158");
  ASSERT_TRUE(e[0].other_catalog);
  EXPECT_EQ(e[0].other_catalog->text(), "(libpfm4: r458)");
  // libpfm4's own spelling still reaches libpfm4, with Intel's encoding beside it.
  EXPECT_EQ(e[1].source, "libpfm4");
  EXPECT_EQ(e[1].raw_syntax, "r458");
  ASSERT_TRUE(e[1].other_catalog);
  EXPECT_EQ(e[1].other_catalog->text(), "(perfmon: r158)");
  std::ostringstream text;
  print_encoded_events(text, ivb->pmc(), e);
  EXPECT_NE(text.str().find("perf raw        r158  (libpfm4: r458)\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("perf raw        r458  (perfmon: r158)\n"), std::string::npos) << text.str();

  PmcCatalog catalog = catalog_for("ivb", false);
  std::vector<DecodedRaw> d = decode_pmc_encodings(catalog, {"r158"});
  std::ostringstream decoded;
  print_decoded(decoded, catalog, d);
  EXPECT_NE(decoded.str().find("perfmon MOVE_ELIMINATION.INT_ELIMINATED           (libpfm4: r458)"), std::string::npos)
      << decoded.str();
  EXPECT_NE(decoded.str().find("libpfm4 ivb::MOVE_ELIMINATION:INT_NOT_ELIMINATED  (perfmon: r458)"), std::string::npos)
      << decoded.str();

  std::ostringstream listed;
  print_pmc_catalog(listed, catalog, "MOVE_ELIMINATION.INT_ELIMINATED");
  EXPECT_NE(listed.str().find("MOVE_ELIMINATION.INT_ELIMINATED  r158 (libpfm4: r458)"), std::string::npos) << listed.str();
  EXPECT_NE(listed.str().find("INT_ELIMINATED  0x4    r458 (perfmon: r158)"), std::string::npos) << listed.str();
}

// Where the two agree, the lines are as before: nothing is added.
TEST(PmcEncode, AgreeingEncodingsSayNothingMore) {
  auto ivb = env_for("ivb", false);
  std::vector<EncodedEvent> e = encode_events(*ivb, {"MOVE_ELIMINATION.SIMD_ELIMINATED", "INST_RETIRED:ANY_P"});
  EXPECT_FALSE(e[0].other_catalog);
  EXPECT_FALSE(e[1].other_catalog);
  std::ostringstream text;
  print_encoded_events(text, ivb->pmc(), e);
  EXPECT_EQ(text.str().find("(libpfm4:"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("(perfmon:"), std::string::npos) << text.str();
}

// --perfmon replaces the bundled tables with the user's copy.
TEST(PmcEncode, PerfmonOptionReplacesTheBundledTables) {
  PmcCatalogOptions o;
  o.model = "ivb";
  o.perfmon = kPerfmonRoot / "IVB/events/ivybridge_uncore.json";
  PmcCatalog cat = load_pmc_catalog(o);
  ASSERT_EQ(cat.perfmon.size(), 1u);
  EXPECT_EQ(cat.perfmon[0].source, o.perfmon->string());
  EXPECT_NE(cat.perfmon_origin.find("--perfmon"), std::string::npos);
}

TEST(PmcEncode, PerfmonOffcoreEventCarriesConfig1) {
  auto ivb = env_for("ivb", true);
  std::vector<EncodedEvent> e = encode_events(*ivb, {"OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE"});
  EXPECT_EQ(e[0].source, "perfmon");
  EXPECT_EQ(e[0].event.config, 0x1b7u);
  EXPECT_EQ(e[0].event.config1, 0x10001u);  // MSRValue in ivybridge_core.json
  EXPECT_EQ(e[0].pmu_syntax, "cpu/event=0xb7,umask=0x01,offcore_rsp=0x10001/");
}

TEST(PmcEncode, PerfmonPrecisePastPebsSupportIsAnError) {
  auto ivb = env_for("ivb", true);
  EXPECT_THROW(encode_events(*ivb, {"CPU_CLK_UNHALTED.THREAD_P:precise=1"}), UserError);
  std::vector<EncodedEvent> e = encode_events(*ivb, {"MEM_UOPS_RETIRED.ALL_LOADS:precise=2"});
  EXPECT_EQ(e[0].event.modifiers.precise, 2);
}

TEST(PmcEncode, UnknownEventIsAUsageErrorWithSuggestions) {
  auto ivb = env_for("ivb", false);
  try {
    encode_events(*ivb, {"INST_RETIRD:ANY_P"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("INST_RETIRD:ANY_P"), std::string::npos);
    EXPECT_NE(e.hint().find("INST_RETIRED"), std::string::npos) << e.hint();
  }
}

TEST(PmcEncode, BadUmaskNamesTheUmask) {
  auto ivb = env_for("ivb", false);
  try {
    encode_events(*ivb, {"INST_RETIRED:ANY_Q"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ANY_Q"), std::string::npos) << e.what();
  }
}

TEST(PmcModelResolution, UnknownModelSuggestsClosest) {
  try {
    resolve_pmc_model("skylakx");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(e.hint().find("skylakex"), std::string::npos) << e.hint();
  }
}

TEST(PmcModelResolution, AliasesAndLibpfmNames) {
  EXPECT_EQ(resolve_pmc_model("skylakex").libpfm_pmu, "skx");
  EXPECT_EQ(resolve_pmc_model("zen3").libpfm_pmu, "amd64_fam19h_zen3");
  EXPECT_EQ(resolve_pmc_model("amd64_fam19h_zen3").name, "zen3");
  // A libpfm4 core PMU without a table entry is still a model.
  EXPECT_EQ(resolve_pmc_model("amd64_fam16h").libpfm_pmu, "amd64_fam16h");
}

TEST(PmcDecode, R13cOnIvyBridgeIsRefXclkInBothCatalogs) {
  PmcCatalog ivb = catalog_for("ivb", true);
  std::vector<DecodedRaw> d = decode_pmc_encodings(ivb, {"r13c"});
  ASSERT_EQ(d.size(), 1u);
  std::set<std::string> names;
  for (const DecodeMatch& m : d[0].matches) names.insert(m.name);
  EXPECT_TRUE(names.count("ivb::CPU_CLK_UNHALTED:REF_P"));
  EXPECT_TRUE(names.count("CPU_CLK_THREAD_UNHALTED.REF_XCLK"));
  ASSERT_FALSE(d[0].notes.empty());
  EXPECT_NE(d[0].notes.front().find("100 MHz"), std::string::npos);
}

TEST(PmcDecode, R13cOnSapphireRapidsCountsAtTscRate) {
  PmcCatalog spr = catalog_for("spr", true);
  std::vector<DecodedRaw> d = decode_pmc_encodings(spr, {"cpu/event=0x3c,umask=0x01/"});
  bool ref_tsc_p = false;
  for (const DecodeMatch& m : d[0].matches) ref_tsc_p = ref_tsc_p || m.name == "CPU_CLK_UNHALTED.REF_TSC_P";
  EXPECT_TRUE(ref_tsc_p);
  ASSERT_FALSE(d[0].notes.empty());
  EXPECT_NE(d[0].notes.front().find("TSC rate"), std::string::npos);
}

TEST(PmcDecode, R300IsTheFixedCounterPseudoEncoding) {
  PmcCatalog skx = catalog_for("skx", true);
  std::vector<DecodedRaw> d = decode_pmc_encodings(skx, {"r300"});
  std::set<std::string> names;
  for (const DecodeMatch& m : d[0].matches) names.insert(m.name);
  EXPECT_TRUE(names.count("skx::UNHALTED_REFERENCE_CYCLES"));
  EXPECT_TRUE(names.count("CPU_CLK_UNHALTED.REF_TSC"));
  ASSERT_FALSE(d[0].notes.empty());
  EXPECT_NE(d[0].notes.front().find("pseudo-encoding"), std::string::npos);
}

TEST(PmcDecode, UnparseableTokenIsAUsageErrorNamingIt) {
  PmcCatalog ivb = catalog_for("ivb", false);
  try {
    decode_pmc_encodings(ivb, {"r13c", "rXYZ"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("rXYZ"), std::string::npos);
  }
}

// Every libpfm4 core event:umask of the model encodes, and decoding that encoding finds it again.
class PmcRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(PmcRoundTrip, EveryLibpfmUmaskDecodesBackToItself) {
  auto env = env_for(GetParam(), false);
  const PmcCatalog& cat = env->pmc();
  const PmcPmuEntry* core = cat.core_pmu();
  ASSERT_NE(core, nullptr);
  size_t checked = 0;
  for (const PfmEvent& e : core->pmu.events) {
    for (size_t i = 0; i < e.umasks.size(); ++i) {
      const std::optional<PfmEncoding>& enc = e.umask_encodings[i];
      if (!enc) continue;  // libpfm refuses some umasks alone (offcore needs a response type)
      std::string name = e.pmu + "::" + e.name + ":" + e.umasks[i].name;
      std::vector<EncodedEvent> encoded = encode_events(*env, {name});
      ASSERT_EQ(encoded[0].event.config, enc->config) << name;
      RawEncoding raw{enc->config, enc->config1, true, name};
      DecodedRaw d = decode_pmc_encoding(cat, raw);
      bool found = false;
      for (const DecodeMatch& m : d.matches) found = found || m.name == name;
      EXPECT_TRUE(found) << name << " (" << encoded[0].raw_syntax << ") did not decode back";
      ++checked;
    }
  }
  std::cout << GetParam() << ": " << checked << " event:umask pairs round-tripped\n";
  EXPECT_GT(checked, 100u);
}

INSTANTIATE_TEST_SUITE_P(Models, PmcRoundTrip, ::testing::Values("ivb", "skx", "spr", "icx", "zen3"));

TEST(PmcRoundTrip, PerfmonCoreEventsDecodeBackToThemselves) {
  PmcCatalog cat = catalog_for("skx", true);
  size_t checked = 0;
  for (const PerfmonFile& f : cat.perfmon)
    for (const PerfmonEvent& e : f.events) {
      if (e.is_uncore()) continue;
      PerfmonEncoding enc = encode_perfmon_event(e, cat.layout);
      DecodedRaw d = decode_pmc_encoding(cat, RawEncoding{enc.config, enc.config1, true, e.name});
      bool found = false;
      for (const DecodeMatch& m : d.matches) found = found || m.name == e.name;
      EXPECT_TRUE(found) << e.name;
      ++checked;
    }
  EXPECT_GT(checked, 400u);
}

TEST(PerfmonSource, ResolvesDottedNamesWithModifiers) {
  PmcCatalog cat = catalog_for("spr", true);
  PerfmonEventSource source(cat.perfmon, cat.layout);
  auto r = source.resolve("MEM_LOAD_RETIRED.L3_MISS:u:precise=2");
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->ok()) << r->error().message;
  EXPECT_EQ(r->value().config, 0x20d1u);  // sapphirerapids_core.json: EventCode 0xd1, UMask 0x20
  EXPECT_TRUE(r->value().exclude_kernel);
  EXPECT_EQ(r->value().modifiers.precise, 2);
  EXPECT_EQ(r->value().origin, EventOrigin::Perfmon);
  EXPECT_FALSE(source.resolve("NOT_AN_EVENT.X").has_value());
  auto bad = source.resolve("MEM_LOAD_RETIRED.L3_MISS:zz");
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->ok());
  auto uncore = source.resolve("UNC_CHA_CLOCKTICKS");
  ASSERT_TRUE(uncore.has_value());
  ASSERT_FALSE(uncore->ok());
  EXPECT_NE(uncore->error().message.find("uncore_cha/"), std::string::npos);
}

TEST(PfmSource, NotMineAndMalformedAreDifferent) {
  PmcCatalog cat = catalog_for("ivb", false);
  PfmEventSource source(cat);
  EXPECT_FALSE(source.resolve("cycles").has_value());
  EXPECT_FALSE(source.resolve("sched:sched_switch").has_value());
  auto bad = source.resolve("INST_RETIRED:c=999");
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->ok());
  auto good = source.resolve("ivb::MEM_UOPS_RETIRED:ALL_LOADS:precise=2");
  ASSERT_TRUE(good.has_value() && good->ok());
  EXPECT_EQ(good->value().config, 0x81d0u);
  EXPECT_EQ(good->value().modifiers.precise, 2);
  EXPECT_EQ(good->value().max_precise, 2);
  EXPECT_GT(source.names().size(), 300u);
}

}  // namespace
}  // namespace vperf::events
