// libpfm4's encodings (under LIBPFM_FORCE_PMU) checked against Intel's perfmon JSON, the
// published tables for the same models: every event both catalogs name EVENT.UMASK /
// EVENT:UMASK must have the same event select, umask, cmask, inv, edge and any bits.
// Disagreements are allowed only when listed in kExplainedDifferences, with the reason.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "core/strings.h"
#include "pmc/encoding_disagreements.h"
#include "pmc/pmc_catalog.h"

namespace vperf::events {
namespace {

const std::filesystem::path kPerfmonRoot = std::filesystem::path(VPERF_TESTDATA) / "perfmon";

struct ExplainedDifference {
  std::string_view model;
  std::string_view perfmon_name;
  std::string_view why;
};

// Each entry was checked by hand against both tables; the reason says which one to trust.
// They are real differences between libpfm4 4.13 and Intel's files, reported by vperf's
// decode as two different encodings.
const ExplainedDifference kExplainedDifferences[] = {
    {"ivb", "MOVE_ELIMINATION.INT_ELIMINATED",
     "libpfm4 swaps umasks 0x01 and 0x04 of event 0x58; Intel's table has INT_ELIMINATED = 0x01"},
    {"ivb", "MOVE_ELIMINATION.INT_NOT_ELIMINATED", "the other half of the same swap (Intel: 0x04)"},
    {"skx", "UOPS_RETIRED.STALL_CYCLES",
     "libpfm4 builds it from UOPS_RETIRED:ALL (umask 0x01):i:c=1, Intel from RETIRE_SLOTS (umask 0x02) inv cmask=1; "
     "both count cycles in which nothing retired"},
    {"skx", "UOPS_RETIRED.TOTAL_CYCLES",
     "libpfm4 uses ALL:i:c=10, Intel RETIRE_SLOTS inv cmask=16; both thresholds are always true, so both count "
     "every cycle"},
    {"spr", "INST_RETIRED.ANY",
     "a fixed-counter-0 event: libpfm4 encodes 0xc0 umask 0x01 (0x1c0), Intel lists EventCode 0x00 UMask 0x01 "
     "(pseudo 0x100) and perf counts it as 0xc0; vperf follows perf"},
    {"spr", "TOPDOWN.BACKEND_BOUND_SLOTS",
     "libpfm4 files the TOPDOWN.*_SLOTS umasks under its TOPDOWN event, code 0x00 (fixed counter 3); Intel's table "
     "puts them on general-purpose event 0xA4, which is what the hardware counts"},
    {"spr", "TOPDOWN.BAD_SPEC_SLOTS", "same as TOPDOWN.BACKEND_BOUND_SLOTS: Intel's event is 0xA4"},
    {"spr", "TOPDOWN.BR_MISPREDICT_SLOTS", "same as TOPDOWN.BACKEND_BOUND_SLOTS: Intel's event is 0xA4"},
    {"spr", "TOPDOWN.MEMORY_BOUND_SLOTS", "same as TOPDOWN.BACKEND_BOUND_SLOTS: Intel's event is 0xA4"},
    {"spr", "INT_MISC.UNKNOWN_BRANCH_CYCLES",
     "libpfm4 4.13 has umask 0x07, Intel's file (V1.39) umask 0x40; trust Intel's current table"},
    {"spr", "ARITH.IDIV_ACTIVE",
     "Intel counts active cycles with CounterMask 1; libpfm4 4.13 leaves cmask 0 and so counts per-cycle "
     "occupancy instead"},
    {"spr", "ARITH.INT_DIVIDER_ACTIVE", "libpfm4 maps it to its IDIV_ACTIVE, without Intel's CounterMask 1"},
    {"spr", "UOPS_RETIRED.MS", "libpfm4 4.13 has umask 0x08, Intel's file (V1.39) umask 0x04"},
    {"spr", "MEM_TRANS_RETIRED.STORE_SAMPLE", "libpfm4 4.13 has umask 0x03, Intel's file umask 0x02"},
};

bool explained(std::string_view model, std::string_view name) {
  for (const ExplainedDifference& d : kExplainedDifferences)
    if (d.model == model && d.perfmon_name == name && !d.why.empty()) return true;
  return false;
}

struct Agreement {
  size_t compared = 0;
  size_t agree = 0;
  std::vector<std::string> explained_differences;
  std::vector<std::string> unexplained;
};

// The join and the comparison are the ones encode, decode and list --pmc use to show libpfm4's
// encoding beside Intel's (pmc/encoding_disagreements.h).
Agreement cross_check(const std::string& model) {
  PmcCatalogOptions options;
  options.model = model;
  options.perfmon = kPerfmonRoot;
  PmcCatalog catalog = load_pmc_catalog(options);
  EXPECT_NE(catalog.core_pmu(), nullptr);
  EncodingDisagreements disagreements(catalog);
  Agreement result;
  result.compared = disagreements.compared();
  result.agree = result.compared - disagreements.all().size();
  for (const EncodingDisagreement& d : disagreements.all()) {
    std::string line = d.perfmon_name + ": libpfm4 " + hex(d.libpfm_config) + " (" + d.libpfm_name + "), perfmon " +
                       hex(d.perfmon_config);
    (explained(model, d.perfmon_name) ? result.explained_differences : result.unexplained).push_back(line);
  }
  return result;
}

class PmcCrossCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(PmcCrossCheck, LibpfmEncodingsMatchIntelPerfmon) {
  Agreement a = cross_check(GetParam());
  std::cout << GetParam() << ": " << a.compared << " events in both catalogs, " << a.agree << " agree, "
            << a.explained_differences.size() << " explained differences, " << a.unexplained.size() << " unexplained\n";
  for (const std::string& d : a.explained_differences) std::cout << "  explained: " << d << "\n";
  // A join that finds almost nothing would make this test pass vacuously.
  EXPECT_GE(a.compared, 40u) << "too few events joined by name; the join is broken";
  for (const std::string& d : a.unexplained) ADD_FAILURE() << "encoding differs: " << d;
  EXPECT_EQ(a.agree + a.explained_differences.size(), a.compared);
  // An exception that no longer differs is stale and must go.
  for (const ExplainedDifference& d : kExplainedDifferences) {
    if (d.model != GetParam()) continue;
    bool seen = false;
    for (const std::string& line : a.explained_differences) seen = seen || line.rfind(std::string(d.perfmon_name) + ":", 0) == 0;
    EXPECT_TRUE(seen) << "stale exception: " << d.perfmon_name << " no longer differs on " << d.model;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PmcCrossCheck, ::testing::Values("ivb", "skx", "spr"));

}  // namespace
}  // namespace vperf::events
