#pragma once
// perf report --stdio's text, from a ReportData: the preamble, "# Total Lost Samples", then per
// event with samples "# Samples: N  of event 'E'", "# Event count (approx.)", the column
// header and its dots line, the entries heaviest first and, with call graphs, the graph under
// each entry. Column widths, number formats, the "[k]"/"[.]" level markers and the graph text
// are perf 6.1's. perf's closing random "(Tip: ...)" is not printed.
#include <string>
#include <vector>

#include "report/report_options.h"
#include "report/report_session.h"

namespace vperf::report {

// The entries of one event as shown: not filtered, above --percent-limit, in perf's order.
std::vector<const HistEntry*> shown_entries(const ReportData& report, const EventHists& hists, const ReportOptions& options);
// perf's order over all of an event's entries (overhead columns, then the sort keys).
void sort_entries(const ReportData& report, std::vector<const HistEntry*>& entries);

// The symbol column's text: "[k] name", "[.] 0x00007f0000001234".
std::string symbol_text(const HistEntry& entry);
// The entry's function as perf names it: the symbol, or "NAME (inlined)" for an inlined one.
std::string entry_symbol_name(const HistEntry& entry);
// The shared object column's text: the dso's short name or "[unknown]".
std::string dso_text(const HistEntry& entry);

// perf's "Samples: 317K": above 1000 the count is divided down to K, M, G.
std::string samples_with_unit(uint64_t samples);

// `after_header`: the perf.data header was printed just before (--header), so perf's pointer
// to --header is left out.
// perf report -T's table of each task's counts (TaskCounts), "#  PID   TID  EVENT..." with
// columns as wide as their widest value; the header alone when the file has no READ records
// (a recording without -s, or whose tasks did not exit), as perf prints it.
std::string task_counts_table(const ReportData& report);

std::string render_stdio(const ReportData& report, const ReportOptions& options, bool after_header = false);

}  // namespace vperf::report
