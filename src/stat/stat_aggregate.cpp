#include "stat/stat_aggregate.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace vperf::stat {

std::string AggrUnit::label() const {
  const std::string s = "S" + std::to_string(socket);
  switch (mode) {
    case AggrMode::Global: return "";
    case AggrMode::PerCpu: return "CPU" + std::to_string(cpu);
    case AggrMode::PerCore: return s + "-D" + std::to_string(die) + "-C" + std::to_string(core);
    case AggrMode::PerDie: return s + "-D" + std::to_string(die);
    case AggrMode::PerSocket: return s;
    case AggrMode::PerNode: return "N" + std::to_string(node);
    case AggrMode::PerThread: return std::to_string(thread);
  }
  return "";
}

bool AggrUnit::operator<(const AggrUnit& o) const {
  return std::tie(node, socket, die, core, cpu, thread) < std::tie(o.node, o.socket, o.die, o.core, o.cpu, o.thread);
}

AggrUnit unit_of_cpu(AggrMode mode, int cpu, const CpuTopology& topology) {
  AggrUnit unit;
  unit.mode = mode;
  if (mode == AggrMode::Global) return unit;
  if (mode == AggrMode::PerCpu) {
    unit.cpu = cpu;
    return unit;
  }
  const CpuPlace place = topology.place_of(cpu);
  if (mode == AggrMode::PerNode) {
    unit.node = place.node;
    return unit;
  }
  unit.socket = place.socket;
  if (mode == AggrMode::PerSocket) return unit;
  unit.die = place.die;
  if (mode == AggrMode::PerDie) return unit;
  unit.core = place.core;
  return unit;
}

namespace {

// perf keeps a scaled count in a u64: the fraction is dropped.
double truncated(double v) { return std::trunc(v); }

AggregatedCount sum_global(const EventCounts& counts) {
  AggregatedCount out;
  perf::CounterReading total;
  for (const CounterSample& s : counts.samples) {
    total.value += s.reading.value;
    total.time_enabled += s.reading.time_enabled;
    total.time_running += s.reading.time_running;
  }
  out.time_enabled = total.time_enabled;
  out.time_running = total.time_running;
  out.cpus = static_cast<int>(counts.samples.size());
  const perf::ScaledCount scaled = perf::scale_count(total);
  if (scaled.counted && total.time_enabled != 0) {
    out.state = CountState::Counted;
    out.value = truncated(scaled.value);
  } else {
    out.state = CountState::NotCounted;
  }
  return out;
}

bool in_unit(const CounterSample& s, AggrMode mode, const AggrUnit& unit, const CpuTopology& topology) {
  if (mode == AggrMode::PerThread) return s.thread == unit.thread;
  return s.cpu >= 0 && unit_of_cpu(mode, s.cpu, topology) == unit;
}

AggregatedCount sum_unit(const EventCounts& counts, AggrMode mode, const AggrUnit& unit,
                         const CpuTopology& topology) {
  AggregatedCount out;
  out.state = CountState::Counted;
  bool any = false;
  for (const CounterSample& s : counts.samples) {
    if (!in_unit(s, mode, unit, topology)) continue;
    any = true;
    ++out.cpus;
    const perf::ScaledCount scaled = perf::scale_count(s.reading);
    if (!scaled.counted || s.reading.time_enabled == 0) {
      // perf's aggr_cb: one bad CPU makes the unit "<not counted>" and stops the count there.
      out.state = CountState::NotCounted;
      out.value = 0;
      out.time_enabled = out.time_running = 0;
      break;
    }
    out.value += truncated(scaled.value);
    out.time_enabled += s.reading.time_enabled;
    out.time_running += s.reading.time_running;
  }
  if (!any) out.state = CountState::NotCounted;
  return out;
}

}  // namespace

AggregatedSnapshot aggregate(const std::vector<StatEvent>& events, const StatSnapshot& snapshot, AggrMode mode,
                             const CpuTopology& topology) {
  AggregatedSnapshot out;
  out.elapsed_ns = snapshot.elapsed_ns;
  if (mode == AggrMode::Global) {
    out.units.push_back(AggrUnit{});
  } else {
    for (const EventCounts& ec : snapshot.counts)
      for (const CounterSample& s : ec.samples) {
        if (mode == AggrMode::PerThread && s.thread >= 0) out.units.push_back(AggrUnit{.mode = mode, .thread = s.thread});
        if (mode != AggrMode::PerThread && s.cpu >= 0) out.units.push_back(unit_of_cpu(mode, s.cpu, topology));
      }
    std::sort(out.units.begin(), out.units.end());
    out.units.erase(std::unique(out.units.begin(), out.units.end()), out.units.end());
  }

  out.counts.resize(out.units.size());
  for (size_t u = 0; u < out.units.size(); ++u) {
    out.counts[u].resize(events.size());
    for (size_t e = 0; e < events.size(); ++e) {
      AggregatedCount& c = out.counts[u][e];
      if (e >= snapshot.counts.size()) continue;  // not counted
      const EventCounts& ec = snapshot.counts[e];
      if (ec.status == OpenStatus::NotSupported) {
        c.state = CountState::NotSupported;
        c.cpus = 1;  // perf counts the first CPU of the unit before giving up on it
        continue;
      }
      c = mode == AggrMode::Global ? sum_global(ec) : sum_unit(ec, mode, out.units[u], topology);
    }
  }
  return out;
}

}  // namespace vperf::stat
