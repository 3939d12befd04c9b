#include "stat/stat_metrics.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "events/attr_builder.h"

namespace vperf::stat {

namespace {

constexpr uint64_t cache_event(uint64_t id, uint64_t result) {
  return id | (uint64_t{PERF_COUNT_HW_CACHE_OP_READ} << 8) | (result << 16);
}
constexpr uint64_t loads(uint64_t id) { return cache_event(id, PERF_COUNT_HW_CACHE_RESULT_ACCESS); }
constexpr uint64_t load_misses(uint64_t id) { return cache_event(id, PERF_COUNT_HW_CACHE_RESULT_MISS); }

// Hybrid machines put a PMU type in config's upper half (PERF_HW_EVENT_MASK keeps the event).
constexpr uint64_t kHwEventMask = 0xffffffffULL;

}  // namespace

MetricRole metric_role(const events::ResolvedEvent& e) {
  if (e.pmu == "msr") {
    if (e.name.find("aperf") != std::string::npos) return MetricRole::MsrAperf;
    if (e.name.find("mperf") != std::string::npos) return MetricRole::MsrMperf;
    if (e.name.find("tsc") != std::string::npos) return MetricRole::MsrTsc;
    return MetricRole::Other;
  }
  if (e.type == PERF_TYPE_SOFTWARE) {
    if (e.config == PERF_COUNT_SW_TASK_CLOCK || e.config == PERF_COUNT_SW_CPU_CLOCK) return MetricRole::Clock;
    return MetricRole::Other;
  }
  if (e.type == PERF_TYPE_HARDWARE) {
    switch (e.config & kHwEventMask) {
      case PERF_COUNT_HW_CPU_CYCLES: return MetricRole::Cycles;
      case PERF_COUNT_HW_INSTRUCTIONS: return MetricRole::Instructions;
      case PERF_COUNT_HW_CACHE_REFERENCES: return MetricRole::CacheReferences;
      case PERF_COUNT_HW_CACHE_MISSES: return MetricRole::CacheMisses;
      case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return MetricRole::Branches;
      case PERF_COUNT_HW_BRANCH_MISSES: return MetricRole::BranchMisses;
      case PERF_COUNT_HW_STALLED_CYCLES_FRONTEND: return MetricRole::StalledFrontend;
      case PERF_COUNT_HW_STALLED_CYCLES_BACKEND: return MetricRole::StalledBackend;
      case PERF_COUNT_HW_REF_CPU_CYCLES: return MetricRole::RefCycles;
      default: return MetricRole::Other;
    }
  }
  if (e.type == PERF_TYPE_HW_CACHE) {
    switch (e.config & kHwEventMask) {
      case loads(PERF_COUNT_HW_CACHE_L1D): return MetricRole::L1dLoads;
      case load_misses(PERF_COUNT_HW_CACHE_L1D): return MetricRole::L1dLoadMisses;
      case loads(PERF_COUNT_HW_CACHE_L1I): return MetricRole::L1iLoads;
      case load_misses(PERF_COUNT_HW_CACHE_L1I): return MetricRole::L1iLoadMisses;
      case loads(PERF_COUNT_HW_CACHE_LL): return MetricRole::LlLoads;
      case load_misses(PERF_COUNT_HW_CACHE_LL): return MetricRole::LlLoadMisses;
      case loads(PERF_COUNT_HW_CACHE_DTLB): return MetricRole::DtlbLoads;
      case load_misses(PERF_COUNT_HW_CACHE_DTLB): return MetricRole::DtlbLoadMisses;
      case loads(PERF_COUNT_HW_CACHE_ITLB): return MetricRole::ItlbLoads;
      case load_misses(PERF_COUNT_HW_CACHE_ITLB): return MetricRole::ItlbLoadMisses;
      default: return MetricRole::Other;
    }
  }
  return MetricRole::Other;
}

int metric_context(const events::ResolvedEvent& event) {
  const events::PrivilegeBits bits = events::privilege_bits(event);
  return (bits.exclude_kernel ? 1 : 0) | (bits.exclude_user ? 2 : 0) | (bits.exclude_hv ? 4 : 0) |
         (bits.exclude_host ? 8 : 0);
}

EventUnit event_unit(const events::ResolvedEvent& event) {
  if (metric_role(event) == MetricRole::Clock) return EventUnit{"msec", 1e-6};
  if (event.is_tool()) return EventUnit{"ns", 1};  // perf's tool events count nanoseconds
  return EventUnit{};
}

void ShadowStats::record(MetricRole role, int context, double value) {
  if (role == MetricRole::Clock) context = 0;
  auto& [sum, n] = values_[{role, context}];
  sum += value;
  ++n;
}

std::optional<double> ShadowStats::get(MetricRole role, int context) const {
  if (role == MetricRole::Clock) context = 0;
  auto it = values_.find({role, context});
  if (it == values_.end() || it->second.second == 0) return std::nullopt;
  return it->second.first / it->second.second;
}

double convert_unit(double value, char* unit) {
  *unit = ' ';
  for (char next : {'K', 'M', 'G'}) {
    if (value > 1000.0) {
      value /= 1000.0;
      *unit = next;
    }
  }
  return value;
}

namespace {

MetricValue metric(const char* format, std::string unit, double value) {
  return MetricValue{format, std::move(unit), value, false};
}
MetricValue blank(std::string unit) { return MetricValue{nullptr, std::move(unit), 0, false}; }

// perf's "miss ratio" metrics: a percent of a reference event, blank when it was not counted.
MetricValue percent_of(const ShadowStats& shadow, MetricRole reference, int ctx, double value, const char* unit) {
  std::optional<double> total = shadow.get(reference, ctx);
  if (!total) return blank(unit);
  return metric("%7.2f%%", unit, *total != 0 ? value / *total * 100.0 : 0.0);
}

}  // namespace

std::vector<MetricValue> derive_metrics(const StatEvent& event, double value, const ShadowStats& shadow,
                                        const MetricInputs& inputs) {
  const MetricRole role = metric_role(event.event);
  const int ctx = metric_context(event.event);
  std::vector<MetricValue> out;
  auto get = [&](MetricRole r) { return shadow.get(r, ctx); };

  switch (role) {
    case MetricRole::Instructions: {
      std::optional<double> cycles = get(MetricRole::Cycles);
      if (cycles && *cycles != 0)
        out.push_back(metric("%7.2f ", "insn per cycle", value / *cycles));
      else
        out.push_back(blank("insn per cycle"));
      const double stalled = std::max(get(MetricRole::StalledFrontend).value_or(0),
                                      get(MetricRole::StalledBackend).value_or(0));
      if (stalled != 0 && value != 0) {
        MetricValue m = metric("%7.2f ", "stalled cycles per insn", stalled / value);
        m.new_line = true;
        out.push_back(m);
      }
      return out;
    }
    case MetricRole::BranchMisses:
      return {percent_of(shadow, MetricRole::Branches, ctx, value, "of all branches")};
    case MetricRole::L1dLoadMisses:
      return {percent_of(shadow, MetricRole::L1dLoads, ctx, value, "of all L1-dcache accesses")};
    case MetricRole::L1iLoadMisses:
      return {percent_of(shadow, MetricRole::L1iLoads, ctx, value, "of all L1-icache accesses")};
    case MetricRole::DtlbLoadMisses:
      return {percent_of(shadow, MetricRole::DtlbLoads, ctx, value, "of all dTLB cache accesses")};
    case MetricRole::ItlbLoadMisses:
      return {percent_of(shadow, MetricRole::ItlbLoads, ctx, value, "of all iTLB cache accesses")};
    case MetricRole::LlLoadMisses:
      return {percent_of(shadow, MetricRole::LlLoads, ctx, value, "of all LL-cache accesses")};
    case MetricRole::CacheMisses: {
      std::optional<double> refs = get(MetricRole::CacheReferences);
      if (!refs) return {blank("of all cache refs")};
      return {metric("%8.3f %%", "of all cache refs", *refs != 0 ? value * 100 / *refs : 0.0)};
    }
    case MetricRole::StalledFrontend: {
      const double cycles = get(MetricRole::Cycles).value_or(0);
      const double ratio = cycles != 0 ? value / cycles * 100.0 : 0.0;
      // perf leaves a zero frontend ratio blank, but prints a zero backend one.
      if (ratio == 0) return {blank("frontend cycles idle")};
      return {metric("%7.2f%%", "frontend cycles idle", ratio)};
    }
    case MetricRole::StalledBackend: {
      const double cycles = get(MetricRole::Cycles).value_or(0);
      return {metric("%7.2f%%", "backend cycles idle", cycles != 0 ? value / cycles * 100.0 : 0.0)};
    }
    case MetricRole::Cycles: {
      const double ns = get(MetricRole::Clock).value_or(0);
      // "Ghz" (sic) is perf 6.1's unit text when there is no clock to divide by.
      out.push_back(ns != 0 ? metric("%8.3f", "GHz", value / ns) : blank("Ghz"));
      std::optional<double> ref = get(MetricRole::RefCycles);
      if (ref && *ref != 0) {
        MetricValue m = metric("%7.2f ", "turbo ratio", value / *ref);
        m.new_line = true;
        out.push_back(m);
      }
      return out;
    }
    case MetricRole::Clock: {
      if (inputs.wall_time_ns == 0) return {blank("CPUs utilized")};
      const double scale = event_unit(event.event).scale;
      return {metric("%8.3f", "CPUs utilized", value / (inputs.wall_time_ns * scale))};
    }
    case MetricRole::MsrAperf: {
      std::optional<double> mperf = get(MetricRole::MsrMperf);
      if (mperf && *mperf != 0) return {metric("%7.2f ", "turbo ratio", value / *mperf)};
      break;
    }
    case MetricRole::MsrMperf:
    case MetricRole::RefCycles: {
      std::optional<double> tsc = get(MetricRole::MsrTsc);
      if (tsc && *tsc != 0) return {metric("%7.2f%%", "of TSC", value / *tsc * 100.0)};
      break;
    }
    default:
      break;
  }

  // Everything else: a rate per second of the clock counted alongside.
  if (std::optional<double> ns = get(MetricRole::Clock)) {
    char prefix = ' ';
    const double rate = *ns != 0 ? convert_unit(1e9 * value / *ns, &prefix) : 0.0;
    return {metric("%8.3f", prefix == ' ' ? "/sec" : std::string(1, prefix) + "/sec", rate)};
  }
  return {MetricValue{}};
}

namespace {

constexpr NamedMetric kNamedMetrics[] = {
    {"IPC", "cycles,instructions", "insn per cycle", "insn per cycle, on the instructions line"},
    {"GHz", "task-clock,cycles", "GHz", "GHz, on the cycles line"},
    {"CPUs_utilized", "task-clock", "CPUs utilized", "CPUs utilized, on the task-clock line"},
    {"branch_miss_rate", "branches,branch-misses", "of all branches", "of all branches, on the branch-misses line"},
    {"cache_miss_rate", "cache-references,cache-misses", "of all cache refs", "of all cache refs, on the cache-misses line"},
    {"L1d_miss_rate", "L1-dcache-loads,L1-dcache-load-misses", "of all L1-dcache accesses", "of all L1-dcache accesses"},
    {"L1i_miss_rate", "L1-icache-loads,L1-icache-load-misses", "of all L1-icache accesses", "of all L1-icache accesses"},
    {"LLC_miss_rate", "LLC-loads,LLC-load-misses", "of all LL-cache accesses", "of all LL-cache accesses"},
    {"dTLB_miss_rate", "dTLB-loads,dTLB-load-misses", "of all dTLB cache accesses", "of all dTLB cache accesses"},
    {"iTLB_miss_rate", "iTLB-loads,iTLB-load-misses", "of all iTLB cache accesses", "of all iTLB cache accesses"},
    {"frontend_idle", "cycles,stalled-cycles-frontend", "frontend cycles idle", "frontend cycles idle"},
    {"backend_idle", "cycles,stalled-cycles-backend", "backend cycles idle", "backend cycles idle"},
    {"turbo_ratio", "cycles,ref-cycles", "turbo ratio", "turbo ratio, under the cycles line's GHz"},
    {"msr_turbo_ratio", "msr/aperf/,msr/mperf/", "turbo ratio", "turbo ratio, on the aperf line"},
    {"tsc_utilization", "msr/mperf/,msr/tsc/", "of TSC", "of TSC, on the mperf line"},
};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::span<const NamedMetric> named_metrics() { return kNamedMetrics; }

const NamedMetric* find_named_metric(std::string_view name) {
  auto metric = std::find_if(std::begin(kNamedMetrics), std::end(kNamedMetrics),
                             [&](const NamedMetric& m) { return same_name(m.name, name); });
  return metric == std::end(kNamedMetrics) ? nullptr : metric;
}

Result<std::vector<std::string>> events_of_metrics(const std::vector<std::string>& names) {
  std::vector<std::string> events;
  for (const std::string& name : names) {
    const NamedMetric* metric = find_named_metric(name);
    if (metric == nullptr) return Error{"unknown metric '" + name + "'"};
    for (std::string_view event : split(metric->events, ','))
      if (std::find(events.begin(), events.end(), event) == events.end()) events.emplace_back(event);
  }
  return events;
}

std::optional<std::string> named_metric_unit(const MetricValue& m, const StatEvent& event,
                                             const std::vector<const NamedMetric*>& requested) {
  if (!m.unit) return m.unit;
  const std::string_view unit = trim(*m.unit);
  for (const NamedMetric* metric : requested) {
    if (unit != metric->unit) continue;
    // "cycles:u" is the line of the metric's "cycles" (a PMU's "msr/aperf/" keeps its name whole).
    const std::string_view name = event.name;
    const std::string_view base = name.find('/') == std::string_view::npos ? name.substr(0, name.find(':')) : name;
    for (std::string_view named : split(metric->events, ','))
      if (named == base) return std::string(metric->name);
  }
  return m.unit;
}

}  // namespace vperf::stat
