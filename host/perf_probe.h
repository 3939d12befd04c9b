#pragma once
// Live perf_event_open probes: can this machine count and sample with the hardware PMU? Each
// probe opens the event the way `perf stat`/`perf record` would (user space only, so that
// perf_event_paranoid 2 allows it), and counting probes also run a short loop and read the
// count, because some hypervisors accept the open and then count nothing.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perf/event_fd.h"

namespace vperf::host {

struct PerfOpenOutcome {
  bool opened = false;
  int errno_value = 0;           // when !opened
  std::string error;             // "perf_event_open: No such file or directory"
  std::optional<uint64_t> count; // counting probes: the value read after the loop
};

struct PerfEventProbe {
  std::string name;  // perf's name: "cycles", "ref-cycles" ...
  uint32_t type = 0;
  uint64_t config = 0;
  std::string counter;  // which counter path this exercises
  PerfOpenOutcome outcome;
  bool counted() const { return outcome.opened && outcome.count.value_or(0) > 0; }
};

// Does a sampling event deliver one sample per period? The probe samples this thread's work with
// a fixed period and holds the samples the ring buffer got against the event's own count divided
// by the period. A PMU whose overflow interrupt is lost or late (QEMU TCG's instruction counter
// gives about one sample per timer tick whatever the period) would otherwise give a confident,
// wrong profile.
struct SamplingProbe {
  std::string event;  // "cycles", "instructions", "cpu-clock"
  uint64_t period = 0;
  PerfOpenOutcome outcome;  // outcome.count: the event's count over the probe
  std::optional<uint64_t> samples;  // PERF_RECORD_SAMPLEs read back; nullopt when the ring failed
  uint64_t throttled = 0;  // PERF_RECORD_THROTTLE records: the kernel lowered the rate itself
  uint64_t lost = 0;
  std::string ring_error;
  // count / period: the samples a correct PMU delivers.
  double expected() const { return period ? static_cast<double>(outcome.count.value_or(0)) / period : 0; }
  // Enough periods passed to judge (at least kMinimumPeriods), and the samples are within half
  // to twice the expected number: true/false; nullopt when it cannot be judged.
  std::optional<bool> follows_period() const;
  static constexpr double kMinimumPeriods = 16;
};

struct PerfProbeReport {
  PerfOpenOutcome software_control;     // cpu-clock: tells "no PMU" from "perf_event_open forbidden"
  std::vector<PerfEventProbe> hardware; // the 7 architectural events, then ref-cycles
  std::vector<PerfOpenOutcome> precise; // index = precise_ip 0..3, sampling on cycles
  PerfOpenOutcome branch_stack;         // cycles with PERF_SAMPLE_BRANCH_STACK (LBR / BRS)
  // How many cycles events one group can hold: the kernel checks a group against the PMU's
  // counters when a member is opened, so the member that does not fit is refused there
  // (x86: the fixed cycles counter plus the GP ones; arm64: the cycle counter plus PMCR_EL0.N).
  // nullopt when cycles does not open; group_capacity_limited when every probed member fitted.
  std::optional<unsigned> group_capacity;
  bool group_capacity_limited = false;
  int group_refusal_errno = 0;
  std::vector<SamplingProbe> sampling;  // cycles, instructions

  const PerfEventProbe* find(std::string_view name) const;
  // Highest precise_ip that opened, or -1 when cycles cannot sample at all.
  int max_precise() const;
  bool any_hardware_opened() const;
};

PerfProbeReport probe_perf(const perf::PerfEventOpener& opener);

// One sampling probe of `attr` (its type and config; user space only) at `period`: works until
// the event counted kMinimumPeriods * 4 periods or a bounded amount of work was done.
SamplingProbe probe_sampling(const perf::PerfEventOpener& opener, std::string event, perf_event_attr attr,
                             uint64_t period);

// The most members the group probe tries: more than any core PMU has (x86 8+4, arm64 31+1).
inline constexpr unsigned kGroupProbeLimit = 40;

}  // namespace vperf::host
