#!/usr/bin/env bash
# vperf probe's speed against perf probe 6.1 (issue 18), in the style of bench/speed.sh: every
# row times a vperf command and perf doing the same job, in turns (bench/interleave.py: one
# warm-up each, then A B A B ...), and prints CPU time (user + sys from wait4) and the ratios
# vperf / perf of the medians and of the minimums, CPU and wall (below 1: vperf is faster).
#
#   -V         `probe -x F -V FUNC` on vperf-workload's probe_target (small) and libc's
#              malloc (large: DWARF of libc6-dbg, found through /usr/lib/debug/.build-id)
#   -F         not measured until `vperf probe -F` exists (probe_functions_row says so)
#   -D         `vperf probe -D DEF` vs `perf probe -n -v DEF`: planning a definition, no adding
#   vmlinux    `probe -k VMLINUX -V vfs_read`: a kernel's DWARF (630 MB for Debian's 6.1), the
#              test guest's vmlinux-dbg when its rig was built ($build/guest-rig), else skipped
#              with a line saying so (perf accepts a vmlinux that is not the running kernel's
#              for -V; adding a probe on it, it refuses)
#   add        1 and 100 definitions in one command, then `-d GROUP:*`: interleave.py has no
#              untimed setup or teardown, so each timed command is add + delete (the delete
#              takes about 10 ms of the seconds the 100 take)
#   hit cost   not a ratio: the task-clock the workload gains per uprobe hit over 1M calls of
#              probe_target, (median probed - median bare) / calls and the same of minimums,
#              under `vperf stat -e uprobe:WORKLOAD:probe_target` and under perf stat of a
#              `perf probe` event; the two count the same kernel work, so they should agree
#
#   bench/probe.sh [--runs N] [--quick] [--build DIR]
#
#   --runs N     measured runs of each command, default 5
#   --quick      3 runs, 1 of the 100-probe row (perf takes ~10 s per run there): about a minute
#   --build DIR  where vperf and src/workloads/vperf-workload are, default build
#
# Needs root (it writes uprobe_events). Every probe it adds is deleted on exit, Ctrl-C
# included, and uprobe_events must read the same at the end as at the start, or it fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/options.sh
source bench/options.sh
parse_bench_options "$0" "$@"
big_runs=$runs
[ "$quick" = 1 ] && big_runs=1

vperf=$PWD/$build/vperf
workload=$PWD/$build/src/workloads/vperf-workload
libc=/lib/x86_64-linux-gnu/libc.so.6
events=/sys/kernel/tracing/uprobe_events
calls=1000000
for built in "$vperf" "$workload"; do
  [ -x "$built" ] || fail "$built not built" "ninja -C $build vperf vperf-workload"
done
[ "$(id -u)" = 0 ] || fail "adding uprobes needs root" "sudo bench/probe.sh"
[ -w "$events" ] || fail "$events not writable" "mount -t tracefs nodev /sys/kernel/tracing"
command -v perf >/dev/null || fail "perf not found" "apt-get install linux-perf"
build_id=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
[ -f "/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug" ] ||
  fail "no DWARF for $libc" "apt-get install libc6-dbg"

# Groups of our own, so that cleanup cannot take anyone else's probe; refuse rather than
# delete a group that was there before us.
groups="benchv benchp probe_vperf"
before=$(cat "$events")
for group in $groups; do
  ! grep -q "^.:$group/" <<<"$before" || fail "$events already holds group $group" "perf probe -d '$group:*'"
done
cleanup() {
  for group in $groups; do
    ! grep -q "^.:$group/" "$events" || perf probe -q -d "$group:*" || true
  done
  if [ "$(cat "$events")" != "$before" ]; then
    echo "vperf: error: $events differs from its start (hint: diff it by hand):" >&2
    diff <(echo "$before") "$events" >&2 || true
    exit 1
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$SECONDS

# Chosen once from glibc 2.36 (Debian 12): the first 100 names, sorted, of type T in
# `nm -D --defined-only`, leaving out those perf probe refuses ("Probe point not found": the
# aliases aio_cancel aio_error aio_fsync aio_return aio_suspend aio_write cfree, the stubs
# bdflush create_module, and dladdr), which vperf accepts. Fixed, so runs stay comparable.
functions="a64l abort abs accept accept4 acct aio_cancel64 aio_error64 aio_fsync64 aio_init aio_read
aio_read64 aio_return64 aio_suspend64 aio_write64 alarm argz_delete asctime atof atoi atol
atoll authdes_create authdes_getucred authdes_pk_create authnone_create authunix_create
authunix_create_default bcopy bindresvport bsearch c16rtomb c32rtomb c8rtomb call_once callrpc
capget capset catclose catgets catopen cbc_crypt cfgetispeed cfgetospeed cfmakeraw cfsetispeed
cfsetospeed cfsetspeed chflags chroot clearerr clearerr_unlocked clnt_broadcast clnt_create
clnt_pcreateerror clnt_perrno clnt_perror clnt_spcreateerror clnt_sperrno clnt_sperror
clntraw_create clnttcp_create clntudp_bufcreate clntudp_create clntunix_create clock
clock_adjtime clock_getcpuclockid clock_getres clock_gettime clock_nanosleep clock_settime
closelog cnd_broadcast cnd_destroy cnd_init cnd_signal cnd_timedwait cnd_wait confstr
copy_file_range ctermid ctime ctime_r cuserid daemon delete_module des_setparity difftime dirfd
dirname div dladdr1 dlclose dlerror dlinfo dlmopen dlopen dlsym dlvsym"
adds() {  # adds GROUP COUNT -> -a GROUP:F=F ... for the first COUNT functions
  local f
  for f in $(tr -s ' \n' '\n\n' <<<"$functions" | head -n "$2"); do printf ' -a %s:%s=%s' "$1" "$f" "$f"; done
}

row() { python3 bench/interleave.py --runs "$1" "$2" "$3" "$4"; }
add_row() {  # add_row RUNS COUNT
  row "$1" "probe -a x$2 + -d (libc)" \
    "$vperf probe -x $libc$(adds benchv "$2") && $vperf probe -q -d 'benchv:*'" \
    "perf probe -x $libc$(adds benchp "$2") && perf probe -q -d 'benchp:*'"
}
# The -F row, measured once vperf has the option; until then a line says why it is missing.
probe_functions_row() {
  if ! "$vperf" probe -x "$libc" -F >/dev/null 2>&1; then
    echo "probe -F: not measured: vperf probe -F does not exist yet"
    return
  fi
  row "$runs" "probe -F (libc)" "$vperf probe -x $libc -F" "perf probe -x $libc -F"
}
# Task-clock of the workload in ms under `TOOL stat -x, ARGS`, after checking that every call
# was counted when a probe is given (a probe that missed hits would make the cost look small).
task_ms() {  # task_ms TOOL [-e EVENT]
  local out
  out=$("$1" stat -x, -e task-clock "${@:2}" -- "$workload" probe-calls $calls 2>&1 >/dev/null) ||
    fail "$1 stat of probe-calls failed: $(tail -n 1 <<<"$out")" "run $1 stat -e task-clock -- $workload probe-calls 10"
  if [ $# -gt 1 ]; then
    awk -F, -v n=$calls '$3 ~ /probe_target$/ { ok = $1 == n } END { exit !ok }' <<<"$out" ||
      fail "$1 stat counted $(awk -F, '$3 ~ /probe_target$/ { print $1 }' <<<"$out") hits, not $calls" "run it by hand"
  fi
  awk -F, '$3 == "task-clock" { print $1 }' <<<"$out"
}
# ns per hit, med/min, in the cpu columns: a cost, not a ratio of the tools, so none is printed
hit_row() {  # hit_row NAME "VPERF BARE MS..." "VPERF PROBED MS..." "PERF BARE MS..." "PERF PROBED MS..."
  python3 - "$@" $calls <<'EOF'
import statistics as s, sys
name, calls = sys.argv[1], int(sys.argv[6])
v_bare, v_probed, p_bare, p_probed = ([float(x) for x in a.split()] for a in sys.argv[2:6])
ns = lambda bare, probed: "/".join(f"{(f(probed) - f(bare)) * 1e6 / calls:.0f}" for f in (s.median, min))
cells = (ns(v_bare, v_probed) + " ns/hit", ns(p_bare, p_probed) + " ns/hit", "-", "-")
print(f"{name:<34} " + " ".join(f"{c:>21}" for c in cells))
EOF
}

echo "libc: $libc (build-id $build_id); workload: $workload"
echo "timing: $runs runs of each command after one warm-up, in turns ($big_runs for x100); cpu in ms;"
echo "        the add rows time add + delete as one command (interleave.py has no untimed teardown)"
python3 bench/interleave.py --header
row "$runs" "probe -V probe_target (workload)" "$vperf probe -x $workload -V probe_target" \
  "perf probe -x $workload -V probe_target"
row "$runs" "probe -V malloc (libc)" "$vperf probe -x $libc -V malloc" "perf probe -x $libc -V malloc"
probe_functions_row
row "$runs" "probe -D 'getenv name:string'" "$vperf probe -x $libc -D 'getenv name:string'" \
  "perf probe -x $libc -n -v 'getenv name:string'"
vmlinux=$build/guest-rig/vmlinux-dbg
if [ -f "$vmlinux" ]; then
  row "$runs" "probe -k vmlinux -V vfs_read" "$vperf probe -k $vmlinux -V vfs_read" "perf probe -k $vmlinux -V vfs_read"
else
  echo "probe -k vmlinux -V vfs_read: not measured: no $vmlinux (scripts/test-guest.sh builds it)"
fi
add_row "$runs" 1
add_row "$big_runs" 100

# Per-hit cost: bare and probed runs in turns, as interleave.py does, one warm-up each.
perf probe -q -x "$workload" probe_vperf:probe_target=probe_target
uprobe=uprobe:$workload:probe_target
declare -A ms=()
for i in $(seq 0 "$runs"); do
  for run in "vperf bare:$vperf" "vperf probed:$vperf -e $uprobe" "perf bare:perf" \
             "perf probed:perf -e probe_vperf:probe_target"; do
    value=$(task_ms ${run#*:})
    [ "$i" = 0 ] || ms[${run%%:*}]+=" $value"
  done
done
hit_row "stat uprobe hit cost, 1M calls" "${ms[vperf bare]}" "${ms[vperf probed]}" \
  "${ms[perf bare]}" "${ms[perf probed]}"
echo "took $((SECONDS - started)) s"
