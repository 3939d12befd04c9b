#pragma once
// The tracepoints kvm stat records and reads, by perf's names. kvm_entry/kvm_exit/kvm_mmio/
// kvm_pio/kvm_msr are what perf 6.1's `perf kvm stat record` records on x86; kvm_userspace_exit
// and kvm_hypercall are vperf's, for the exits that reach user space (kvm/kvm_exit_analysis.h);
// syscalls:sys_enter_ioctl, filtered in the kernel to cmd == KVM_RUN, is the VMM's KVM_RUN
// call that ends an exit to user space.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "kvm_stat/kvm_exit_analysis.h"
#include "tracing/tracefs.h"

namespace vperf::kvm {

struct KvmTracepoint {
  std::string_view system, event;
  KvmEventKind kind;

  std::string name() const { return std::string(system) + ":" + std::string(event); }  // "kvm:kvm_exit"
};

// Every tracepoint kvm stat uses, in the order it records them.
std::span<const KvmTracepoint> kvm_tracepoints();
// The kind of the tracepoint named "system:event", or nullopt for one kvm stat does not use.
std::optional<KvmEventKind> kvm_event_kind(std::string_view name);
// The tracepoint of the given kind.
const KvmTracepoint& kvm_tracepoint(KvmEventKind kind);

// Whether tracefs has events/SYSTEM/EVENT/format: the running kernel has the tracepoint.
bool tracepoint_exists(const tracing::Tracefs& tracefs, const KvmTracepoint& tracepoint);

// What `vperf kvm stat record` records on this kernel: the tracepoints tracefs has, and the
// kernel filter of each one that takes one (by event name, wherever it is in the list).
struct KvmRecordEvents {
  std::vector<std::string> events;
  std::map<std::string, std::string> filters;  // "syscalls:sys_enter_ioctl" -> "cmd == 0xae80"
};
// An error, with its hint, when tracefs has no kvm tracepoint (KVM not loaded).
Result<KvmRecordEvents> kvm_record_events(const tracing::Tracefs& tracefs);

}  // namespace vperf::kvm
