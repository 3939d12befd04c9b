#!/usr/bin/env bash
# Installs dependencies, builds vperf and runs its main job on this machine: what PMCs and
# tracing features it really exposes, the events you can use here, and counting them on the
# bundled workload (vperf-workload), with IPC and turbo ratio where the machine exposes them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# tracefs is where tracepoints are listed; mount it if this machine has not (as root).
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" -eq 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing || true
fi
set -x
build/vperf check
build/vperf list sw
build/vperf list pmu
build/vperf list 'sched:sched_s*'
build/vperf encode --model skx INST_RETIRED.ANY_P MEM_LOAD_RETIRED.L3_MISS:pp
build/vperf decode --model ivb r13c  # libpfm4's names and Intel's (bundled perfmon tables)
workload=build/src/workloads/vperf-workload
# perf stat's default set (IPC and branch lines where there is a PMU, <not supported> where not)
build/vperf stat -- "$workload" spin 300
# exact counts: 100000 getppid calls, 2000 fresh pages
build/vperf stat -e syscalls:sys_enter_getppid,page-faults -- "$workload" getppid 100000
build/vperf stat -e page-faults -r 3 -- "$workload" page-faults 2000
# a tiny KVM guest doing 1000 port writes: 1000 kvm_pio, 1000 exits to user space
if [ -c /dev/kvm ]; then
  build/vperf stat -e kvm:kvm_pio,kvm:kvm_userspace_exit -- "$workload" kvm-pio 1000
fi
# a uprobe on libc's syscall() (perf probe's definition): added, counted exactly (one hit per
# getppid), and removed
if [ -f /sys/kernel/tracing/uprobe_events ]; then
  build/vperf probe -q -x /lib/x86_64-linux-gnu/libc.so.6 'vperf_demo:syscall=syscall nr=%di:s64'
  build/vperf stat -e vperf_demo:syscall -- "$workload" getppid 1000 || true
  build/vperf probe -d 'vperf_demo:*'
  # DWARF: the variables at probe_target, then probes named inside -e (a struct member and the
  # return value) that exist only while stat runs: 1000 calls, 1000 hits each
  build/vperf probe -x "$workload" -V probe_target
  build/vperf stat -e "uprobe:$workload:probe_target" -e "uretprobe:$workload:probe_target" -- "$workload" probe-calls 1000 || true
fi
# ftrace in a private instance (instances/vperf-PID, gone when the run ends): a function trace
# of the workload's getppid calls filtered to the syscall's kernel function where this kernel
# allows function tracing; where it locks the function tracers (Firecracker guests), vperf says so
# in one line, and the same calls are traced as events instead, live and into a trace.dat that
# trace-cmd report reads too
if [ -d /sys/kernel/tracing/instances ]; then
  build/vperf ftrace -t function -T '*sys_getppid' -- "$workload" getppid 5 ||
    build/vperf ftrace -e syscalls:sys_enter_getppid -- "$workload" getppid 5
  build/vperf ftrace record -e syscalls:sys_enter_getppid --trigger stacktrace -o build/demo.trace.dat -- "$workload" getppid 2
  build/vperf ftrace report -i build/demo.trace.dat
fi
# turbo ratio from APERF/MPERF; on a VM that hides them it says so, and what to do
build/vperf turbo -I 500 --count 2 || true
# a CPU profile of the workload with call chains, in perf's own perf.data, drawn as a flame graph
build/vperf record -g -o build/demo.perf.data -- "$workload" spin 500
# perf report's table and perf script's lines, read by vperf (perf report reads the same file)
build/vperf report -i build/demo.perf.data --stdio --no-children --percent-limit 2
# (through files: under pipefail, head closing the pipe early would end the demo on SIGPIPE)
build/vperf script -i build/demo.perf.data -G >build/demo.script.txt
head -5 build/demo.script.txt
build/vperf annotate -i build/demo.perf.data --stdio spin_leaf_math >build/demo.annotate.txt
head -30 build/demo.annotate.txt
build/vperf flamegraph -i build/demo.perf.data -o build/demo-flamegraph.svg
echo "flame graph: open $PWD/build/demo-flamegraph.svg in a browser (perf report -i build/demo.perf.data reads the same file)"
