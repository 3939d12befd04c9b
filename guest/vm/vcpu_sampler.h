#pragma once
// Samples every vCPU of a VM through its monitor, for hosts where perf cannot see the guest (no
// host PMU, nested KVM, TCG): each tick asks the monitor for all vCPUs' registers (HMP `info
// registers -a`, one round trip) and turns each vCPU's RIP and privilege level into a sample.
// The monitor answers between two translation blocks (TCG) or after kicking the vCPUs out of
// KVM_RUN, so each tick is a consistent snapshot; its cost to the guest is measured by the
// tests, not assumed.
//
// The caller paces the ticks (guest/recording/monitor_session.h runs them on its RunLoop); a monitor
// slower than the rate makes every tick start as soon as the previous one ended, and the
// achieved rate is what SamplerStats says.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/error.h"
#include "guest/vcpu_registers.h"
#include "guest/vm_monitor.h"

namespace vperf::guest {

struct VcpuSample {
  uint64_t time_ns = 0;   // CLOCK_MONOTONIC when the registers were asked for
  pid_t thread_id = 0;    // the vCPU's host thread (query-cpus-fast)
  VcpuRegisters registers;
};

struct SamplerStats {
  uint64_t ticks = 0;
  uint64_t samples = 0;
  uint64_t kernel_samples = 0;  // CPL 0
  double seconds = 0;
  double ticks_per_second() const { return seconds > 0 ? static_cast<double>(ticks) / seconds : 0; }
};

// Samples one tick at a time.
class VcpuSampler {
 public:
  // With `pause_each_tick` the VM is stopped (QMP stop) for the length of each tick, registers
  // and on_tick's stack dumps included, and let go on (cont) after: every vCPU's registers and
  // stack then belong to the same instant. Costs ~2.3 ms of stop/cont per tick under TCG. A VM
  // that is not running when sampling starts is refused (its pause is the user's); one paused
  // by someone else while sampling runs is resumed by the next tick, which cannot tell the two
  // apart.
  VcpuSampler(VmMonitor& monitor, const std::vector<VcpuThread>& vcpus, bool pause_each_tick)
      : monitor_(monitor), vcpus_(vcpus), pause_each_tick_(pause_each_tick) {}

  // Refuses a VM that is not running when the ticks pause it (see above).
  Result<void> check_can_pause();
  // One tick stamped `time_ns` (CLOCK_MONOTONIC): every vCPU's registers, handed to `on_tick`
  // (one sample per vCPU) while the VM is still paused. Returns on_tick's answer (false: stop),
  // or the monitor's error.
  Result<bool> tick(uint64_t time_ns, const std::function<bool(std::span<const VcpuSample>)>& on_tick);

  SamplerStats& stats() { return stats_; }

 private:
  VmMonitor& monitor_;
  const std::vector<VcpuThread>& vcpus_;
  bool pause_each_tick_;
  SamplerStats stats_;
  std::vector<VcpuSample> tick_;
};

uint64_t monotonic_ns();

// Whether the VM runs (QMP query-status), for --pause, which must not resume a VM the user paused.
Result<bool> vm_is_running(VmMonitor& monitor);

}  // namespace vperf::guest
