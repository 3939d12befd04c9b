#pragma once
// Linux perf's arm64 event tables (tools/perf/pmu-events/arch/arm64), as vperf bundles them
// (pmc/data/perf-arm64, scripts/bundle-perf-arm64.sh), read into the perfmon event shape that
// list, encode and decode already work from.
//
//   mapfile.csv    "0x00000000410fd0c0,v1,arm/neoverse-n1,core": a MIDR with variant and
//                  revision zero, and the directory of that core's tables
//   *.json (root)  the architecture-standard events: EventName, EventCode, descriptions
//   DIR/*.json     a core's events, mostly {"ArchStdEvent": "INST_RETIRED", "PublicDescription":
//                  ...}; implementation-defined ones with their own EventName and EventCode
//
// An entry naming a standard event is resolved as perf's jevents resolves it: its code and name
// come from the standard event; its own descriptions win, the standard event's fill the gaps.
// "Errata" is appended to the descriptions as jevents does ("  Spec update: ..."). Entries of
// other PMUs (a "Unit" or "ConfigCode": HiSilicon's uncore) are left out and counted in a note.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "pmc/perfmon_json.h"
#include "pmc/perfmon_mapfile.h"

namespace vperf::events {

struct Arm64MapfileRow {
  uint32_t midr = 0;  // implementer, architecture and part; variant and revision are a minimum
  std::string dir;    // "arm/neoverse-n1"
  int line = 0;
};

Result<std::vector<Arm64MapfileRow>> parse_arm64_mapfile(std::string_view text, const std::string& source);

// The first row for this CPU: implementer, architecture and part equal, and the CPU's
// variant/revision at least the row's (perf 6.12's rule; every row today is r0p0, where it is
// perf 6.1's masked equality too). nullptr when no row matches.
const Arm64MapfileRow* arm64_row_for_midr(const std::vector<Arm64MapfileRow>& rows, uint32_t midr);

// Standard events by upper-case name.
using Arm64StandardEvents = std::map<std::string, PerfmonEvent>;

// One JSON file of perf's arm64 tables. With `standard` == nullptr the file is a standard
// events file itself (every entry needs EventName and EventCode); otherwise ArchStdEvent
// entries are resolved against it, and naming an unknown one is an error. `skipped_other_pmus`
// counts the entries of other PMUs left out.
Result<PerfmonFile> parse_perf_arm64_json(std::string_view text, const std::string& source,
                                          const Arm64StandardEvents* standard, size_t& skipped_other_pmus);

// The bundle's tables for a CPU by its MIDR: one PerfmonFile per JSON file of its directory.
// A MIDR the mapfile does not list is a note (no tables), not an error; a damaged bundle is a
// UserError.
PerfmonImport import_bundled_perf_arm64(const std::filesystem::path& bundle, uint32_t midr);

}  // namespace vperf::events
