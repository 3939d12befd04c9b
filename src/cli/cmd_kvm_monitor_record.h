#pragma once
// vperf kvm record --qmp SOCKET [--qga SOCKET] [-F HZ] [--duration S] [-o FILE] [-- COMMAND]
// vperf kvm record --domain NAME [--connect URI] ...    (the same through libvirt)
// vperf kvm record --domain NAME --qmp SOCKET ...        (samples through the socket, agent and
//                                                          VMM pid through libvirt)
//
// Guest profiling without a host PMU: every vCPU's registers sampled through the VM's QEMU
// monitor (guest/vcpu_sampler.h) and written as perf.data guest samples — cpumode GUEST_KERNEL
// (CPL 0) or GUEST_USER, the VMM's pid, the vCPU thread's tid, the vCPU as cpu — so report,
// script, flamegraph and annotate read them as any guest recording. The guest's kallsyms and
// modules come from its agent (--qga) or from --guestkallsyms/--guestmodules; they are written
// into the file as perf kvm record's guest kernel and module maps, and kept beside it as
// FILE.guestmount/<VMM pid>/proc/{kallsyms,modules}, which `vperf kvm report` finds by itself.
// Sampling ends after --duration, when COMMAND (run on the host) exits, or on Ctrl-C.
//
// With -g each sample in the guest kernel gets its kernel call stack, dumped through the
// monitor and unwound on the host (guest/kernel_stacks.h) with the guest kernel's ORC tables,
// frame pointers or a conservative scan (--call-graph orc|fp|scan forces one). The method is in
// the event's name — vcpu-clock.orc, vcpu-clock.fp, vcpu-clock.scan — so report and script say
// which method produced each stack; samples without a kernel stack (user mode, or a stack that
// moved before it was dumped) stay under plain vcpu-clock. The registers and each stack are two
// monitor commands apart while the vCPU runs on; --pause stops the VM for each tick so that
// every kernel-mode sample gets its stack, at the cost of guest time (measured in docs/guest.md).
#include <ostream>
#include <string>

#include "guest/recording/vm_record.h"

namespace vperf::cli {

// The recording's request, and the libvirt URI it goes through with --domain (checked here:
// an unsafe URI needs --allow-unsafe-uri).
struct MonitorRecordOptions {
  guest::VmRecordRequest request;
  std::string uri = "qemu:///system";
  bool allow_unsafe_uri = false;  // --allow-unsafe-uri
};

int run_monitor_record(const MonitorRecordOptions& options, std::ostream& err);

}  // namespace vperf::cli
