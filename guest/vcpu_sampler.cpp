#include "guest/vcpu_sampler.h"

#include <time.h>

#include <thread>

namespace vperf::guest {
namespace {

// The VM stopped for one tick: resumed by resume(), or by the destructor when the tick ends
// early (an error, an exception from on_tick), so sampling never leaves the VM paused.
class PausedVm {
 public:
  PausedVm(VmMonitor& monitor, bool wanted) : monitor_(monitor), wanted_(wanted) {}
  PausedVm(const PausedVm&) = delete;
  PausedVm& operator=(const PausedVm&) = delete;
  ~PausedVm() {
    if (paused_) (void)monitor_.qmp("cont", {});
  }
  Result<void> pause() {
    if (!wanted_) return {};
    if (Result<boost::json::value> ok = monitor_.qmp("stop", {}); !ok) return ok.error();
    paused_ = true;
    return {};
  }
  Result<void> resume() {
    if (!paused_) return {};
    Result<boost::json::value> ok = monitor_.qmp("cont", {});
    if (!ok) return Error{"the VM stays paused: " + ok.error().message};  // the destructor tries once more
    paused_ = false;
    return {};
  }

 private:
  VmMonitor& monitor_;
  bool wanted_;
  bool paused_ = false;
};

}  // namespace

uint64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ULL + static_cast<uint64_t>(t.tv_nsec);
}

Result<bool> vm_is_running(VmMonitor& monitor) {
  Result<boost::json::value> status = monitor.qmp("query-status", {});
  if (!status) return status.error();
  const boost::json::value* running = status->is_object() ? status->as_object().if_contains("running") : nullptr;
  if (running == nullptr || !running->is_bool()) return Error{"query-status: no running state"};
  return running->as_bool();
}

Result<SamplerStats> sample_vcpus(VmMonitor& monitor, const std::vector<VcpuThread>& vcpus, const SamplerOptions& options,
                                  const std::function<bool()>& keep_going,
                                  const std::function<bool(std::span<const VcpuSample>)>& on_tick) {
  if (options.frequency <= 0) return Error{"the sampling rate must be above 0"};
  const uint64_t interval = static_cast<uint64_t>(1e9 / options.frequency);
  const uint64_t start = monotonic_ns();
  const uint64_t end = options.duration.count() > 0 ? start + static_cast<uint64_t>(options.duration.count()) : UINT64_MAX;
  if (options.pause_each_tick) {
    Result<bool> running = vm_is_running(monitor);
    if (!running) return running.error();
    if (!*running) return Error{"the VM is not running, and pausing it for each tick would resume it afterwards"};
  }
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
    PausedVm paused(monitor, options.pause_each_tick);
    VPERF_TRY(paused.pause());
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
    if (!on_tick(tick)) break;
    VPERF_TRY(paused.resume());
  }
  stats.seconds = static_cast<double>(monotonic_ns() - start) / 1e9;
  return stats;
}

}  // namespace vperf::guest
