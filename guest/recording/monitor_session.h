#pragma once
// vperf kvm record --qmp/--domain's recording (the user's view is cli/cmd_kvm_monitor_record.h):
// every vCPU's registers sampled through the VM's monitor on a RunLoop, paced to the rate, and
// written through the RecordSink as perf.data guest samples — one vcpu-clock event (attrs from
// events/record_attr.h's synthetic-sample builder) and, with guest kernel stacks, one
// vcpu-clock.METHOD per unwinding method, so every reader shows which method made a stack.
// Sampling ends after the duration, when the command exits, on a stop signal, or at the
// monitor's first error (reported after the file is finished, so what was sampled is kept).
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "data/perf_data_writer.h"
#include "guest/kernel_stacks.h"
#include "guest/vcpu_sampler.h"
#include "guest/vcpu_stack_reader.h"
#include "guest/vm_monitor.h"
#include "perf/workload.h"
#include "session/run_loop.h"

namespace vperf::guest {

struct MonitorRecordRequest {
  std::string output = "perf.data.guest";
  double frequency = 1000;                 // ticks per second, each sampling every vCPU
  std::optional<double> duration_seconds;  // unset: until the command ends or a stop signal
  bool pause = false;                      // stop the VM for each tick
  std::vector<std::string> command;        // run on the host; its end ends sampling
  std::vector<std::string> cmdline;        // the CMDLINE feature
};

// The VM being sampled, opened and checked by the caller.
struct MonitorTarget {
  guest::VmMonitor* monitor = nullptr;
  std::vector<guest::VcpuThread> vcpus;
  pid_t vmm = 0;
  guest::VcpuStackReader* stacks = nullptr;     // -g: guest kernel stacks; nullptr: none
  std::vector<guest::StackMethod> methods;      // with stacks: the vcpu-clock.METHOD events
  std::optional<std::filesystem::path> guest_proc;  // the guest's kallsyms and modules, for its maps
};

struct MonitorRecordResult {
  Result<guest::SamplerStats> stats = guest::SamplerStats{};  // the monitor's error, if sampling stopped on one
  std::optional<perf::WorkloadExit> exit;
};

// Writes `request.output` (an existing file moves to .old). Failures to write are UserErrors.
MonitorRecordResult record_through_monitor(const MonitorRecordRequest& request, MonitorTarget& target, session::RunClock& clock);

// The events of a monitor recording: vcpu-clock, and vcpu-clock.METHOD for each of `methods`.
std::vector<data::EventAttrEntry> monitor_events(double frequency, const std::vector<guest::StackMethod>& methods, bool stacks);

}  // namespace vperf::guest
