#include "stat/stat_counts.h"

namespace vperf::stat {

StatSnapshot snapshot_delta(const StatSnapshot& later, const StatSnapshot& earlier) {
  StatSnapshot delta = later;
  delta.elapsed_ns = later.elapsed_ns - earlier.elapsed_ns;
  for (size_t e = 0; e < delta.counts.size() && e < earlier.counts.size(); ++e) {
    std::vector<CounterSample>& now = delta.counts[e].samples;
    const std::vector<CounterSample>& before = earlier.counts[e].samples;
    for (size_t s = 0; s < now.size() && s < before.size(); ++s) {
      perf::CounterReading& r = now[s].reading;
      const perf::CounterReading& b = before[s].reading;
      // Counters only grow; a smaller value would mean a different fd, so keep it as is.
      if (r.value >= b.value) r.value -= b.value;
      if (r.time_enabled >= b.time_enabled) r.time_enabled -= b.time_enabled;
      if (r.time_running >= b.time_running) r.time_running -= b.time_running;
    }
  }
  return delta;
}

}  // namespace vperf::stat
