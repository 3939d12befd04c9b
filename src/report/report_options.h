#pragma once
// What `vperf report` is asked to show: perf report's sort keys, children/self columns,
// call-graph parameters, filters and percentage mode. Plain data; the command line fills it
// (src/cli/cmd_report.cpp) and tests build it by hand.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "report/report_sort_keys.h"

namespace vperf::report {

// perf's default --max-stack (the kernel's perf_event_max_stack default).
inline constexpr unsigned kPerfMaxStack = 127;

// perf report -g's print type: graph (percent of the total), fractal (percent of the parent),
// none (no call graph, callchains still feed the Children column).
// graph: a tree with percentages of the total; fractal: of the parent; flat: each chain that
// ends in a node, root first, a frame a line; folded: the same chains one per line, ';'-joined.
enum class CallGraphMode : uint8_t { Graph, Fractal, Flat, Folded, None };
// caller: root first (perf's default with --children); callee: leaf first (with --no-children).
enum class CallGraphOrder : uint8_t { Caller, Callee };

struct CallGraphOptions {
  CallGraphMode mode = CallGraphMode::Graph;
  double min_percent = 0.5;               // perf's threshold: prune branches below this
  std::optional<CallGraphOrder> order;    // nullopt: caller with children, callee without
};

// Sample filters, as perf report's --comm/--pid/--tid/--dsos/--symbols: a sample is counted in
// the total either way; it is shown only if it passes every list that is set.
struct SampleFilters {
  std::set<std::string, std::less<>> comms, dsos, symbols;
  std::set<pid_t> pids, tids;
  bool empty() const { return comms.empty() && dsos.empty() && symbols.empty() && pids.empty() && tids.empty(); }
};

struct ReportOptions {
  // nullopt: perf's default, comm,dso,sym (trace when every event is a tracepoint).
  std::optional<std::vector<SortKey>> sort_keys;
  bool sort_starts_with_sym = false;   // the user's --sort began with "sym" (perf drops that frame)
  std::optional<bool> children;        // nullopt: perf's default (on when the file has callchains)
  CallGraphOptions call_graph;
  bool show_samples = false;           // -n: the Samples column
  bool show_total_period = false;      // --show-total-period: the Period column
  double percent_limit = 0;            // --percent-limit: hide entries (and branches) below it
  bool relative_percentage = false;    // --percentage relative: of the filtered total
  SampleFilters filters;
  bool inline_frames = true;           // --no-inline: DWARF-unwound frames without inline chains
  unsigned max_stack = kPerfMaxStack;  // --max-stack: callchain frames per sample
  bool quiet = false;                  // -q: no '#' comment lines, no warnings (perf report -q)
  // -F: the columns, in order, instead of perf's default ones (-n and --show-total-period are
  // then ignored, as perf ignores them). Empty: the default columns.
  std::vector<OutputField> fields;
  // --hierarchy: a level per sort key, each entry's next-key entries under it; no Children
  // (perf turns them off), call graphs under the last level's entries.
  bool hierarchy = false;
  // The file's {groups} (GROUP_DESC) shown as perf's event group view, one section per group
  // with a column per member (perf's default; --no-group shows each event alone).
  bool event_group = true;
};

}  // namespace vperf::report
