#pragma once
// Derived metrics: the "# ..." comment column of perf stat 6.1 (its stat-shadow.c), computed
// from the other events counted in the same aggregation unit, run and interval.
//
// perf's rules, reproduced here:
//  - an event pairs only with events of the same context: the same exclude_user,
//    exclude_kernel, exclude_hv and exclude_host bits (so cycles:u pairs with
//    instructions:u, never with instructions); clocks (task-clock, cpu-clock) have no context;
//  - when a reference event was counted more than once in a context, its average is used;
//  - the first rule that matches an event wins, in this order:
//      instructions      "insn per cycle" (÷ cycles) and, on a second line when
//                        stalled-cycles-* exist, "stalled cycles per insn" (max of them ÷ insn)
//      branch-misses     "of all branches" (% of branches)
//      L1-dcache-load-misses, L1-icache-load-misses, dTLB-load-misses, iTLB-load-misses,
//      LLC-load-misses   "of all L1-dcache accesses" ... (% of the matching *-loads event)
//      cache-misses      "of all cache refs" (% of cache-references)
//      stalled-cycles-frontend / -backend  "frontend cycles idle" / "backend cycles idle" (% of cycles)
//      cycles            "GHz" (÷ task-clock/cpu-clock nanoseconds)
//      task-clock, cpu-clock  "CPUs utilized" (÷ wall time)
//      anything else     "/sec", "K/sec", "M/sec", "G/sec" (÷ task-clock/cpu-clock seconds)
//      otherwise         no metric.
//
// vperf's additions (not in perf; they take precedence over the "/sec" rule only):
//  - turbo ratio: msr/aperf/ ÷ msr/mperf/ on the aperf line, and cycles ÷ ref-cycles on a
//    second line under cycles' "GHz"; printed like perf's ratios: "   1.16 turbo ratio";
//  - TSC utilization: msr/mperf/ ÷ msr/tsc/ on the mperf line, ref-cycles ÷ msr/tsc/ on the
//    ref-cycles line, as a percent: "  86.21% of TSC".
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "events/resolved_event.h"
#include "stat/stat_counts.h"

namespace vperf::stat {

// What an event is for the metrics.
enum class MetricRole {
  Other,
  Clock,  // task-clock, cpu-clock
  Cycles,
  RefCycles,
  Instructions,
  StalledFrontend,
  StalledBackend,
  Branches,
  BranchMisses,
  CacheReferences,
  CacheMisses,
  L1dLoads,
  L1dLoadMisses,
  L1iLoads,
  L1iLoadMisses,
  LlLoads,
  LlLoadMisses,
  DtlbLoads,
  DtlbLoadMisses,
  ItlbLoads,
  ItlbLoadMisses,
  MsrAperf,
  MsrMperf,
  MsrTsc,
};

MetricRole metric_role(const events::ResolvedEvent& event);

// perf's evsel_context: the exclude_user/kernel/hv/host bits after perf's modifier rules.
int metric_context(const events::ResolvedEvent& event);

// How perf prints a count: task-clock and cpu-clock in "msec" (scale 1e-6), others as is.
struct EventUnit {
  std::string unit;
  double scale = 1.0;
};
EventUnit event_unit(const events::ResolvedEvent& event);

// The reference counts of one aggregation unit (perf's runtime_stat for one CPU index).
class ShadowStats {
 public:
  // `value` is the count in the event's own units (nanoseconds for clocks).
  void record(MetricRole role, int context, double value);
  // Average of what was recorded for (role, context); clocks ignore the context.
  std::optional<double> get(MetricRole role, int context) const;

 private:
  std::map<std::pair<MetricRole, int>, std::pair<double, int>> values_;  // sum, n
};

// One call of perf's print_metric.
struct MetricValue {
  const char* format = nullptr;  // printf format of the value; nullptr: unit without a value
  std::optional<std::string> unit;  // nullopt: no metric at all (perf passes NULL)
  double value = 0;
  bool new_line = false;  // printed on a continuation line (perf's out->new_line first)
};

struct MetricInputs {
  double wall_time_ns = 0;  // the run's (or interval's) wall time, for "CPUs utilized"
};

// The metrics of one event whose printed (scaled) count is `display_value`.
// Returns at least one entry; the first never has new_line set.
std::vector<MetricValue> derive_metrics(const StatEvent& event, double display_value, const ShadowStats& shadow,
                                        const MetricInputs& inputs);

// The metrics above by name, for stat -M/--metrics: the events that make each one's line.
// They are not grouped (perf groups a metric's events unless --metric-no-group): on a VM that
// hides some counters a group would fail whole, where alone the hidden one says
// <not supported> and the rest count.
// With -M the metric's line is labelled with its name, as perf labels the metrics it computes
// ("#     0.51 CPUs_utilized" where -e task-clock shows "CPUs utilized"): the metric's unit,
// derive_metrics' text, is replaced on the line of one of its events.
struct NamedMetric {
  std::string_view name;    // matched without regard to case, as perf matches metric names
  std::string_view events;  // an -e list
  std::string_view unit;    // derive_metrics' unit on its line ("insn per cycle")
  std::string_view shows;   // the metric line it gives, for the list and the docs
};
std::span<const NamedMetric> named_metrics();
// The metric of that name (without regard to case), or nullptr.
const NamedMetric* find_named_metric(std::string_view name);
// The events of these metrics, each once, in order; an unknown name is an Error naming it.
Result<std::vector<std::string>> events_of_metrics(const std::vector<std::string>& names);
// The unit to print for metric value `m` on `event`'s line when `requested` were asked for by
// name: the metric's name where one of them gives this line, else m's own unit.
std::optional<std::string> named_metric_unit(const MetricValue& m, const StatEvent& event,
                                             const std::vector<const NamedMetric*>& requested);

// perf's convert_unit_double: 1234567 -> 1.234567 with 'M'; ' ' below 1000.
double convert_unit(double value, char* unit);

}  // namespace vperf::stat
