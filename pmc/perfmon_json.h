#pragma once
// Intel's perfmon event files (github.com/intel/perfmon, <MODEL>/events/*.json).
//
// A file is either {"Header": {...}, "Events": [ ... ]} (current) or a bare array of events
// (older releases). Every field of an event is a JSON string, numbers included:
//   EventName           "L2_STORE_LOCK_RQSTS.HIT_M"
//   EventCode           "0x27"; two codes "0xB7, 0xBB" for OFFCORE_RESPONSE (one per MSR)
//   UMask               "0x08"          UMaskExt  "0x00c001ff" (uncore, SPR and later)
//                       "0x01,0x02" on Atom cores (and "0x01,0x02,0x04,0x08" on some newer
//                       ones): one umask per MSR of MSRIndex, like the two EventCodes above
//   CounterMask         "0".."255"      Invert, EdgeDetect, AnyThread  "0" / "1"
//   MSRIndex            "0x1a6,0x1a7" (offcore), "0x3F6" (load latency), "0x3F7" (frontend)
//   MSRValue            the value for that MSR -> perf_event_attr.config1
//   PEBS                "0".."2" (older schema)   Precise "0"/"1" (SPR schema)
//   PDISTCounter        counters with precise distribution ("na" when none)
//   Counter             "0,1,2,3", or "Fixed counter 1" for the fixed-function counters
//   SampleAfterValue    default sampling period
//   Deprecated          "0"/"1" (newer files)
//   BriefDescription / PublicDescription
//   Unit                uncore box ("CHA", "iMC", "CBO" ...); absent for core events
// Unknown fields are ignored; a known field with a malformed value is an error that names the
// file, the event and the field.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::events {

struct PerfmonEvent {
  std::string name;
  std::vector<uint32_t> event_codes;  // at least one
  uint32_t umask = 0;                       // the first UMask
  std::vector<uint32_t> umask_alternatives;  // the others of a UMask list, in order
  uint64_t umask_ext = 0;
  uint32_t counter_mask = 0;
  bool invert = false;
  bool edge_detect = false;
  bool any_thread = false;
  std::vector<uint32_t> msr_indexes;  // empty when the event programs no extra MSR
  uint64_t msr_value = 0;
  int pebs = 0;  // 0 none, 1 PEBS, 2 PEBS with extra data (old schema); SPR "Precise" maps to 1
  bool precise_distribution = false;  // PDISTCounter names a counter
  std::string counter;                // as written
  std::optional<int> fixed_counter;   // "Fixed counter N"
  uint64_t sample_after_value = 0;
  bool deprecated = false;
  std::string brief_description;
  std::string public_description;
  std::string unit;  // uncore box, empty for core events
  bool is_uncore() const { return !unit.empty(); }
};

struct PerfmonFile {
  std::string source;  // path or name it was read from, for messages
  std::string info;    // Header.Info, e.g. "Performance Monitoring Events for ... - V24"
  std::string version; // Header.Version
  std::vector<PerfmonEvent> events;
};

Result<PerfmonFile> parse_perfmon_json(std::string_view text, const std::string& source);
// A file ending in ".xz" is decompressed first (pmc/xz_text.h), as the bundled tables are.
Result<PerfmonFile> load_perfmon_file(const std::filesystem::path& path);

}  // namespace vperf::events
