#pragma once
// Turbo (boost) arithmetic from two readings of a CPU's activity counters, without I/O.
//
//   IA32_MPERF  counts at a fixed rate (the TSC's, close to the base frequency) while the core
//               is in C0, i.e. not halted;
//   IA32_APERF  counts at the actual core clock while in C0;
//   TSC         counts at the fixed rate always.
// Over an interval of `seconds` at base frequency `base_mhz`:
//   C0_MCYC = dMPERF                 C0_ACYC = dAPERF
//   RATIO   = dAPERF / dMPERF        (how much faster than base the core ran while busy)
//   MHz     = base_mhz * RATIO
//   UTIL    = dMPERF / (base_Hz * seconds * cpus) * 100   (share of the time in C0)
// The counters are 64 bits and wrap; a delta is taken modulo 2^64. A CPU that never left
// C1+ has dMPERF = 0: its RATIO and MHz are undefined (nullopt), never a made-up 0.
#include <cstdint>
#include <optional>
#include <span>

namespace vperf::msr {

// One CPU's counters at one moment.
struct ActivitySample {
  uint64_t aperf = 0;
  uint64_t mperf = 0;
  uint64_t tsc = 0;
  bool operator==(const ActivitySample&) const = default;
};

// later - earlier for a 64-bit counter that may have wrapped once in between.
constexpr uint64_t counter_delta(uint64_t earlier, uint64_t later) { return later - earlier; }

// What changed over one interval, summed over `cpus` CPUs.
struct ActivityDelta {
  uint64_t aperf = 0;
  uint64_t mperf = 0;
  uint64_t tsc = 0;
  int cpus = 0;
};
ActivityDelta activity_delta(const ActivitySample& before, const ActivitySample& after);
// Sums deltas of several CPUs; a 64-bit sum saturates rather than wraps (it would take
// 2^64 cycles, ~200 CPU-years at 3 GHz, so saturation only guards against nonsense input).
ActivityDelta sum_deltas(std::span<const ActivityDelta> deltas);

struct TurboRow {
  uint64_t c0_mcyc = 0;  // dMPERF
  uint64_t c0_acyc = 0;  // dAPERF
  double util_percent = 0;
  std::optional<double> ratio_percent;  // nullopt when dMPERF = 0 (idle)
  std::optional<double> mhz;            // nullopt when dMPERF = 0
};

// `seconds` > 0 and `base_mhz` > 0 are the caller's to check (util is 0 otherwise).
TurboRow turbo_row(const ActivityDelta& delta, double base_mhz, double seconds);

}  // namespace vperf::msr
