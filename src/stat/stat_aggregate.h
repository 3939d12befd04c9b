#pragma once
// Aggregation: one StatSnapshot (every fd's reading) -> one count per event per aggregation
// unit, the way perf stat 6.1 adds up its per-CPU counters for -a (global), -A/--no-aggr
// (per CPU), --per-core, --per-die, --per-socket and --per-node.
//
// Scaling for multiplexing happens in perf::scale_count only. Like perf 6.1:
//  - Global: the raw values, enabled and running times of every fd are summed first and the
//    sum is scaled once (perf's counts->aggr, then perf_counts_values__scale);
//  - per CPU/core/die/socket: each fd is scaled on its own, then the scaled values (and the
//    raw enabled/running times) are summed over the unit's CPUs.
// A scaled count is truncated to an integer, as perf keeps it in a u64.
//
// perf's "bad counter" rule (aggr_cb): in a unit, the first CPU whose counter never ran
// (enabled or running 0) makes the whole unit "<not counted>" with enabled = running = 0,
// and the unit's CPU count stops there (so an unsupported or idle event shows "1" CPU in
// --per-socket, as perf prints it).
//
// Samples with cpu == -1 (a counter that follows its task) count in Global and PerThread mode
// (summed over CPUs by task there); the other modes need per-CPU counters (perf requires -a or
// -C for them too).
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_topology.h"
#include "stat/stat_counts.h"

namespace vperf::stat {

enum class AggrMode {
  Global,     // default: one total per event
  PerCpu,     // -A, --no-aggr
  PerCore,    // --per-core
  PerDie,     // --per-die
  PerSocket,  // --per-socket
  PerNode,    // --per-node
  PerThread,  // --per-thread: one line per task counted (-p, -t, or every task of the system)
};

// One aggregation unit. Fields that the mode does not use are -1.
struct AggrUnit {
  AggrMode mode = AggrMode::Global;
  int cpu = -1;
  int socket = -1;
  int die = -1;
  int core = -1;
  int node = -1;
  pid_t thread = -1;

  // As perf names the unit: "" (global), "CPU3", "S0-D0-C1", "S0-D0", "S0", "N0"; a thread's
  // label is its command's name and TID, which the printer knows.
  std::string label() const;
  bool operator==(const AggrUnit&) const = default;
  // perf's order: by node, socket, die, core, cpu (threads: by TID).
  bool operator<(const AggrUnit& other) const;
};

// The unit a CPU belongs to in `mode`.
AggrUnit unit_of_cpu(AggrMode mode, int cpu, const CpuTopology& topology);

enum class CountState {
  Counted,
  NotCounted,    // opened but never on a counter: "<not counted>"
  NotSupported,  // the kernel refused it: "<not supported>"
};

struct AggregatedCount {
  CountState state = CountState::NotCounted;
  double value = 0;           // scaled, in the event's own units (ns for task-clock)
  uint64_t time_enabled = 0;  // summed over the unit's fds
  uint64_t time_running = 0;
  int cpus = 0;               // perf's "cpus" column (aggr nr)
};

struct AggregatedSnapshot {
  std::vector<AggrUnit> units;                      // sorted; one (empty-label) unit for Global
  std::vector<std::vector<AggregatedCount>> counts;  // [unit][event], events in session order
  uint64_t elapsed_ns = 0;
};

// `snapshot.counts` must be parallel to `events` (missing entries count as not counted).
AggregatedSnapshot aggregate(const std::vector<StatEvent>& events, const StatSnapshot& snapshot, AggrMode mode,
                             const CpuTopology& topology);

}  // namespace vperf::stat
