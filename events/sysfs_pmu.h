#pragma once
// Kernel PMUs as sysfs describes them under /sys/bus/event_source/devices/<pmu>/:
//   type            the perf_event_attr.type to use
//   format/<term>   "config:0-7", "config1:0-63", "config:8-15,32-35": where a term's bits go
//   events/<alias>  "event=0x3c,umask=0x00" (+ <alias>.scale, <alias>.unit)
//   caps/<name>     pmu_name, max_precise, branches ... (core PMUs)
//   cpumask         CPUs to open uncore events on
// The root directory is a parameter so that unit tests can use a fake sysfs tree.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace vperf::events {

inline const std::filesystem::path kSysfsPmuRoot = "/sys/bus/event_source/devices";

struct BitRange {
  int low = 0;
  int high = 0;  // inclusive
};

struct PmuFormatTerm {
  std::string name;          // "event", "umask", "inv", "cmask", "psys" ...
  std::string field;         // "config", "config1" or "config2"
  std::vector<BitRange> bits;  // low ranges first; a value's bits fill them in order
};

struct PmuEventAlias {
  std::string name;   // "tsc", "energy-psys", "cpu-cycles"
  std::string terms;  // contents of events/<name>, e.g. "event=0x02"
  std::string scale;  // contents of events/<name>.scale, or empty
  std::string unit;   // contents of events/<name>.unit, or empty
};

struct SysfsPmu {
  std::string name;
  uint32_t type = 0;
  std::vector<PmuFormatTerm> format;
  std::vector<PmuEventAlias> events;
  std::map<std::string, std::string> caps;
  std::string cpumask;  // empty when the PMU has none (per-task PMUs)

  const PmuFormatTerm* find_term(std::string_view term) const;
  const PmuEventAlias* find_event(std::string_view alias) const;
};

// The three config words of perf_event_attr that format terms fill.
struct PmuConfig {
  uint64_t config = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  bool operator==(const PmuConfig&) const = default;
};

// Number of bits a term occupies (8 for "config:0-7").
int term_width(const PmuFormatTerm& term);
// Writes `value` into the term's bits of `config` (clearing what was there, so later terms
// override earlier ones, as perf does); an error if the value has more bits than the term.
Result<PmuConfig> place_term_value(const PmuFormatTerm& term, uint64_t value, PmuConfig config);
// The inverse: the term's value as stored in `config`.
uint64_t extract_term_value(const PmuFormatTerm& term, const PmuConfig& config);

// Parses one format file's contents ("config:0-7,21"); the error names the bad token.
Result<PmuFormatTerm> parse_format_term(const std::string& name, const std::string& spec);
Result<SysfsPmu> load_sysfs_pmu(const std::filesystem::path& root, const std::string& name);
// Every PMU under root, sorted by name. PMUs that cannot be read are skipped.
std::vector<SysfsPmu> load_sysfs_pmus(const std::filesystem::path& root = kSysfsPmuRoot);

}  // namespace vperf::events
