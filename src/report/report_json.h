#pragma once
// vperf report --json: the histogram perf report prints, as data (layout in docs/report.md):
//
//   { "lost_samples": N, "children": bool, "sort_keys": ["comm", "dso", "sym"],
//     "events": [ { "name": "cpu-clock", "samples": N, "period": P,
//                   "shown_samples": N, "shown_period": P,
//                   "entries": [ { <one member per sort key>,
//                                  "self_percent": 63.76, "children_percent": 99.8 (with children),
//                                  "self_period": P, "children_period": P (with children),
//                                  "self_samples": N, "children_samples": N (with children) } ] } ] }
//
// Sort-key members: "comm" (string), "pid"/"tid" ({"tid": N, "comm": string}), "dso" (string),
// "sym" ({"name": string, "level": "k"|"."|..., "address": "0x..." when unresolved}),
// "cpu" (number, -1 without PERF_SAMPLE_CPU). Entries are the ones the text shows (filters and
// --percent-limit applied), in the same order; percentages are not rounded.
#include <boost/json.hpp>

#include "report/report_options.h"
#include "report/report_session.h"

namespace vperf::report {

boost::json::value report_json(const ReportData& report, const ReportOptions& options);

}  // namespace vperf::report
