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

struct PerfProbeReport {
  PerfOpenOutcome software_control;     // cpu-clock: tells "no PMU" from "perf_event_open forbidden"
  std::vector<PerfEventProbe> hardware; // the 7 architectural events, then ref-cycles
  std::vector<PerfOpenOutcome> precise; // index = precise_ip 0..3, sampling on cycles
  PerfOpenOutcome branch_stack;         // cycles with PERF_SAMPLE_BRANCH_STACK (LBR / BRS)

  const PerfEventProbe* find(std::string_view name) const;
  // Highest precise_ip that opened, or -1 when cycles cannot sample at all.
  int max_precise() const;
  bool any_hardware_opened() const;
};

PerfProbeReport probe_perf(const perf::PerfEventOpener& opener);

}  // namespace vperf::host
