#pragma once
// vperf report [-i perf.data|-] [--stdio] [--sort KEYS] [--children|--no-children] [-g SPEC] [-n]
//              [--percent-limit PCT] [--percentage relative|absolute] [--comm L] [--pid L] [--tid L]
//              [--dsos L] [--symbols L] [--header | --header-only] [--json]
//
// perf report --stdio for perf.data written by perf 6.1 or by vperf record: the same header,
// entries, percentages and call-graph text (docs/report.md lists the differences). --json
// prints the same histogram as a JSON document.
#include <optional>
#include <ostream>
#include <string>

#include "report/report_options.h"
#include "session/reading_session.h"

namespace vperf::cli {

struct ReportCommandOptions {
  session::ReadingInput source;  // -i, --symfs, vperf kvm's guests
  report::ReportOptions report;
  bool header = false;       // the feature header, then the report
  bool header_only = false;  // the feature header alone
  bool json = false;
  bool dump_raw = false;     // -D: every record dumped, then the record counts (report/raw_dump.h)
  bool stats = false;        // --stats: the record counts only
  bool tasks = false;        // --tasks: the threads as a tree of who forked whom (report/task_tree.h)
  bool show_threads = false; // -T: then each task's counts (report::task_counts_table)
};

// Parses perf report's -g/--call-graph value: "graph|fractal|none[,THRESHOLD[,caller|callee]]"
// (any order; perf's print_limit and sort key fields are accepted as "function").
report::CallGraphOptions parse_call_graph(const std::string& spec);

// Returns 0 (1 when trace text was printed from fields). Reader warnings (a truncated file) go
// to `err` on one line; bad input throws UserError.
int run_report(const ReportCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vperf::cli
