#include "guest/vcpu_sampler.h"

#include <time.h>

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

Result<void> VcpuSampler::check_can_pause() {
  if (!pause_each_tick_) return {};
  Result<bool> running = vm_is_running(monitor_);
  if (!running) return running.error();
  if (!*running) return Error{"the VM is not running, and pausing it for each tick would resume it afterwards"};
  return {};
}

Result<bool> VcpuSampler::tick(uint64_t time_ns, const std::function<bool(std::span<const VcpuSample>)>& on_tick) {
  PausedVm paused(monitor_, pause_each_tick_);
  VPERF_TRY(paused.pause());
  Result<std::string> text = monitor_.hmp("info registers -a");
  if (!text) return text.error();
  Result<std::vector<VcpuRegisters>> cpus = parse_info_registers(*text);
  if (!cpus) return cpus.error();
  tick_.clear();
  for (const VcpuRegisters& r : *cpus) {
    pid_t thread = 0;
    for (const VcpuThread& v : vcpus_)
      if (v.index == r.index) thread = v.thread_id;
    tick_.push_back(VcpuSample{time_ns, thread, r});
    stats_.kernel_samples += r.in_kernel() ? 1 : 0;
  }
  stats_.samples += tick_.size();
  ++stats_.ticks;
  if (!on_tick(tick_)) return false;
  VPERF_TRY(paused.resume());
  return true;
}

}  // namespace vperf::guest
