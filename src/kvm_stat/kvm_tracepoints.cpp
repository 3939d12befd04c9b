#include "kvm_stat/kvm_tracepoints.h"

#include <linux/kvm.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace vperf::kvm {

namespace {

constexpr KvmTracepoint kTracepoints[] = {
    {"kvm", "kvm_entry", KvmEventKind::Entry},
    {"kvm", "kvm_exit", KvmEventKind::Exit},
    {"kvm", "kvm_userspace_exit", KvmEventKind::UserspaceExit},
    {"kvm", "kvm_pio", KvmEventKind::Pio},
    {"kvm", "kvm_mmio", KvmEventKind::Mmio},
    {"kvm", "kvm_msr", KvmEventKind::Msr},
    {"kvm", "kvm_hypercall", KvmEventKind::Hypercall},
    {"syscalls", "sys_enter_ioctl", KvmEventKind::RunIoctl},
};

// The kernel filter that keeps only the VMM's KVM_RUN calls of all its ioctls.
std::string run_ioctl_filter() {
  char text[32];
  std::snprintf(text, sizeof text, "cmd == %#x", static_cast<unsigned>(KVM_RUN));
  return text;
}

}  // namespace

std::span<const KvmTracepoint> kvm_tracepoints() { return kTracepoints; }

std::optional<KvmEventKind> kvm_event_kind(std::string_view name) {
  for (const KvmTracepoint& t : kTracepoints)
    if (t.name() == name) return t.kind;
  return std::nullopt;
}

const KvmTracepoint& kvm_tracepoint(KvmEventKind kind) {
  for (const KvmTracepoint& t : kTracepoints)
    if (t.kind == kind) return t;
  return kTracepoints[0];  // every kind has its row above
}

bool tracepoint_exists(const tracing::Tracefs& tracefs, const KvmTracepoint& t) {
  return tracefs.event_file_exists(t.system, t.event, "format");
}

Result<KvmRecordEvents> kvm_record_events(const tracing::Tracefs& tracefs) {
  KvmRecordEvents out;
  bool any_kvm = false;
  for (const KvmTracepoint& t : kTracepoints) {
    if (!tracepoint_exists(tracefs, t)) continue;
    out.events.push_back(t.name());
    if (t.kind == KvmEventKind::RunIoctl)
      out.filters[t.name()] = run_ioctl_filter();
    else
      any_kvm = true;
  }
  // tracefs is closed to users other than root (mode 0700): the tracepoints are there but
  // cannot be seen, and loading KVM would not help.
  const std::filesystem::path events = tracefs.root() / "events";
  if (!any_kvm && ::access(events.c_str(), X_OK) != 0 && (errno == EACCES || errno == EPERM))
    return Error{"no permission to read the kvm tracepoints in " + events.string(), 0,
                 "run as root (VM-exit tracing needs CAP_SYS_ADMIN or CAP_PERFMON, as perf kvm stat does)"};
  if (!any_kvm)
    return Error{"no kvm tracepoints in " + events.string(), 0,
                 "load KVM (modprobe kvm_intel or kvm_amd); /dev/kvm must exist"};
  return out;
}

}  // namespace vperf::kvm
