#include "msr/turbo.h"

#include <limits>

namespace vperf::msr {

namespace {
uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}
}  // namespace

ActivityDelta activity_delta(const ActivitySample& before, const ActivitySample& after) {
  return {counter_delta(before.aperf, after.aperf), counter_delta(before.mperf, after.mperf),
          counter_delta(before.tsc, after.tsc), 1};
}

ActivityDelta sum_deltas(std::span<const ActivityDelta> deltas) {
  ActivityDelta sum;
  for (const ActivityDelta& d : deltas) {
    sum.aperf = saturating_add(sum.aperf, d.aperf);
    sum.mperf = saturating_add(sum.mperf, d.mperf);
    sum.tsc = saturating_add(sum.tsc, d.tsc);
    sum.cpus += d.cpus;
  }
  return sum;
}

TurboRow turbo_row(const ActivityDelta& delta, double base_mhz, double seconds) {
  TurboRow row;
  row.c0_mcyc = delta.mperf;
  row.c0_acyc = delta.aperf;
  const double capacity = base_mhz * 1e6 * seconds * (delta.cpus > 0 ? delta.cpus : 1);
  if (capacity > 0) row.util_percent = 100.0 * static_cast<double>(delta.mperf) / capacity;
  if (delta.mperf != 0) {
    const double ratio = static_cast<double>(delta.aperf) / static_cast<double>(delta.mperf);
    row.ratio_percent = 100.0 * ratio;
    row.mhz = base_mhz * ratio;
  }
  return row;
}

}  // namespace vperf::msr
