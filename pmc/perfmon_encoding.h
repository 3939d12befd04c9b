#pragma once
// How a perfmon JSON event becomes a perf encoding.
//
// Core events: config = EventCode | UMask << 8 | EdgeDetect << 18 | AnyThread << 21 |
// Invert << 23 | CounterMask << 24; config1 = MSRValue when MSRIndex names an extra MSR.
// Events on fixed-function counters carry EventCode 0x00 and a UMask that names the counter
// (0x01 = fixed 0, 0x02 = fixed 1, ...). perf, like Intel's own tooling, counts the first two
// through their general-purpose twins (0xc0, 0x3c), which the kernel moves to the fixed counter;
// the rest keep EventCode | UMask << 8 as the kernel's pseudo-encoding (0x300 = REF_TSC, 0x400 =
// TOPDOWN.SLOTS). The exceptions are a table in perfmon_encoding.cpp.
// Uncore events are encoded for their box's sysfs PMU (uncore_cha/event=..,umask=../), never rNNN.
#include <cstdint>
#include <string>
#include <vector>

#include "pmc/perfmon_json.h"
#include "pmc/pmc_encoding.h"

namespace vperf::events {

struct PerfmonEncoding {
  uint64_t config = 0;       // with the first EventCode
  uint64_t config1 = 0;
  std::string config1_term;  // "offcore_rsp", "ldlat", "frontend" or empty
  std::string pmu;           // "cpu", or the uncore PMU: "uncore_cha"
  std::string raw_syntax;    // "r1c0"; empty for uncore events
  std::string pmu_syntax;    // "cpu/event=0xc0,umask=0x01/"
  std::string fixed_counter_note;  // why a fixed-counter event has the config it has, or empty
  std::vector<uint64_t> alternative_configs;  // other EventCode/UMask pairs (0xbb next to 0xb7)
  int max_precise = 0;
};

PerfmonEncoding encode_perfmon_event(const PerfmonEvent& event, CoreLayout layout);

// The perf PMU name of an uncore box: "CHA" -> "uncore_cha", "CBO" -> "uncore_cbox".
std::string uncore_pmu_for_unit(const std::string& unit);

}  // namespace vperf::events
