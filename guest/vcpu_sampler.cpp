#include "guest/vcpu_sampler.h"

#include <time.h>

#include <thread>

namespace vperf::guest {

uint64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ULL + static_cast<uint64_t>(t.tv_nsec);
}

Result<SamplerStats> sample_vcpus(VmMonitor& monitor, const std::vector<VcpuThread>& vcpus, const SamplerOptions& options,
                                  const std::function<bool()>& keep_going,
                                  const std::function<void(std::span<const VcpuSample>)>& on_tick) {
  if (options.frequency <= 0) return Error{"the sampling rate must be above 0"};
  const uint64_t interval = static_cast<uint64_t>(1e9 / options.frequency);
  const uint64_t start = monotonic_ns();
  const uint64_t end = options.duration.count() > 0 ? start + static_cast<uint64_t>(options.duration.count()) : UINT64_MAX;
  SamplerStats stats;
  std::vector<VcpuSample> tick;
  uint64_t next = start;
  while (keep_going()) {
    uint64_t now = monotonic_ns();
    if (now >= end) break;
    if (now < next) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(next - now));
      now = monotonic_ns();
    }
    next = std::max(next + interval, now);  // never bunch up ticks after a slow answer
    Result<std::string> text = monitor.hmp("info registers -a");
    if (!text) return text.error();
    Result<std::vector<VcpuRegisters>> cpus = parse_info_registers(*text);
    if (!cpus) return cpus.error();
    tick.clear();
    for (const VcpuRegisters& r : *cpus) {
      pid_t thread = 0;
      for (const VcpuThread& v : vcpus)
        if (v.index == r.index) thread = v.thread_id;
      tick.push_back(VcpuSample{now, thread, r});
      stats.kernel_samples += r.in_kernel() ? 1 : 0;
    }
    stats.samples += tick.size();
    ++stats.ticks;
    on_tick(tick);
  }
  stats.seconds = static_cast<double>(monotonic_ns() - start) / 1e9;
  return stats;
}

}  // namespace vperf::guest
