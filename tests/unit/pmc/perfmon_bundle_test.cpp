// vperf's bundled copy of Intel's perfmon tables (pmc/data/perfmon, pmc/perfmon_bundle.h),
// checked against the real Intel JSON in VPERF_TESTDATA (not written by us): every event of the
// IVB, SKX and SPR tables resolves by default, without --perfmon, to the encoding the JSON gives;
// the bundle holds those files unchanged; every event table the bundled mapfile lists is there
// and parses; and the stat/record resolver reads the tables only when a name needs them.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdio>
#include <map>
#include <set>

#include "core/files.h"
#include "core/strings.h"
#include "pmc/deferred_pmc_source.h"
#include "pmc/event_environment.h"
#include "pmc/perfmon_bundle.h"
#include "pmc/perfmon_mapfile.h"
#include "pmc/pmc_encode.h"
#include "pmc/xz_text.h"

namespace vperf::events {
namespace {

namespace json = boost::json;

const std::filesystem::path kIntelTestdata = std::filesystem::path(VPERF_TESTDATA) / "perfmon";

struct ModelTables {
  std::string model;
  std::vector<std::string> files;  // relative to the perfmon root
};

const ModelTables kModels[] = {
    {"ivb", {"IVB/events/ivybridge_core.json", "IVB/events/ivybridge_uncore.json"}},
    {"skx", {"SKX/events/skylakex_core.json", "SKX/events/skylakex_uncore.json"}},
    {"spr", {"SPR/events/sapphirerapids_core.json", "SPR/events/sapphirerapids_uncore.json"}},
};

// gtest prints a parameter with this (the model) instead of its bytes.
void PrintTo(const ModelTables& tables, std::ostream* os) { *os << tables.model; }

json::array intel_events(const std::filesystem::path& file) {
  Result<std::string> text = read_file(file);
  EXPECT_TRUE(text.ok()) << file;
  if (!text) return {};
  return json::parse(*text).as_object().at("Events").as_array();
}

// A field of Intel's JSON as a number: "0x1A", "12"; absent or "0" is 0.
uint64_t field(const json::object& event, std::string_view key) {
  const json::value* v = event.if_contains(key);
  if (v == nullptr || !v->is_string()) return 0;
  std::string s(trim(std::string_view(v->as_string())));
  if (s.empty() || s == "na") return 0;
  return std::stoull(s, nullptr, 0);  // base 0: "0x" prefix or decimal
}

// The encoding Intel's JSON gives an event, worked out here from the JSON itself: the
// IA32_PERFEVTSELx fields (SDM vol. 3B, 20.2.1.1). Events on fixed counters have EventCode 0
// and a UMask naming the counter, which is the kernel's pseudo-encoding, except three that perf
// counts through their general-purpose twins (Linux tools/perf/pmu-events/jevents.py,
// fixed-counter events: inst_retired.any -> event=0xc0, cpu_clk_unhalted.thread and .core ->
// event=0x3c, cpu_clk_unhalted.thread_any -> event=0x3c,any=1).
uint64_t intel_config(const json::object& event) {
  std::string name(event.at("EventName").as_string());
  std::string counter = event.contains("Counter") ? std::string(event.at("Counter").as_string()) : "";
  uint64_t any = field(event, "AnyThread") << 21;
  if (counter.find("Fixed counter") != std::string::npos) {
    if (name == "INST_RETIRED.ANY") return 0xc0;
    if (name == "CPU_CLK_UNHALTED.THREAD" || name == "CPU_CLK_UNHALTED.CORE") return 0x3c;
    if (name == "CPU_CLK_UNHALTED.THREAD_ANY") return 0x3c | any;
  }
  std::string codes(event.at("EventCode").as_string());
  uint64_t code = std::stoull(std::string(trim(split(codes, ',').front())), nullptr, 0);  // "0xB7, 0xBB": the first
  return code | field(event, "UMask") << 8 | field(event, "EdgeDetect") << 18 | any | field(event, "Invert") << 23 |
         field(event, "CounterMask") << 24;
}

uint64_t intel_config1(const json::object& event) {
  const json::value* msr = event.if_contains("MSRIndex");
  bool programs_msr = msr && msr->is_string() && field(event, "MSRIndex") != 0;
  return programs_msr ? field(event, "MSRValue") : 0;
}

class BundledPerfmon : public ::testing::TestWithParam<ModelTables> {};

TEST_P(BundledPerfmon, EveryIntelEventResolvesByDefaultToTheEncodingItsJsonGives) {
  const ModelTables& m = GetParam();
  EventEnvironmentOptions options;
  options.pmc.model = m.model;  // and no --perfmon
  auto env = EventEnvironment::load(options);
  size_t core = 0, uncore = 0;
  for (const std::string& file : m.files) {
    for (const json::value& v : intel_events(kIntelTestdata / file)) {
      const json::object& event = v.as_object();
      std::string name(event.at("EventName").as_string());
      if (event.contains("Unit")) {
        // Uncore events are counted through their box's PMU; the resolver says which, with the
        // JSON's event and umask.
        try {
          encode_events(*env, {name});
          ADD_FAILURE() << name << ": an uncore event encoded as a core one";
        } catch (const UserError& e) {
          char expected[64];
          std::snprintf(expected, sizeof expected, "event=0x%02llx,umask=0x%02llx",
                        static_cast<unsigned long long>(field(event, "EventCode")),
                        static_cast<unsigned long long>(field(event, "UMask")));
          EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << name << ": " << e.what();
        }
        ++uncore;
        continue;
      }
      std::vector<EncodedEvent> encoded;
      try {
        encoded = encode_events(*env, {name});
      } catch (const UserError& e) {
        ADD_FAILURE() << name << " does not resolve: " << e.what();
        continue;
      }
      ASSERT_EQ(encoded.size(), 1u) << name;
      EXPECT_EQ(encoded[0].source, "perfmon") << name;
      EXPECT_EQ(encoded[0].event.config, intel_config(event)) << name << " on " << m.model;
      EXPECT_EQ(encoded[0].event.config1, intel_config1(event)) << name << " on " << m.model;
      ++core;
    }
  }
  std::cout << m.model << ": " << core << " core and " << uncore << " uncore events checked\n";
  EXPECT_GT(core, 300u);
  EXPECT_GT(uncore, 30u);
}

// The bundle keeps Intel's files byte for byte; the shared testdata holds the same files from
// Intel's repository, at the same release (Header.Version): the bytes must agree.
TEST_P(BundledPerfmon, BundledFilesAreIntelsFilesUnchanged) {
  std::filesystem::path bundle = bundled_perfmon_dir();
  for (const std::string& file : GetParam().files) {
    Result<std::string> reference = read_file(kIntelTestdata / file);
    Result<std::string> packed = read_file(bundle / (file + ".xz"));
    ASSERT_TRUE(reference.ok() && packed.ok()) << file;
    Result<std::string> bundled = decompress_xz(*packed, kMaxWholeFileBytes, file);
    ASSERT_TRUE(bundled.ok()) << bundled.error().message;
    auto version = [](const std::string& text) {
      return std::string(json::parse(text).as_object().at("Header").as_object().at("Version").as_string());
    };
    // A release that differs is drift, not a reason to look away: the bundle and the shared
    // testdata are kept at one release, and moving either moves the other (scripts/bundle-perfmon.sh).
    EXPECT_EQ(version(*bundled), version(*reference))
        << file << ": the bundle's release differs from the shared testdata's: regenerate the bundle at the testdata's "
        << "release (pmc/data/perfmon/PROVENANCE.md), or bring the testdata to the bundle's";
    EXPECT_TRUE(*bundled == *reference) << file << " differs from the shared testdata";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BundledPerfmon, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<ModelTables>& p) { return p.param.model; });

// Every event table (core, hybridcore, uncore, uncore experimental) a row of the bundled
// mapfile names is in the bundle and parses, so every CPU Intel lists has its tables.
TEST(BundledPerfmonMapfile, EveryEventTableItListsIsPresentAndParses) {
  std::filesystem::path bundle = bundled_perfmon_dir();
  Result<std::string> text = read_file(bundle / "mapfile.csv");
  ASSERT_TRUE(text.ok());
  Result<std::vector<MapfileEntry>> rows = parse_mapfile(*text, "mapfile.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  std::set<std::string> signatures, files;
  size_t event_rows = 0;
  std::map<std::string, size_t> events_by_file;
  for (const MapfileEntry& row : *rows) {
    if (!is_event_file_type(row.event_type)) continue;
    ++event_rows;
    signatures.insert(row.family_model);
    if (!files.insert(row.filename).second) continue;
    std::filesystem::path packed = bundle / (std::filesystem::path(row.filename).relative_path().string() + ".xz");
    Result<PerfmonFile> table = load_perfmon_file(packed);
    EXPECT_TRUE(table.ok()) << "mapfile.csv line " << row.line << ": " << table.error().message;
    if (!table) continue;
    EXPECT_FALSE(table->events.empty()) << packed;
    events_by_file[row.filename] = table->events.size();
  }
  std::cout << event_rows << " event-table rows, " << signatures.size() << " CPU signatures, " << files.size()
            << " files\n";
  EXPECT_GT(signatures.size(), 50u) << "the bundle lost most of Intel's models";
  // And no table sits in the bundle unlisted (the generator writes only listed files).
  size_t packed_files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(bundle))
    packed_files += entry.path().extension() == ".xz";
  EXPECT_EQ(packed_files, files.size());
}

// Every Intel model vperf can name with --model has Intel's tables in the bundle.
TEST(BundledPerfmonMapfile, EveryIntelModelOfVperfsTableHasItsTables) {
  std::filesystem::path bundle = bundled_perfmon_dir();
  for (const PmcModel& m : known_pmc_models()) {
    if (!m.cpu || !m.cpu->is_intel()) continue;
    PerfmonImport imported = import_bundled_perfmon(bundle, *m.cpu);
    EXPECT_FALSE(imported.files.empty()) << m.name << " (" << m.cpu->mapfile_key() << ")";
  }
}

TEST(BundledPerfmonMapfile, AnAmdModelHasNone) {
  PmcCatalogOptions o;
  o.model = "zen3";
  PmcCatalog cat = load_pmc_catalog(o);
  EXPECT_TRUE(cat.perfmon.empty());
  EXPECT_TRUE(cat.perfmon_origin.empty());
}

// stat and record: the libpfm4 names load when a name reaches them, Intel's tables only when a
// name could be Intel's, and then Intel's encoding wins there too.
TEST(DeferredPmcSource, ReadsIntelsTablesOnlyForANameThatCouldBeIntels) {
  PmcCatalogOptions o;
  o.model = "ivb";
  DeferredPmcSource source(o);
  auto prefixed = source.resolve("ivb::MOVE_ELIMINATION:INT_ELIMINATED");
  ASSERT_TRUE(prefixed && prefixed->ok());
  EXPECT_EQ(prefixed->value().config, 0x458u);  // libpfm4's table, as asked for by its prefix
  EXPECT_TRUE(source.loaded());
  EXPECT_FALSE(source.perfmon_loaded());
  auto dotted = source.resolve("MOVE_ELIMINATION.INT_ELIMINATED");
  EXPECT_TRUE(source.perfmon_loaded());
  ASSERT_TRUE(dotted && dotted->ok());
  EXPECT_EQ(dotted->value().config, 0x158u);  // ivybridge_core.json
  EXPECT_EQ(dotted->value().origin, EventOrigin::Perfmon);
}

}  // namespace
}  // namespace vperf::events
