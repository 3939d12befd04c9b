#pragma once
// Builders for the stat tests: events, snapshots and printer runs made by hand.
#include <linux/perf_event.h>

#include <sstream>
#include <string>
#include <vector>

#include "stat/stat_printer.h"

namespace vperf::stat::test_support {

struct Ev {
  std::string name;
  uint32_t type;
  uint64_t config;
  bool supported;
};
inline Ev ev(const char* name, uint32_t type, uint64_t config, bool supported) { return Ev{name, type, config, supported}; }

struct RawSample {
  size_t event;
  int cpu;
  uint64_t value, enabled, running;
  pid_t thread = -1;  // a counter that follows one task (--per-thread)
};
struct Round {
  uint64_t time_ns;  // wall time (FINAL) or time since start (INTERVAL)
  std::vector<RawSample> samples;
};
struct Capture {
  std::vector<Ev> events;
  std::vector<Round> rounds;
  std::string expected;
};

inline std::vector<StatEvent> stat_events(const std::vector<Ev>& evs) {
  std::vector<StatEvent> out;
  for (const Ev& e : evs) {
    StatEvent s;
    s.name = e.name;
    s.event.name = e.name;
    s.event.type = e.type;
    s.event.config = e.config;
    s.event.pmu = e.type == PERF_TYPE_SOFTWARE ? "software" : "cpu";
    out.push_back(s);
  }
  return out;
}

inline StatSnapshot snapshot(const std::vector<Ev>& evs, const Round& round) {
  StatSnapshot snap;
  snap.elapsed_ns = round.time_ns;
  snap.counts.resize(evs.size());
  for (size_t e = 0; e < evs.size(); ++e)
    if (!evs[e].supported) snap.counts[e].status = OpenStatus::NotSupported;
  for (const RawSample& s : round.samples) {
    CounterSample cs;
    cs.cpu = s.cpu;
    cs.thread = s.thread;
    cs.reading.value = s.value;
    cs.reading.time_enabled = s.enabled;
    cs.reading.time_running = s.running;
    snap.counts[s.event].samples.push_back(cs);
  }
  return snap;
}

inline StatSnapshot zeroed(StatSnapshot snap) {
  snap.elapsed_ns = 0;
  for (EventCounts& c : snap.counts)
    for (CounterSample& s : c.samples) s.reading = perf::CounterReading{};
  return snap;
}

// This machine: two CPUs, one socket, one die, cores 0 and 1.
inline CpuTopology two_cpus() { return CpuTopology({{0, 0, 0, 0}, {1, 0, 0, 1}}); }

inline std::string summary(const Capture& c, StatPrintOptions options, const std::string& target, RunTimes times = {}) {
  std::ostringstream out;
  StatPrinter printer(stat_events(c.events), options, two_cpus(), out);
  for (const Round& r : c.rounds) {
    times.elapsed_ns = r.time_ns;
    printer.add_run(snapshot(c.events, r), times);
  }
  printer.print_summary(target);
  return out.str();
}

inline std::string intervals(const Capture& c, StatPrintOptions options) {
  std::ostringstream out;
  options.interval = true;
  options.interval_ns = 100'000'000;  // -I 100
  StatPrinter printer(stat_events(c.events), options, two_cpus(), out);
  StatSnapshot before = zeroed(snapshot(c.events, c.rounds.front()));
  for (const Round& r : c.rounds) {
    StatSnapshot now = snapshot(c.events, r);
    printer.print_interval(r.time_ns, snapshot_delta(now, before));
    before = now;
  }
  printer.print_summary("'sleep 0.25'");  // perf 6.1 prints nothing after the intervals
  return out.str();
}

inline StatPrintOptions opts(StatFormat format, AggrMode mode = AggrMode::Global) {
  StatPrintOptions o;
  o.format = format;
  o.aggregation = mode;
  return o;
}

}  // namespace vperf::stat::test_support
