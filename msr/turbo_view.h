#pragma once
// What vperf turbo shows: the base frequency and turbo ratio limits it measures against, then one
// row per interval, as showboost-style text or as JSON. The measuring loop is the command's
// (src/cli/cmd_turbo.cpp); this is the part that knows the registers' meaning and the layout.
#include <boost/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "msr/activity_counters.h"
#include "msr/base_frequency.h"
#include "msr/msr_reader.h"
#include "msr/turbo.h"
#include "msr/turbo_ratio_limit.h"

namespace vperf::msr {

struct TurboLimits {
  std::vector<TurboStep> steps;
  std::string unreadable;  // why not, when steps are unknown
};

// MSR_TURBO_RATIO_LIMIT (and _LIMIT1 where it exists) of `cpu`. `device_counts`: the activity
// counters come from /dev/cpu/N/msr, so a failure is the device's, not the perf msr PMU's.
TurboLimits read_turbo_limits(const MsrReader& device, int cpu, bool device_counts);

// What the rows are measured against, known before the first interval.
struct TurboSetup {
  std::vector<int> cpus;
  ActivityCounterChoice choice;
  BaseFrequency base;
  TurboLimits limits;
};

// The lines before the first row, ending with the column header.
std::string turbo_text_header(const TurboSetup& setup, int interval_ms);
// One row: TIME is the wall clock's HH:MM:SS at the end of the interval.
std::string turbo_row_text(const std::string& time, const TurboRow& row);

boost::json::object turbo_row_json(const std::string& time, double seconds, const TurboRow& row, const ActivityDelta& sum);
boost::json::object turbo_report_json(const TurboSetup& setup, int interval_ms, boost::json::array rows);

}  // namespace vperf::msr
