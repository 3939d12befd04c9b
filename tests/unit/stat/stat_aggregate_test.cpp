// Aggregation as perf 6.1 adds up per-CPU counters (stat.c process_counter_values,
// stat-display.c aggr_cb), with hand-computed numbers.
#include "stat/stat_aggregate.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

namespace vperf::stat {
namespace {

// Two sockets, each with one die of two cores; cores 0 and 1 of socket 0 have two threads.
CpuTopology machine() {
  return CpuTopology({{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 0, 0, 0}, {3, 0, 0, 1}, {4, 1, 0, 0}, {5, 1, 0, 1}});
}

StatEvent event(const char* name) {
  StatEvent e;
  e.name = name;
  e.event.name = name;
  e.event.type = PERF_TYPE_HARDWARE;
  return e;
}

CounterSample sample(int cpu, uint64_t value, uint64_t enabled, uint64_t running) {
  CounterSample s;
  s.cpu = cpu;
  s.reading.value = value;
  s.reading.time_enabled = enabled;
  s.reading.time_running = running;
  return s;
}

StatSnapshot one_event(std::vector<CounterSample> samples) {
  StatSnapshot snap;
  snap.counts.push_back(EventCounts{OpenStatus::Opened, std::move(samples)});
  snap.elapsed_ns = 42;
  return snap;
}

TEST(AggrUnit, LabelsAsPerfPrintsThem) {
  EXPECT_EQ(unit_of_cpu(AggrMode::PerCpu, 3, machine()).label(), "CPU3");
  EXPECT_EQ(unit_of_cpu(AggrMode::PerCore, 5, machine()).label(), "S1-D0-C1");
  EXPECT_EQ(unit_of_cpu(AggrMode::PerDie, 5, machine()).label(), "S1-D0");
  EXPECT_EQ(unit_of_cpu(AggrMode::PerSocket, 5, machine()).label(), "S1");
  EXPECT_EQ(unit_of_cpu(AggrMode::Global, 5, machine()).label(), "");
  // A CPU the topology does not know keeps perf's -1 ids.
  EXPECT_EQ(unit_of_cpu(AggrMode::PerSocket, 9, machine()).label(), "S-1");
}

TEST(Aggregate, GlobalSumsThenScales) {
  // CPU0 ran half its time, CPU1 all of it. Sum first: 100 + 300 = 400 over 200/300 of the
  // time -> 400 * 300 / 200 = 600. (Scaling each first would give 200 + 300 = 500.)
  auto out = aggregate({event("cycles")}, one_event({sample(0, 100, 100, 50), sample(1, 300, 200, 150)}),
                       AggrMode::Global, machine());
  ASSERT_EQ(out.units.size(), 1u);
  const AggregatedCount& c = out.counts[0][0];
  EXPECT_EQ(c.state, CountState::Counted);
  EXPECT_DOUBLE_EQ(c.value, 600);
  EXPECT_EQ(c.time_enabled, 300u);
  EXPECT_EQ(c.time_running, 200u);
  EXPECT_EQ(out.elapsed_ns, 42u);
}

// --per-node: CPUs grouped by NUMA node, whatever their sockets, in node order.
TEST(Aggregate, PerNodeGroupsCpusByTheirNode) {
  const CpuTopology numa({{0, 0, 0, 0, 1}, {1, 0, 0, 1, 0}, {2, 1, 0, 0, 1}});
  EXPECT_EQ(unit_of_cpu(AggrMode::PerNode, 2, numa).label(), "N1");
  AggregatedSnapshot a = aggregate({event("cycles")}, one_event({sample(0, 100, 10, 10), sample(1, 7, 10, 10), sample(2, 50, 10, 10)}),
                                   AggrMode::PerNode, numa);
  ASSERT_EQ(a.units.size(), 2u);
  EXPECT_EQ(a.units[0].label(), "N0");
  EXPECT_EQ(a.units[1].label(), "N1");
  EXPECT_EQ(a.counts[0][0].value, 7);
  EXPECT_EQ(a.counts[1][0].value, 150);
  EXPECT_EQ(a.counts[1][0].cpus, 2);
}

TEST(Aggregate, PerSocketScalesEachCpuThenSums) {
  // Socket 0: CPU0 100 * 100/50 = 200, CPU1 300 * 200/150 = 400, CPU2 7 as is: 607 on 3 CPUs.
  // Socket 1: CPU4 10 * 3/2 = 15 (truncated from 15), CPU5 5 * 3/2 = 7.5 -> 7 (perf's u64): 22.
  auto out = aggregate({event("cycles")},
                       one_event({sample(0, 100, 100, 50), sample(1, 300, 200, 150), sample(2, 7, 10, 10),
                                  sample(4, 10, 3, 2), sample(5, 5, 3, 2)}),
                       AggrMode::PerSocket, machine());
  ASSERT_EQ(out.units.size(), 2u);
  EXPECT_EQ(out.units[0].label(), "S0");
  EXPECT_EQ(out.units[1].label(), "S1");
  EXPECT_DOUBLE_EQ(out.counts[0][0].value, 607);
  EXPECT_EQ(out.counts[0][0].cpus, 3);
  EXPECT_EQ(out.counts[0][0].time_enabled, 310u);
  EXPECT_EQ(out.counts[0][0].time_running, 210u);
  EXPECT_DOUBLE_EQ(out.counts[1][0].value, 22);
  EXPECT_EQ(out.counts[1][0].cpus, 2);
}

TEST(Aggregate, PerCoreGroupsSiblingThreads) {
  auto out = aggregate({event("cycles")},
                       one_event({sample(0, 1, 1, 1), sample(1, 2, 1, 1), sample(2, 4, 1, 1), sample(3, 8, 1, 1)}),
                       AggrMode::PerCore, machine());
  ASSERT_EQ(out.units.size(), 2u);
  EXPECT_EQ(out.units[0].label(), "S0-D0-C0");
  EXPECT_DOUBLE_EQ(out.counts[0][0].value, 1 + 4);
  EXPECT_EQ(out.counts[0][0].cpus, 2);
  EXPECT_EQ(out.units[1].label(), "S0-D0-C1");
  EXPECT_DOUBLE_EQ(out.counts[1][0].value, 2 + 8);
}

TEST(Aggregate, OneIdleCpuMakesTheUnitNotCounted) {
  // perf's aggr_cb stops at the first CPU that never ran: the unit shows 2 CPUs, not 3.
  auto out = aggregate({event("cycles")},
                       one_event({sample(0, 100, 10, 10), sample(1, 0, 10, 0), sample(2, 5, 10, 10)}),
                       AggrMode::PerSocket, machine());
  const AggregatedCount& c = out.counts[0][0];
  EXPECT_EQ(c.state, CountState::NotCounted);
  EXPECT_EQ(c.cpus, 2);
  EXPECT_EQ(c.time_enabled, 0u);
  EXPECT_EQ(c.time_running, 0u);
}

TEST(Aggregate, NotSupportedShowsOneCpuLikePerf) {
  StatSnapshot snap = one_event({sample(0, 1, 1, 1), sample(1, 1, 1, 1)});
  snap.counts.push_back(EventCounts{OpenStatus::NotSupported, {}});
  auto out = aggregate({event("task-clock"), event("cycles")}, snap, AggrMode::PerSocket, machine());
  ASSERT_EQ(out.units.size(), 1u);
  EXPECT_EQ(out.counts[0][1].state, CountState::NotSupported);
  EXPECT_EQ(out.counts[0][1].cpus, 1);
  EXPECT_EQ(out.counts[0][0].cpus, 2);
}

TEST(Aggregate, PerCpuUnitsFollowTheCpusCounted) {
  auto out = aggregate({event("cycles")}, one_event({sample(5, 1, 1, 1), sample(0, 2, 1, 1)}), AggrMode::PerCpu,
                       machine());
  ASSERT_EQ(out.units.size(), 2u);
  EXPECT_EQ(out.units[0].label(), "CPU0");  // perf's order, whatever the fds' order
  EXPECT_DOUBLE_EQ(out.counts[0][0].value, 2);
  EXPECT_EQ(out.units[1].label(), "CPU5");
}

TEST(Aggregate, GlobalNeverRunIsNotCounted) {
  auto out = aggregate({event("cycles")}, one_event({sample(-1, 0, 500, 0)}), AggrMode::Global, machine());
  EXPECT_EQ(out.counts[0][0].state, CountState::NotCounted);
  EXPECT_EQ(out.counts[0][0].time_enabled, 500u);
}

}  // namespace
}  // namespace vperf::stat
