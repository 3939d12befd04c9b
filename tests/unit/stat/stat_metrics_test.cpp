// Derived metrics against perf 6.1's stat-shadow.c rules, numbers computed by hand.
#include "stat/stat_metrics.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

#include "events/builtin_events.h"

namespace vperf::stat {
namespace {

StatEvent make(const std::string& name, uint32_t type, uint64_t config, const std::string& pmu = "cpu") {
  StatEvent e;
  e.name = name;
  e.event.name = name;
  e.event.type = type;
  e.event.config = config;
  e.event.pmu = pmu;
  return e;
}
StatEvent hw(const std::string& name, uint64_t config) { return make(name, PERF_TYPE_HARDWARE, config); }
constexpr uint64_t cache(uint64_t id, uint64_t result) { return id | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (result << 16); }
StatEvent hw_cache(const std::string& name, uint64_t id, uint64_t result) {
  return make(name, PERF_TYPE_HW_CACHE, cache(id, result));
}
StatEvent msr(const std::string& name) { return make("msr/" + name + "/", 14, 0, "msr"); }

// Records each event's value in a unit's shadow stats, as the printer does.
ShadowStats shadow_of(const std::vector<std::pair<StatEvent, double>>& counts) {
  ShadowStats s;
  for (const auto& [e, v] : counts) s.record(metric_role(e.event), metric_context(e.event), v);
  return s;
}

std::string shown(const MetricValue& m) {
  if (!m.unit) return "<none>";
  if (!m.format) return "<blank> " + *m.unit;
  char buf[64];
  std::snprintf(buf, sizeof buf, m.format, m.value);
  return std::string(buf) + " " + *m.unit;
}

TEST(MetricRole, IdentifiesEventsByTypeAndConfig) {
  EXPECT_EQ(metric_role(make("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK).event), MetricRole::Clock);
  EXPECT_EQ(metric_role(make("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK).event), MetricRole::Clock);
  EXPECT_EQ(metric_role(make("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS).event), MetricRole::Other);
  EXPECT_EQ(metric_role(hw("ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES).event), MetricRole::RefCycles);
  EXPECT_EQ(metric_role(hw_cache("L1-dcache-loads", PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_RESULT_ACCESS).event),
            MetricRole::L1dLoads);
  EXPECT_EQ(metric_role(hw_cache("LLC-load-misses", PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_RESULT_MISS).event),
            MetricRole::LlLoadMisses);
  // A store miss is no load miss: perf gives it no "% of all" metric.
  EXPECT_EQ(metric_role(make("L1-dcache-store-misses", PERF_TYPE_HW_CACHE,
                             PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
                                 (PERF_COUNT_HW_CACHE_RESULT_MISS << 16))
                            .event),
            MetricRole::Other);
  EXPECT_EQ(metric_role(msr("aperf").event), MetricRole::MsrAperf);
  EXPECT_EQ(metric_role(msr("mperf").event), MetricRole::MsrMperf);
  EXPECT_EQ(metric_role(msr("tsc").event), MetricRole::MsrTsc);
  EXPECT_EQ(metric_role(msr("smi").event), MetricRole::Other);
  // A tracepoint with a clock-like config is not a clock.
  EXPECT_EQ(metric_role(make("sched:sched_switch", PERF_TYPE_TRACEPOINT, PERF_COUNT_SW_TASK_CLOCK, "tracepoint").event),
            MetricRole::Other);
}

TEST(Metrics, CacheMissRatiosOfTheirLoads) {
  // 2.5e6 misses of 1e8 loads = 2.50%.
  struct Case {
    uint64_t id;
    const char* unit;
  } cases[] = {{PERF_COUNT_HW_CACHE_L1D, "of all L1-dcache accesses"},
               {PERF_COUNT_HW_CACHE_L1I, "of all L1-icache accesses"},
               {PERF_COUNT_HW_CACHE_LL, "of all LL-cache accesses"},
               {PERF_COUNT_HW_CACHE_DTLB, "of all dTLB cache accesses"},
               {PERF_COUNT_HW_CACHE_ITLB, "of all iTLB cache accesses"}};
  for (const Case& c : cases) {
    StatEvent loads = hw_cache("loads", c.id, PERF_COUNT_HW_CACHE_RESULT_ACCESS);
    StatEvent misses = hw_cache("misses", c.id, PERF_COUNT_HW_CACHE_RESULT_MISS);
    auto m = derive_metrics(misses, 2.5e6, shadow_of({{loads, 1e8}, {misses, 2.5e6}}), {});
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(shown(m[0]), std::string("   2.50% ") + c.unit);
    // Without the loads event perf prints the unit text with no value.
    EXPECT_EQ(shown(derive_metrics(misses, 2.5e6, shadow_of({{misses, 2.5e6}}), {})[0]),
              std::string("<blank> ") + c.unit);
  }
}

TEST(Metrics, PairsOnlyEventsOfTheSameContext) {
  StatEvent cycles_u = hw("cycles:u", PERF_COUNT_HW_CPU_CYCLES);
  cycles_u.event.modifiers.user = true;
  StatEvent cycles = hw("cycles", PERF_COUNT_HW_CPU_CYCLES);
  StatEvent insn_u = hw("instructions:u", PERF_COUNT_HW_INSTRUCTIONS);
  insn_u.event.modifiers.user = true;
  StatEvent insn = hw("instructions", PERF_COUNT_HW_INSTRUCTIONS);
  ShadowStats s = shadow_of({{cycles_u, 1000}, {cycles, 4000}, {insn_u, 3000}, {insn, 2000}});
  EXPECT_EQ(shown(derive_metrics(insn_u, 3000, s, {})[0]), "   3.00  insn per cycle");  // 3000 / 1000
  EXPECT_EQ(shown(derive_metrics(insn, 2000, s, {})[0]), "   0.50  insn per cycle");   // 2000 / 4000
  // Nothing to pair with: perf leaves the IPC column blank.
  EXPECT_EQ(shown(derive_metrics(insn_u, 3000, shadow_of({{cycles, 4000}}), {})[0]), "<blank> insn per cycle");
}

TEST(Metrics, ClocksHaveNoContext) {
  // cycles:u still gets GHz from an unmodified task-clock: 3e9 cycles in 1e9 ns = 3.000 GHz.
  StatEvent cycles_u = hw("cycles:u", PERF_COUNT_HW_CPU_CYCLES);
  cycles_u.event.modifiers.user = true;
  StatEvent clock = make("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "software");
  EXPECT_EQ(shown(derive_metrics(cycles_u, 3e9, shadow_of({{clock, 1e9}, {cycles_u, 3e9}}), {})[0]), "   3.000 GHz");
}

TEST(Metrics, RatesPerSecondWithPerfsPrefixes) {
  StatEvent clock = make("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "software");
  StatEvent faults = make("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "software");
  ShadowStats s = shadow_of({{clock, 2e6}});  // 2 ms
  EXPECT_EQ(shown(derive_metrics(faults, 0, s, {})[0]), "   0.000 /sec");
  EXPECT_EQ(shown(derive_metrics(faults, 1, s, {})[0]), " 500.000 /sec");     // 1 / 2 ms
  EXPECT_EQ(shown(derive_metrics(faults, 2, s, {})[0]), "1000.000 /sec");     // not above 1000
  EXPECT_EQ(shown(derive_metrics(faults, 300, s, {})[0]), " 150.000 K/sec");
  EXPECT_EQ(shown(derive_metrics(faults, 5e6, s, {})[0]), "   2.500 G/sec");
  // No clock counted: no metric at all (perf's print_metric with a NULL unit).
  EXPECT_EQ(shown(derive_metrics(faults, 300, ShadowStats{}, {})[0]), "<none>");
}

TEST(Metrics, CpusUtilizedNeedsWallTime) {
  StatEvent clock = make("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "software");
  // The printed value is in msec: 150 ms of task clock over 100 ms of wall time = 1.500.
  EXPECT_EQ(shown(derive_metrics(clock, 150.0, ShadowStats{}, MetricInputs{1e8})[0]), "   1.500 CPUs utilized");
  EXPECT_EQ(shown(derive_metrics(clock, 150.0, ShadowStats{}, MetricInputs{0})[0]), "<blank> CPUs utilized");
}

TEST(Metrics, StalledCyclesAsPerfShowsThem) {
  StatEvent cycles = hw("cycles", PERF_COUNT_HW_CPU_CYCLES);
  StatEvent front = hw("stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND);
  StatEvent back = hw("stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
  ShadowStats s = shadow_of({{cycles, 2000}});
  EXPECT_EQ(shown(derive_metrics(front, 500, s, {})[0]), "  25.00% frontend cycles idle");
  // perf hides a zero frontend ratio but prints a zero backend one.
  EXPECT_EQ(shown(derive_metrics(front, 0, s, {})[0]), "<blank> frontend cycles idle");
  EXPECT_EQ(shown(derive_metrics(back, 0, s, {})[0]), "   0.00% backend cycles idle");
}

TEST(Metrics, BranchMissesAndCacheMisses) {
  StatEvent branches = hw("branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
  StatEvent misses = hw("branch-misses", PERF_COUNT_HW_BRANCH_MISSES);
  StatEvent refs = hw("cache-references", PERF_COUNT_HW_CACHE_REFERENCES);
  StatEvent cmiss = hw("cache-misses", PERF_COUNT_HW_CACHE_MISSES);
  // 123 of 10000 = 1.23%; 333 of 1000 cache refs = 33.300 %.
  EXPECT_EQ(shown(derive_metrics(misses, 123, shadow_of({{branches, 10000}}), {})[0]), "   1.23% of all branches");
  EXPECT_EQ(shown(derive_metrics(misses, 123, ShadowStats{}, {})[0]), "<blank> of all branches");
  EXPECT_EQ(shown(derive_metrics(cmiss, 333, shadow_of({{refs, 1000}}), {})[0]), "  33.300 % of all cache refs");
  // A reference counted as 0 (perf records <not counted> as 0) gives 0.00%, not a blank.
  EXPECT_EQ(shown(derive_metrics(misses, 5, shadow_of({{branches, 0}}), {})[0]), "   0.00% of all branches");
}

TEST(Metrics, TurboRatioFromCyclesOverRefCycles) {
  // vperf's addition: 2.9e9 / 2.5e9 = 1.16, on a second line under cycles' GHz.
  StatEvent cycles = hw("cycles", PERF_COUNT_HW_CPU_CYCLES);
  StatEvent ref = hw("ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES);
  auto m = derive_metrics(cycles, 2.9e9, shadow_of({{cycles, 2.9e9}, {ref, 2.5e9}}), {});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(shown(m[0]), "<blank> Ghz");  // no clock: perf 6.1's blank (and misspelt) GHz
  EXPECT_FALSE(m[0].new_line);
  EXPECT_EQ(shown(m[1]), "   1.16  turbo ratio");
  EXPECT_TRUE(m[1].new_line);
}

TEST(Metrics, TurboRatioFromAperfOverMperf) {
  StatEvent aperf = msr("aperf"), mperf = msr("mperf"), tsc = msr("tsc");
  ShadowStats s = shadow_of({{aperf, 2.9e9}, {mperf, 2.5e9}, {tsc, 2.9e9}});
  EXPECT_EQ(shown(derive_metrics(aperf, 2.9e9, s, {})[0]), "   1.16  turbo ratio");
  // TSC utilization: mperf 2.5e9 of tsc 2.9e9 = 86.21%.
  EXPECT_EQ(shown(derive_metrics(mperf, 2.5e9, s, {})[0]), "  86.21% of TSC");
  // ref-cycles against msr/tsc/ the same way.
  StatEvent ref = hw("ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES);
  EXPECT_EQ(shown(derive_metrics(ref, 1.45e9, shadow_of({{tsc, 2.9e9}}), {})[0]), "  50.00% of TSC");
  // Without the partner event they fall back to perf's rate per second, here without a clock: none.
  EXPECT_EQ(shown(derive_metrics(aperf, 2.9e9, shadow_of({{aperf, 2.9e9}}), {})[0]), "<none>");
}

TEST(Metrics, AveragesARepeatedReferenceEvent) {
  // perf averages the samples of one shadow stat: cycles counted twice, 1000 and 3000 -> 2000.
  StatEvent cycles = hw("cycles", PERF_COUNT_HW_CPU_CYCLES);
  StatEvent insn = hw("instructions", PERF_COUNT_HW_INSTRUCTIONS);
  EXPECT_EQ(shown(derive_metrics(insn, 3000, shadow_of({{cycles, 1000}, {cycles, 3000}}), {})[0]),
            "   1.50  insn per cycle");
}

TEST(ConvertUnit, StepsOnlyAboveAThousand) {
  char unit = '?';
  EXPECT_DOUBLE_EQ(convert_unit(999.0, &unit), 999.0);
  EXPECT_EQ(unit, ' ');
  EXPECT_DOUBLE_EQ(convert_unit(1000.0, &unit), 1000.0);
  EXPECT_EQ(unit, ' ');
  EXPECT_DOUBLE_EQ(convert_unit(1500.0, &unit), 1.5);
  EXPECT_EQ(unit, 'K');
  EXPECT_DOUBLE_EQ(convert_unit(2.5e12, &unit), 2500.0);
  EXPECT_EQ(unit, 'G');
}

// stat -M: each metric's events once, in order, names matched without case; every event a
// metric names is one vperf counts (a builtin event or the msr PMU's).
TEST(NamedMetrics, EventsOfMetricsAreEachCountedOnce) {
  auto events = events_of_metrics({"IPC", "GHz", "ipc"});
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(*events, (std::vector<std::string>{"cycles", "instructions", "task-clock"}));
  auto unknown = events_of_metrics({"IPC", "TopdownL1"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown metric 'TopdownL1'");
  for (const NamedMetric& metric : named_metrics()) {
    auto each = events_of_metrics({std::string(metric.name)});
    ASSERT_TRUE(each.ok()) << metric.name;
    for (const std::string& event : *each)
      EXPECT_TRUE(events::find_builtin_event(event) || event.starts_with("msr/")) << metric.name << ": " << event;
  }
}

// stat -M labels each metric's line with the metric's name, as perf labels the metrics it
// computes: counting every event of a metric, exactly one line (the one derive_metrics gives
// the metric's unit) says its name, and only when that metric was asked for. This also keeps
// each NamedMetric's unit in step with the text derive_metrics prints.
TEST(NamedMetrics, EachMetricLabelsExactlyItsOwnLine) {
  for (const NamedMetric& metric : named_metrics()) {
    SCOPED_TRACE(std::string(metric.name));
    std::vector<std::pair<StatEvent, double>> counts;
    const Result<std::vector<std::string>> names = events_of_metrics({std::string(metric.name)});
    ASSERT_TRUE(names.ok());
    for (const std::string& name : *names) {
      if (name.starts_with("msr/")) {
        counts.emplace_back(msr(name.substr(4, name.size() - 5)), 3000);
        continue;
      }
      std::optional<events::BuiltinEvent> builtin = events::find_builtin_event(name);
      ASSERT_TRUE(builtin) << name;
      const uint32_t pmu_type = builtin->type;
      counts.emplace_back(make(name, pmu_type, builtin->config, pmu_type == PERF_TYPE_SOFTWARE ? "software" : "cpu"),
                          name == "cycles" ? 4000 : 1000);
    }
    const ShadowStats shadow = shadow_of(counts);
    int named = 0, named_unasked = 0;
    for (const auto& [event, value] : counts) {
      for (const MetricValue& m : derive_metrics(event, value, shadow, MetricInputs{2e6})) {
        if (named_metric_unit(m, event, {&metric}) == std::string(metric.name)) ++named;
        if (named_metric_unit(m, event, {}) == std::string(metric.name)) ++named_unasked;
      }
    }
    EXPECT_EQ(named, 1);
    EXPECT_EQ(named_unasked, metric.name == "GHz" ? 1 : 0);  // "GHz" is its own unit already
  }
  // "cycles:u" is the cycles line; another metric's line with the same text keeps it.
  const MetricValue turbo{"%7.2f ", std::string("turbo ratio"), 1.5, true};
  EXPECT_EQ(named_metric_unit(turbo, hw("cycles:u", PERF_COUNT_HW_CPU_CYCLES), {find_named_metric("turbo_ratio")}), "turbo_ratio");
  EXPECT_EQ(named_metric_unit(turbo, msr("aperf"), {find_named_metric("turbo_ratio")}), "turbo ratio");
  EXPECT_EQ(named_metric_unit(turbo, msr("aperf"), {find_named_metric("TURBO_RATIO"), find_named_metric("msr_turbo_ratio")}),
            "msr_turbo_ratio");
}

}  // namespace
}  // namespace vperf::stat
