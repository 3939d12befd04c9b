#!/usr/bin/env bash
# perf 6.1's own shell tests (Debian's linux-perf, /usr/lib/perf-core/tests/shell), run once with
# perf and once with vperf as `perf`, side by side (issue 34). The scripts stay perf's: they are
# run from the installed package, never copied here.
#
# Each run of a test is isolated as `perf test` cannot isolate it: a private mount namespace
# with its own /tmp (a tmpfs) and HOME (so ~/.debug, the build-id cache, starts empty), and
# `perf` on PATH being the tool under test (for vperf: a directory holding a `perf` link to it).
# The tracefs state (probe and dynamic events, instances, enabled events, tracing_on, the
# current tracer) is read before and after each run: a run that leaves it changed is a failure
# whatever its exit status, and the state is put back.
#
# A test's exit status is perf test's verdict: 0 passed, 2 skipped, anything else failed (a run
# past --timeout is killed and failed). Printed: one line per test, perf's verdict and vperf's,
# and for vperf a note where they differ; the logs of every run are kept in --logs.
#
#   scripts/perf-shell-tests.sh [--build DIR] [--only LIST] [--timeout SECONDS] [--logs DIR] [--vperf-only]
#
#   --build DIR     where vperf is (default build)
#   --only LIST     comma-separated test names (file names without .sh), default all
#   --timeout S     seconds per run, default 300
#   --logs DIR      where each run's output goes (default a new directory under /tmp, printed)
#   --vperf-only    run vperf only (perf's column says "-")
#
# Exit status: 0 when vperf passes every test perf passes and skips every test perf skips, 1
# otherwise, 2 on bad usage. Needs root (the tests probe, trace and count system-wide) and perf.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "vperf: error: $1 (hint: $2)" >&2; exit 2; }
usage="scripts/perf-shell-tests.sh [--build DIR] [--only LIST] [--timeout SECONDS] [--logs DIR] [--vperf-only]"

build=build only="" timeout=300 logs="" vperf_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || fail "--build needs a directory" "$usage"; build=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || fail "--only needs a list" "$usage"; only=$2; shift 2 ;;
    --timeout) [ $# -ge 2 ] || fail "--timeout needs seconds" "$usage"; timeout=$2; shift 2 ;;
    --logs) [ $# -ge 2 ] || fail "--logs needs a directory" "$usage"; logs=$2; shift 2 ;;
    --vperf-only) vperf_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown option '$1'" "$usage" ;;
  esac
done
[[ $timeout =~ ^[1-9][0-9]*$ ]] || fail "--timeout '$timeout' is not a positive number of seconds" "$usage"
[ "$(id -u)" = 0 ] || fail "perf's shell tests probe, trace and count system-wide" "run as root"
suite=/usr/lib/perf-core/tests/shell
[ -d "$suite" ] || fail "$suite not found" "apt-get install linux-perf"
command -v perf >/dev/null || fail "perf not found" "apt-get install linux-perf"
command -v unshare >/dev/null || fail "unshare not found" "apt-get install util-linux"
[[ $build == /* ]] || build=$PWD/$build
vperf=$build/vperf
[ -x "$vperf" ] || fail "$vperf not built" "cmake --build $build --target vperf"
# Each run gets a /tmp of its own: a vperf under /tmp would be hidden, and `perf` on PATH would
# silently be the real one.
[[ $(realpath "$vperf") != /tmp/* ]] || fail "$vperf is under /tmp, which each test run replaces with its own" "copy it elsewhere, e.g. --build /work/frozen"

tests=()
if [ -n "$only" ]; then
  IFS=',' read -r -a tests <<<"$only"
  for t in "${tests[@]}"; do [ -f "$suite/$t.sh" ] || fail "no test '$t' in $suite" "ls $suite"; done
else
  for f in "$suite"/*.sh; do tests+=("$(basename "$f" .sh)"); done
fi
[ -n "$logs" ] || logs=$(mktemp -d /tmp/perf-shell-tests.XXXXXX)
mkdir -p "$logs"
# vperf as `perf`: a directory of its own in front of PATH (not under /tmp, which each run
# replaces with its own).
shim=$(mktemp -d "$build/perf-shell-shim.XXXXXX")
trap 'rm -rf "$shim"' EXIT
ln -s "$vperf" "$shim/perf"

tracefs=""
for dir in /sys/kernel/tracing /sys/kernel/debug/tracing; do
  if [ -e "$dir/uprobe_events" ] || [ -e "$dir/kprobe_events" ]; then tracefs=$dir; break; fi
done

# The tracefs state a test could leave behind, one line per fact.
tracefs_state() {
  [ -n "$tracefs" ] || return 0
  local f
  for f in kprobe_events uprobe_events dynamic_events set_event current_tracer tracing_on; do
    [ -r "$tracefs/$f" ] && sed "s|^|$f: |" "$tracefs/$f" 2>/dev/null
  done
  [ -d "$tracefs/instances" ] && find "$tracefs/instances" -mindepth 1 -maxdepth 1 -printf 'instance: %f\n'
  return 0
}

# Puts back what a test left: its probe events, instances and enabled events.
restore_tracefs() {
  [ -n "$tracefs" ] || return 0
  echo 0 > "$tracefs/tracing_on" 2>/dev/null || true
  echo > "$tracefs/set_event" 2>/dev/null || true
  echo nop > "$tracefs/current_tracer" 2>/dev/null || true
  echo > "$tracefs/kprobe_events" 2>/dev/null || true
  echo > "$tracefs/uprobe_events" 2>/dev/null || true
  local d
  for d in "$tracefs"/instances/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
  echo 1 > "$tracefs/tracing_on" 2>/dev/null || true
}

# run_one TOOL TEST: the verdict (pass, skip, fail, fail:timeout, fail:tracefs) on stdout.
run_one() {
  local tool=$1 test=$2 log="$logs/$2.$1.log" path=$PATH before after status
  [ "$tool" = vperf ] && path=$shim:$PATH
  before=$(tracefs_state)
  set +e
  # A private /tmp and HOME in a private mount namespace; the test's processes are killed
  # with it at the timeout (timeout signals the whole unshare'd tree through its group).
  timeout --kill-after=10 "$timeout" unshare --mount --propagation private \
    env PATH="$path" TEST_SCRIPT="$suite/$test.sh" EXPECT_VPERF="$([ "$tool" = vperf ] && echo 1)" bash -c '
      mount -t tmpfs -o mode=1777 perf-shell-tmp /tmp || exit 97
      if [ -n "$EXPECT_VPERF" ] && ! perf --version 2>/dev/null | grep -q "^vperf"; then
        echo "perf on PATH is not vperf inside the test namespace"; exit 98
      fi
      export HOME=/tmp/home TMPDIR=/tmp
      mkdir -p "$HOME"
      cd /tmp
      exec bash "$TEST_SCRIPT"' >"$log" 2>&1 </dev/null
  status=$?
  set -e
  after=$(tracefs_state)
  if [ "$before" != "$after" ]; then
    { echo "--- tracefs before"; echo "$before"; echo "--- tracefs after"; echo "$after"; } >>"$log"
    restore_tracefs
    echo fail:tracefs
    return
  fi
  case $status in
    0) echo pass ;;
    2) echo skip ;;
    124|137) echo fail:timeout ;;
    97) echo fail:no-tmpfs ;;
    *) echo "fail:$status" ;;
  esac
}

printf '%-34s %-14s %-14s %s\n' test perf vperf note
mismatch=0
for test in "${tests[@]}"; do
  perf_verdict=-
  [ "$vperf_only" = 1 ] || perf_verdict=$(run_one perf "$test")
  vperf_verdict=$(run_one vperf "$test")
  note=""
  if [ "$perf_verdict" != - ] && [ "${perf_verdict%%:*}" != "${vperf_verdict%%:*}" ]; then
    case ${perf_verdict%%:*} in
      pass|skip) note="differs (logs: $logs/$test.*.log)"; mismatch=1 ;;
      *) note="perf fails it here" ;;
    esac
  fi
  printf '%-34s %-14s %-14s %s\n' "$test" "$perf_verdict" "$vperf_verdict" "$note"
done
echo "logs: $logs"
exit "$mismatch"
