#pragma once
// mapfile.csv at the root of a perfmon checkout: which event files describe which CPU.
//
//   Family-model,Version,Filename,EventType,Core Type,Native Model ID,Core Role Name
//   GenuineIntel-6-3A,V24,/IVB/events/ivybridge_core.json,core,,,
//   GenuineIntel-6-55-[01234],V1.37,/SKX/events/skylakex_core.json,core,,,
// The first column is a regular expression over "Vendor-Family-Model[-Stepping]" (hex, upper
// case), the way perf's jevents reads it: "GenuineIntel-6-55-[01234]" matches Skylake-SP
// steppings 0-4 only. EventType says what a file holds: core, hybridcore, uncore,
// "uncore experimental", offcore, fp_arith_inst, metrics, "retire latency".
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "pmc/perfmon_json.h"
#include "pmc/pmc_models.h"

namespace vperf::events {

struct MapfileEntry {
  std::string family_model;  // the regular expression
  std::string version;
  std::string filename;  // relative to the checkout root, with a leading '/'
  std::string event_type;
  std::string core_type;  // hybrid parts: "0x20" (Atom), "0x40" (Core); else empty
  int line = 0;
};

Result<std::vector<MapfileEntry>> parse_mapfile(std::string_view text, const std::string& source);

// Whether a Family-model key matches the CPU. A key with a stepping part needs the stepping;
// a key without one matches every stepping. Keys are read as the regular-expression subset Intel's
// mapfile uses (literals, '.', classes, one level of (a|b) groups), in time linear in the key; a
// key outside that subset matches nothing.
bool mapfile_key_matches(std::string_view key, const CpuSignature& cpu);

// Event types vperf imports: those that describe events (not metrics or helper tables).
bool is_event_file_type(std::string_view event_type);

// The mapfile rows for `cpu` whose files hold events, in mapfile order.
std::vector<MapfileEntry> select_event_files(const std::vector<MapfileEntry>& entries, const CpuSignature& cpu);

// What --perfmon FILE|DIR loaded: the files, and notes on files that were listed but skipped.
struct PerfmonImport {
  std::vector<PerfmonFile> files;
  std::vector<std::string> notes;
};

// --perfmon PATH: a single JSON file, or a perfmon checkout root with mapfile.csv (then `cpu`
// picks the files; without a matching row it is a UserError naming the signature).
// Malformed JSON is a UserError naming the file and the offending event and field.
// In a checkout directory, a file listed as FILE may also be there as FILE.xz.
PerfmonImport import_perfmon(const std::filesystem::path& path, const std::optional<CpuSignature>& cpu);

// vperf's bundled tables (pmc/perfmon_bundle.h) for `cpu`. A CPU the mapfile does not list is
// not an error (a note: libpfm4 alone then); a listed file that is missing or malformed is a
// UserError, since the installation is damaged.
PerfmonImport import_bundled_perfmon(const std::filesystem::path& bundle, const CpuSignature& cpu);

}  // namespace vperf::events
