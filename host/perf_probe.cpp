#include "host/perf_probe.h"

#include <array>
#include <cstring>

namespace vperf::host {

namespace {

struct HardwareProbeSpec {
  const char* name;
  uint64_t config;
  const char* counter;
};

// The 7 architectural events as perf's generic hardware events map them on Intel, then
// ref-cycles, which perf schedules only on fixed counter 2 (pseudo-encoding 0x0300).
constexpr std::array kHardwareProbes{
    HardwareProbeSpec{"cycles", PERF_COUNT_HW_CPU_CYCLES, "architectural event 0 (fixed counter 1 or GP)"},
    HardwareProbeSpec{"instructions", PERF_COUNT_HW_INSTRUCTIONS, "architectural event 1 (fixed counter 0 or GP)"},
    HardwareProbeSpec{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES, "architectural event 2, 0x013c on a GP counter"},
    HardwareProbeSpec{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES, "architectural event 3 (LLC reference)"},
    HardwareProbeSpec{"cache-misses", PERF_COUNT_HW_CACHE_MISSES, "architectural event 4 (LLC miss)"},
    HardwareProbeSpec{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "architectural event 5"},
    HardwareProbeSpec{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES, "architectural event 6"},
    HardwareProbeSpec{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, "fixed counter 2 (0x0300)"},
};

constexpr uint64_t kSamplePeriod = 1000003;  // prime, as perf's default-ish periods, to avoid aliasing
constexpr int kMaxPreciseIp = 3;

// Work for a counting probe to count; volatile so the compiler keeps it.
void busy_loop() {
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 200000; ++i) sink = sink + i * 3;
}

// Opens the event on this thread and records in `out` whether it opened, or why not.
Result<perf::EventFd> open_recording(const perf::PerfEventOpener& opener, const perf_event_attr& attr,
                                     PerfOpenOutcome& out) {
  auto fd = opener.open(attr, perf::OpenTarget{});
  out.opened = fd.ok();
  if (!fd) {
    out.errno_value = fd.error().errno_value;
    out.error = fd.error().describe();
  }
  return fd;
}

PerfOpenOutcome open_only(const perf::PerfEventOpener& opener, const perf_event_attr& attr) {
  PerfOpenOutcome out;
  (void)open_recording(opener, attr, out);
  return out;
}

PerfOpenOutcome open_and_count(const perf::PerfEventOpener& opener, perf_event_attr attr) {
  PerfOpenOutcome out;
  attr.disabled = 0;  // count from the open on, so no ioctl is needed
  auto fd = open_recording(opener, attr, out);
  if (!fd) return out;
  busy_loop();
  uint64_t value = 0;
  auto n = fd->read(&value, sizeof value);
  if (!n) {
    out.error = n.error().describe();
    out.errno_value = n.error().errno_value;
  } else if (*n == sizeof value) {
    out.count = value;
  } else {
    out.error = "short read of the counter (" + std::to_string(*n) + " bytes)";
  }
  return out;
}

}  // namespace

const PerfEventProbe* PerfProbeReport::find(std::string_view name) const {
  for (const auto& p : hardware)
    if (p.name == name) return &p;
  return nullptr;
}

int PerfProbeReport::max_precise() const {
  int best = -1;
  for (size_t i = 0; i < precise.size(); ++i)
    if (precise[i].opened) best = static_cast<int>(i);
  return best;
}

bool PerfProbeReport::any_hardware_opened() const {
  for (const auto& p : hardware)
    if (p.outcome.opened) return true;
  return false;
}

PerfProbeReport probe_perf(const perf::PerfEventOpener& opener) {
  PerfProbeReport report;
  report.software_control = open_and_count(opener, perf::user_space_probe_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK));
  for (const auto& spec : kHardwareProbes) {
    PerfEventProbe probe;
    probe.name = spec.name;
    probe.type = PERF_TYPE_HARDWARE;
    probe.config = spec.config;
    probe.counter = spec.counter;
    probe.outcome = open_and_count(opener, perf::user_space_probe_attr(PERF_TYPE_HARDWARE, spec.config));
    report.hardware.push_back(std::move(probe));
  }
  for (int level = 0; level <= kMaxPreciseIp; ++level) {
    perf_event_attr attr = perf::user_space_probe_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    attr.disabled = 1;
    attr.sample_period = kSamplePeriod;
    attr.sample_type = PERF_SAMPLE_IP;
    attr.precise_ip = static_cast<uint64_t>(level) & 3u;
    report.precise.push_back(open_only(opener, attr));
  }
  perf_event_attr branch = perf::user_space_probe_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
  branch.disabled = 1;
  branch.sample_period = kSamplePeriod;
  branch.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK;
  branch.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;
  report.branch_stack = open_only(opener, branch);
  return report;
}

}  // namespace vperf::host
