#!/usr/bin/env bash
# vperf ftrace's speed against trace-cmd 3.1.6 (issue 19), in the style of bench/speed.sh: every
# row times vperf and trace-cmd doing the same job, in turns (bench/interleave.py: one warm-up
# each, then A B A B ...), and prints CPU time (user + sys from wait4) and the ratios
# vperf / trace-cmd of the medians and of the minimums, CPU and wall (below 1: vperf is faster).
#
#   report     `vperf ftrace report` vs `trace-cmd report` of the same trace.dat (vperf's),
#              20000 and 1000000 sys_enter_getppid events
#   record     a syscall storm (vperf-workload getppid N) recorded into trace.dat:
#              `vperf ftrace record -e syscalls:sys_enter_getppid -b KB -- CMD` against
#              trace-cmd's way where `trace-cmd record` works; where it does not (these
#              Firecracker guests: it writes /proc/sys/kernel/ftrace_enabled and is refused),
#              against the trace-cmd way that does work: an instance prepared through tracefs,
#              the command, then `trace-cmd extract -B` (its buffer sized to hold every event)
#   storm      not a ratio: events per second of the workload under `vperf ftrace record`
#              with the kernel's default buffer, and how many were lost (must be 0)
#
#   bench/ftrace.sh [--runs N] [--quick] [--build DIR]
#
#   --runs N     measured runs of each command, default 5
#   --quick      3 runs, and 200000 events in the large rows: about a minute
#   --build DIR  where vperf and src/workloads/vperf-workload are, default build
#
# Needs root (tracefs instances). Every instance it makes is removed on exit, Ctrl-C included.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/options.sh
source bench/options.sh
parse_bench_options "$0" "$@"
large=1000000
[ "$quick" = 1 ] && large=200000

vperf=$PWD/$build/vperf
workload=$PWD/$build/src/workloads/vperf-workload
tracefs=/sys/kernel/tracing
for built in "$vperf" "$workload"; do
  [ -x "$built" ] || fail "$built not built" "ninja -C $build vperf vperf-workload"
done
[ "$(id -u)" = 0 ] || fail "tracefs instances need root" "sudo bench/ftrace.sh"
[ -d "$tracefs/instances" ] || fail "no tracefs instances at $tracefs" "mount -t tracefs nodev /sys/kernel/tracing"
command -v trace-cmd >/dev/null || fail "trace-cmd not found" "apt-get install trace-cmd"

work=$(mktemp -d)
instance=vperf-bench-$$
cleanup() {
  if [ -d "$tracefs/instances/$instance" ]; then
    echo 0 > "$tracefs/instances/$instance/events/syscalls/sys_enter_getppid/enable" || true
    rmdir "$tracefs/instances/$instance" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$SECONDS

# Buffers large enough for every event of the large rows (16 bytes an event, one CPU busy).
kb=$(((large * 16 / 1024) * 3 / 2 + 1024))
record() {  # record N FILE: vperf's trace.dat of N getppid calls, nothing lost
  local out
  out=$("$vperf" ftrace record -e syscalls:sys_enter_getppid -b "$kb" -o "$2" -- "$workload" getppid "$1" 2>&1 >/dev/null) ||
    fail "vperf ftrace record failed: $(tail -n 1 <<<"$out")" "run it by hand"
  ! grep -q ' [1-9][0-9]* events lost' <<<"$out" || fail "the recording lost events: $out" "give more buffer"
}
record 20000 "$work/small.dat"
record "$large" "$work/large.dat"

# trace-cmd's recording where trace-cmd record works here, else its extract of a prepared instance.
peer_record() {
  if trace-cmd record -e syscalls:sys_enter_getppid -b "$kb" -o "$work/probe.dat" true >/dev/null 2>"$work/tc.err"; then
    echo "trace-cmd record -e syscalls:sys_enter_getppid -b $kb -o $work/tc.dat $workload getppid $large"
  else
    cat > "$work/extract.sh" <<EOF
set -e
mkdir $tracefs/instances/$instance
echo $kb > $tracefs/instances/$instance/buffer_size_kb
echo 1 > $tracefs/instances/$instance/events/syscalls/sys_enter_getppid/enable
$workload getppid $large
echo 0 > $tracefs/instances/$instance/tracing_on
trace-cmd extract -B $instance -o $work/tc.dat >/dev/null 2>&1
[ ! -d $tracefs/instances/$instance ] || { echo 0 > $tracefs/instances/$instance/events/syscalls/sys_enter_getppid/enable; rmdir $tracefs/instances/$instance; }
EOF
    echo "sh $work/extract.sh"
  fi
}
peer=$(peer_record)
echo "workload: $workload; large rows: $large events; buffers: $kb KB per CPU; cpu in ms"
if [[ $peer == sh* ]]; then
  echo "peer for record: trace-cmd record fails here ($(grep -m1 -v '^$' "$work/tc.err" || echo "no message")),"
  echo "                 so an instance prepared through tracefs, then trace-cmd extract -B"
fi
row() { python3 bench/interleave.py --runs "$1" "$2" "$3" "$4"; }
python3 bench/interleave.py --header
row "$runs" "report 20k events" "$vperf ftrace report -i $work/small.dat" "trace-cmd report $work/small.dat"
row "$runs" "report $((large / 1000))k events" "$vperf ftrace report -i $work/large.dat" "trace-cmd report $work/large.dat"
row "$runs" "record $((large / 1000))k-call storm" \
  "$vperf ftrace record -e syscalls:sys_enter_getppid -b $kb -o $work/v.dat -- $workload getppid $large" "$peer"

# Events per second recorded, with the kernel's default buffer (vperf drains while it runs).
python3 - "$vperf" "$workload" "$large" "$work/storm.dat" "$runs" <<'EOF'
import re, statistics, subprocess, sys, time
vperf, workload, n, out, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
rates, lost = [], 0
for _ in range(runs):
    start = time.monotonic()
    r = subprocess.run([vperf, "ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", out, "--", workload, "getppid", str(n)],
                       capture_output=True, text=True, check=True)
    rates.append(n / (time.monotonic() - start))
    lost += sum(int(x) for x in re.findall(r"recorded, (\d+) events lost", r.stderr))
print(f"storm, default buffer: {statistics.median(rates) / 1e6:.2f}M events/s median, {max(rates) / 1e6:.2f}M best, "
      f"{lost} lost in {runs} runs of {n}")
EOF
echo "took $((SECONDS - started)) s"
