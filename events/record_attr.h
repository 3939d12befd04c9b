#pragma once
// ResolvedEvent + record options -> the perf_event_attr `perf record` 6.1 opens (checked
// against `perf record -vv`):
//   sample_type  IP|TID|TIME|PERIOD, + CPU when sampling CPUs (-a/-C) or a tracepoint,
//                + RAW for tracepoints, + IDENTIFIER when there are several events,
//                + CALLCHAIN (-g / --call-graph fp), + CALLCHAIN|REGS_USER|STACK_USER with
//                exclude_callchain_user for --call-graph dwarf[,SIZE] (user stack copied for
//                offline unwinding; the kernel part of the chain still comes from the kernel)
//   period       -F HZ (attr.freq, default 4000) or -c PERIOD; tracepoints sample every hit
//   read_format  ID
//   tracking     the first event also asks for MMAP/MMAP2/COMM(+exec)/FORK/EXIT records
//                (mmap, mmap2, comm, comm_exec, task); every event has sample_id_all so
//                those records carry the sample fields that order them
// Privilege and guest/host bits follow the same modifier rules as AttrBuilder.
#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <vector>

#include <string_view>

#include "events/attr_builder.h"
#include "events/resolved_event.h"

namespace vperf::events {

struct RecordAttrOptions {
  std::optional<uint64_t> frequency;  // -F (default 4000 when neither is given)
  std::optional<uint64_t> period;     // -c
  CallGraph call_graph = CallGraph::None;
  uint32_t dwarf_stack_size = 8192;   // --call-graph dwarf,SIZE (perf's default)
  bool system_wide = false;           // -a / -C: samples carry the CPU
  bool several_events = false;        // samples carry IDENTIFIER
  bool tracking = false;              // this is the first event: task and map records
  bool enable_on_exec = false;        // a workload not exec'd yet
  bool inherit = true;
  MachineScope scope{};               // vperf kvm: which machines unmodified events sample
  bool sample_cpu = false;            // --sample-cpu: samples carry the CPU without -a
  // --all-user / --all-kernel: every event counts in that mode alone, whatever its modifiers
  // (perf sets exclude_kernel or exclude_user last; --all-kernel wins over --all-user).
  bool all_user = false, all_kernel = false;
  // -s: each task's counts, from the PERF_RECORD_READ the kernel writes as an inherited
  // counter's task exits (attr.inherit_stat, with the enabled and running times), for report -T.
  bool inherit_stat = false;
  // -k/--clockid: the clock of the samples' times (attr.use_clockid), none: perf's own clock.
  std::optional<int> clockid;
  // --overwrite: every event writes backward into an overwritable ring (attr.write_backward),
  // read only at the end and at each switch of --switch-output.
  bool overwrite = false;
};

// perf record -k's clock: a number, or a name of perf 6.1's (monotonic, monotonic_raw,
// realtime, boottime, tai, mono, raw, real, boot; case-insensitive, "CLOCK_" allowed).
// nullopt: not a clock perf knows.
std::optional<int> parse_clockid(std::string_view text);

// The user registers perf copies for DWARF unwinding on this machine: x86-64's AX..R15 without
// segment and flags registers (perf's 0xff0fff mask); arm64's X0..X30, SP and PC (0x1ffffffff).
#if defined(__aarch64__)
constexpr uint64_t kDwarfUserRegisters = (uint64_t{1} << 33) - 1;
#else
constexpr uint64_t kDwarfUserRegisters = 0xff0fff;
#endif
// What perf records with a frame-pointer call chain on this machine: on arm64 the link register
// (PERF_REG_ARM64_LR), from which a reader puts back a leaf function's caller; nothing elsewhere.
#if defined(__aarch64__)
constexpr uint64_t kFramePointerUserRegisters = uint64_t{1} << 30;
#else
constexpr uint64_t kFramePointerUserRegisters = 0;
#endif

perf_event_attr build_record_attr(const ResolvedEvent& event, const RecordAttrOptions& options);

// perf's fallback where the kernel has no hardware cycles (evsel__fallback): every cycles event,
// the default or one given with -e and its modifiers, becomes cpu-clock with the same privilege
// levels ("cycles:k" -> "cpu-clock:k"). Empty when no event is cycles.
std::vector<ResolvedEvent> without_hardware_cycles(const std::vector<ResolvedEvent>& sampled);

// The attr of samples vperf makes itself instead of the kernel (vperf kvm record --qmp: vCPU
// registers read through QEMU's monitor): never opened, so no read_format, not disabled, not
// inherited; `scope` says whose samples they are (exclude_host for a guest's); `tracking`
// marks the first event, which COMM/MMAP records belong to; every event has sample_id_all.
struct SyntheticSampleOptions {
  uint64_t period = 0;
  uint64_t sample_type = 0;
  MachineScope scope{};
  bool tracking = false;
};
perf_event_attr build_synthetic_sample_attr(const ResolvedEvent& event, const SyntheticSampleOptions& options);

// Bytes of the sample_id trailer sample_id_all appends to non-sample records for this
// sample_type (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER: 8 bytes each).
size_t sample_id_trailer_size(uint64_t sample_type);

}  // namespace vperf::events
