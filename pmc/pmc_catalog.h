#pragma once
// The PMC catalog of one CPU model: libpfm4's core, uncore and RAPL PMUs with every event,
// umask, modifier and raw encoding, plus Intel's perfmon JSON events: for an Intel model, the
// tables vperf bundles (pmc/perfmon_bundle.h), or the user's with --perfmon FILE|DIR instead.
// This is what `vperf list --pmc`, `vperf encode` and `vperf decode` work from.
//
// Presence is reported honestly: libpfm4 decides "present" from CPUID family/model alone, so
// the catalog labels it "libpfm4: present by CPU model" and separately says whether the kernel
// exposes a matching PMU under /sys/bus/event_source/devices.
#include <boost/json/value.hpp>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "pmc/perfmon_json.h"
#include "pmc/pfm_session.h"
#include "pmc/pmc_encoding.h"
#include "pmc/pmc_models.h"
#include "events/sysfs_pmu.h"

namespace vperf::events {

struct PmcCatalogOptions {
  std::string model;                             // --model; empty = the running CPU
  std::optional<std::filesystem::path> perfmon;  // --perfmon FILE|DIR; nullopt: the bundled tables
  std::filesystem::path sysfs_pmu_root = kSysfsPmuRoot;
  // list --pmc: a catalog with no table at all (this machine's CPU, unknown to every table) is an
  // error; encode and decode go on with raw encodings.
  bool require_tables = false;
};

struct PmcPmuEntry {
  PfmPmu pmu;                               // with events (and encodings when `encoded`)
  std::vector<std::string> instance_names;  // libpfm PMUs sharing this table: skx_unc_cha0..27
  bool encoded = false;                     // libpfm4 had this PMU active, so encodings are filled
  std::string libpfm_status;                // "present by CPU model", "forced (LIBPFM_FORCE_PMU=ivb)", ...
  std::string kernel_status;                // what sysfs says, or why it was not asked
};

struct PmcCatalog {
  PmcModel model;
  CoreLayout layout = CoreLayout::Intel;
  std::vector<PmcPmuEntry> pmus;  // core PMU first, then uncore, then RAPL
  std::vector<PerfmonFile> perfmon;
  std::string perfmon_origin;  // where `perfmon` came from, for listings; empty when nowhere
  std::vector<std::string> notes;

  const PmcPmuEntry* core_pmu() const;
  size_t libpfm_event_count() const;   // events of all PMU tables (instances counted once)
  size_t perfmon_event_count() const;
};

// Resolves --model: "" means the running CPU (as libpfm4 detects it; arm64's by MIDR); a CPU no
// table knows is a model without tables (raw events still encode, in its vendor's layout). An
// unknown name is a usage error whose hint lists the valid names and the closest ones.
PmcModel resolve_pmc_model(std::string_view requested);
// Whether libpfm4 knows this machine's CPU (a model-specific core PMU): a CPU newer than its
// tables has no PMC names, which is not an error for a builtin or tracepoint event.
bool running_cpu_has_pmc_model();

// Loads libpfm4's tables for the model and then its perfmon tables (add_perfmon_tables).
// Errors the user can fix (unknown model, unreadable or malformed perfmon JSON) are UserErrors.
PmcCatalog load_pmc_catalog(const PmcCatalogOptions& options);
// The two halves, for DeferredPmcSource, which reads Intel's tables only when a name reaches them.
PmcCatalog load_libpfm_catalog(const PmcCatalogOptions& options);
// Fills `perfmon`: --perfmon's files when given; else, for an Intel model, the bundled tables of
// its CPU signature (only that model's files are read and decompressed); else none.
void add_perfmon_tables(PmcCatalog& catalog, const PmcCatalogOptions& options);

// `vperf list --pmc [FILTER]`: FILTER is a glob ("*UOPS*") or a case-insensitive substring
// matched against "EVENT", "EVENT:UMASK", "pmu::EVENT:UMASK" and perfmon "EVENT.NAME".
bool pmc_filter_matches(std::string_view filter, std::string_view name);
void print_pmc_catalog(std::ostream& out, const PmcCatalog& catalog, std::string_view filter);
boost::json::value pmc_catalog_json(const PmcCatalog& catalog, std::string_view filter);

}  // namespace vperf::events
