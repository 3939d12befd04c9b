#pragma once
// The contract between counting (stat_session: opens, enables and reads counters) and
// everything that turns counts into perf stat's output (aggregation, derived metrics,
// text/CSV/JSON printers). Counting fills these structs; nothing below it does I/O.
//
// Readings are cumulative since the counters were enabled. Interval printing (-I) and
// repeated runs (-r) are built from successive snapshots by the consumers.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "events/resolved_event.h"
#include "perf/counter_group.h"

namespace vperf::stat {

// One event of the session, in the order perf prints them (-e order; group members in place).
struct StatEvent {
  std::string name;              // as perf prints it: "task-clock", "cycles:u", "sched:sched_switch", "msr/aperf/"
  events::ResolvedEvent event;   // type/config identify it for derived metrics
  int group_leader = -1;         // index (in the event list) of its group's leader when written in {}; else -1
};

// One file descriptor's reading: the event on one CPU for one task.
struct CounterSample {
  int cpu = -1;       // -1: the counter follows its task on any CPU
  pid_t thread = -1;  // -1: every task on `cpu` (system-wide, -a/-C/-G)
  perf::CounterReading reading;
};

enum class OpenStatus {
  Opened,
  NotSupported,  // the kernel refused the event (ENOENT, EOPNOTSUPP, ENODEV, ...): perf's "<not supported>"
};

struct EventCounts {
  OpenStatus status = OpenStatus::Opened;
  std::vector<CounterSample> samples;  // one per fd; empty when NotSupported
};

// Every event's readings at one moment.
struct StatSnapshot {
  std::vector<EventCounts> counts;  // parallel to the session's StatEvents
  uint64_t elapsed_ns = 0;          // wall time since the counters were enabled
};

}  // namespace vperf::stat

namespace vperf::stat {

// What was counted between two snapshots of the same session (interval printing): values,
// enabled and running times subtracted sample by sample. `earlier` must come from the same
// session (same events, same fds in the same order).
StatSnapshot snapshot_delta(const StatSnapshot& later, const StatSnapshot& earlier);

}  // namespace vperf::stat
