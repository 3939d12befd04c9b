#include "host/perf_probe.h"

#include <array>
#include <cstring>

#include "perf/ring_buffer.h"

namespace vperf::host {

namespace {

struct HardwareProbeSpec {
  const char* name;
  uint64_t config;
  const char* counter;
};

#if defined(__aarch64__)
// perf's generic events as the arm64 PMU driver maps them (armv8_pmuv3_perf_map); ref-cycles
// has no mapping there.
constexpr std::array kHardwareProbes{
    HardwareProbeSpec{"cycles", PERF_COUNT_HW_CPU_CYCLES, "CPU_CYCLES 0x11 (the cycle counter or a general one)"},
    HardwareProbeSpec{"instructions", PERF_COUNT_HW_INSTRUCTIONS, "INST_RETIRED 0x08"},
    HardwareProbeSpec{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES, "BUS_CYCLES 0x1d"},
    HardwareProbeSpec{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES, "L1D_CACHE 0x04 (level 1, not the LLC)"},
    HardwareProbeSpec{"cache-misses", PERF_COUNT_HW_CACHE_MISSES, "L1D_CACHE_REFILL 0x03"},
    HardwareProbeSpec{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "PC_WRITE_RETIRED 0x0c"},
    HardwareProbeSpec{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES, "BR_MIS_PRED 0x10"},
    HardwareProbeSpec{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, "no arm64 mapping"},
};
#else
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
#endif

constexpr uint64_t kSamplePeriod = 1000003;  // prime, as perf's default-ish periods, to avoid aliasing
constexpr int kMaxPreciseIp = 3;

// Work for a counting probe to count; volatile so the compiler keeps it. About a million
// instructions.
void busy_loop() {
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 200000; ++i) sink = sink + i * 3;
}

// The sampling probe's period: small enough that a ~100M-instruction bound gives hundreds of
// periods, large enough that the kernel's default rate limit (perf_event_max_sample_rate) is not
// reached on a fast CPU (a sample per 100k cycles at 5 GHz is 50 kHz). Prime, against aliasing.
constexpr uint64_t kProbeSamplingPeriod = 100003;
constexpr int kSamplingWorkRounds = 100;  // busy loops at most: ~100M instructions
constexpr size_t kSamplingRingPages = 16;

uint64_t read_count(const perf::EventFd& fd) {
  uint64_t value = 0;
  auto n = fd.read(&value, sizeof value);
  return n && *n == sizeof value ? value : 0;
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

// Opens `cycles` as a group leader, then more cycles members until the kernel refuses one.
void probe_group_capacity(const perf::PerfEventOpener& opener, PerfProbeReport& report) {
  // Every event enabled: arm64's group check leaves a disabled event out (it takes no counter
  // until enabled), x86's a disabled member; an enabled one counts in both.
  perf_event_attr attr = perf::user_space_probe_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
  attr.disabled = 0;
  auto leader = opener.open(attr, perf::OpenTarget{});
  if (!leader) return;
  std::vector<perf::EventFd> members;
  perf::OpenTarget member_target;
  member_target.group_fd = leader->get();
  unsigned fitted = 1;
  while (fitted < kGroupProbeLimit) {
    auto member = opener.open(attr, member_target);
    if (!member) {
      report.group_refusal_errno = member.error().errno_value;
      break;
    }
    members.push_back(std::move(member).value());
    ++fitted;
  }
  report.group_capacity = fitted;
  report.group_capacity_limited = fitted == kGroupProbeLimit;
}

}  // namespace

std::optional<bool> SamplingProbe::follows_period() const {
  if (!outcome.opened || !samples || expected() < kMinimumPeriods) return std::nullopt;
  // Throttling is the kernel's own choice, said in the ring; samples it withheld are not a defect.
  if (throttled > 0 || lost > 0) return std::nullopt;
  const double ratio = static_cast<double>(*samples) / expected();
  return ratio >= 0.5 && ratio <= 2.0;
}

SamplingProbe probe_sampling(const perf::PerfEventOpener& opener, std::string event, perf_event_attr attr,
                             uint64_t period) {
  SamplingProbe probe;
  probe.event = std::move(event);
  probe.period = period;
  attr.disabled = 1;
  attr.sample_period = period;
  attr.sample_type = PERF_SAMPLE_IP;
  attr.wakeup_events = 0;
  auto fd = open_recording(opener, attr, probe.outcome);
  if (!fd) return probe;
  auto ring = perf::RingBuffer::map(fd->get(), kSamplingRingPages);
  if (!ring) {
    probe.ring_error = ring.error().describe();
    return probe;
  }
  uint64_t samples = 0;
  auto on_record = [&](std::span<const uint8_t> record) {
    perf_event_header header;
    std::memcpy(&header, record.data(), sizeof header);
    if (header.type == PERF_RECORD_SAMPLE) ++samples;
    else if (header.type == PERF_RECORD_THROTTLE) ++probe.throttled;
    else if (header.type == PERF_RECORD_LOST) ++probe.lost;
  };
  if (auto enabled = fd->enable(); !enabled) {
    probe.ring_error = enabled.error().describe();
    return probe;
  }
  // Work in rounds, draining between them so the ring never fills, until enough periods passed.
  const double target = SamplingProbe::kMinimumPeriods * 4 * static_cast<double>(period);
  for (int round = 0; round < kSamplingWorkRounds; ++round) {
    busy_loop();
    if (auto drained = ring->drain(on_record); !drained) {
      probe.ring_error = drained.error().describe();
      return probe;
    }
    if (static_cast<double>(read_count(*fd)) >= target) break;
  }
  (void)fd->disable();
  probe.outcome.count = read_count(*fd);
  if (auto drained = ring->drain(on_record); !drained) {
    probe.ring_error = drained.error().describe();
    return probe;
  }
  probe.samples = samples;
  return probe;
}

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
  probe_group_capacity(opener, report);
  report.sampling.push_back(probe_sampling(
      opener, "cycles", perf::user_space_probe_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES), kProbeSamplingPeriod));
  report.sampling.push_back(probe_sampling(opener, "instructions",
                                           perf::user_space_probe_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
                                           kProbeSamplingPeriod));
  return report;
}

}  // namespace vperf::host
