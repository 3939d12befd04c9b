#pragma once
// perf stat record / perf stat report: the counts of a stat run kept in a perf.data (file or
// pipe), as perf stat 6.1 writes and reads them:
//   attrs      one per event (read_format TOTAL_TIME_ENABLED|RUNNING, sample_type IDENTIFIER),
//              each with one id per counter opened for it;
//   EVENT_UPDATE  the event's unit and scale (task-clock: msec, 1e-6), and in a pipe its name;
//   THREAD_MAP, CPU_MAP  the tasks and CPUs counted on (-1: any);
//   STAT_CONFIG  perf's aggregation mode (AGGR_NONE 0, GLOBAL 1, SOCKET 2, DIE 3, CORE 4,
//              THREAD 5, NODE 7), scale 1, the -I interval;
//   STAT       one per counter: its id, its CPU's and task's index in those maps, value,
//              enabled and running times;
//   STAT_ROUND FINAL, with the run's wall time in ns;
//   with -I instead, for every interval the STAT records of the counts since the start and a
//   STAT_ROUND INTERVAL with the time since the start (and no FINAL round), as perf 6.1;
// and the features (the command line, which stat report's header names, and HEADER_STAT).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "stat/stat_aggregate.h"
#include "stat/stat_counts.h"

namespace vperf::session {

struct StatRecording {
  std::vector<stat::StatEvent> events;
  stat::StatSnapshot totals;                       // counts parallel to events; elapsed_ns the run's
  // -I: the counts since the start at each interval's end (elapsed_ns: that end), oldest first.
  std::vector<stat::StatSnapshot> intervals;
  std::vector<std::pair<int, std::string>> threads;  // THREAD_MAP: pid (-1: none) and comm
  // CPU_MAP when writing (-1 for counters that follow a task); not read back: each STAT
  // record names its CPU.
  std::vector<int> cpus;
  stat::AggrMode aggregation = stat::AggrMode::Global;
  uint64_t interval_ms = 0;
  std::vector<std::string> cmdline;  // the CMDLINE feature (file mode)
  bool all_user = false, all_kernel = false;  // --all-user / --all-kernel, in the attrs written
  bool from_pipe = false;
};

// Writes `recording` to `path` ("-": perf's pipe format on standard output).
Result<void> write_stat_recording(const std::string& path, const StatRecording& recording);

// The recording `reader` holds: its last FINAL round as the totals (the last INTERVAL round
// when there is none) and every INTERVAL round. An Error when it holds no stat data.
Result<StatRecording> read_stat_recording(data::PerfDataReader& reader);

}  // namespace vperf::session
