#pragma once
// What a test guest (scripts/test-guest.sh) whose agent stopped answering is doing, as text for
// the failure message: the agent's silence alone says nothing of where it hangs (the guest
// kernel, qemu-ga, the virtio-serial port, QEMU's end of the port), and the guest is booted
// again right after, so this is the only look anyone gets.
//
// Three views, each taken even when another one fails:
//  - QEMU's, over QMP: run state, each chardev's connection (is the agent's socket connected,
//    has the guest opened its port), the indexes of the virtio-serial queues that carry the
//    agent's bytes and the port open/close messages (QEMU 7.2's x-query-virtio-queue-status),
//    each vCPU's instruction pointer as a guest kernel symbol and whether it is halted, and each
//    QEMU thread's share of a host CPU over one second.
//  - The guest's own, from init's shell on the console (DIR/console.sock): processes, qemu-ga's
//    state, kernel stack, open files, the virtio ports' connection state and byte counts, free
//    memory, the tracer in use, and the kernel log after sysrq's blocked-task and all-CPU dumps.
//  - When that shell does not answer (the kernel itself hangs, or init's shell is busy): sysrq
//    from QMP's keyboard (the kernel command line has sysrq_always_enabled), the loglevel
//    raised first, then blocked tasks, each CPU and every task, as the console printed them.
#include <string>

#include "support/guest_rig.h"

namespace vperf::test {

// Takes up to about 2 minutes on a TCG guest of a loaded host; never throws, never fails.
std::string guest_stall_report(const RunningGuest& guest);

}  // namespace vperf::test
