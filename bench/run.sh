#!/usr/bin/env bash
# vperf's benchmarks: each pairs a vperf command with the tool it replaces, doing the same job
# on the same machine in the same run, and reports the time ratio (vperf / reference; below 1
# means vperf is faster). Uses hyperfine (installed if missing) and build/vperf.
#
#   bench/run.sh [RUNS]        RUNS per command, default 20
#
# "stat 1 s workload vs bare" is vperf's overhead on a CPU-bound second (spin counts CPU time).
# Later issues add record/report/flame-graph pairs (perf, and the FlameGraph scripts found
# through $FLAMEGRAPH_DIR).
# bench/speed.sh: report, flamegraph, script and startup at 10k-1M samples, shallow and deep stacks.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
vperf=build/vperf
workload=build/src/workloads/vperf-workload
for built in "$vperf" "$workload"; do
  [ -x "$built" ] || { echo "vperf: error: $built not built (hint: run scripts/build.sh)" >&2; exit 1; }
done
command -v hyperfine >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q hyperfine >/dev/null
command -v perf >/dev/null || { echo "vperf: error: perf not found (hint: apt-get install linux-perf)" >&2; exit 1; }
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" -eq 0 ]; then mount -t tracefs nodev /sys/kernel/tracing || true; fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# name | vperf command | reference command
pairs=(
  "list all events|$vperf list|perf list"
  "list tracepoints sched:*|$vperf list 'sched:*'|perf list 'sched:*'"
  "list tracepoints syscalls:*|$vperf list 'syscalls:*'|perf list 'syscalls:*'"
  "list software events|$vperf list sw|perf list sw"
  "stat -e task-clock -- true|$vperf stat -e task-clock -- true|perf stat -e task-clock -- true"
  "stat default set -- true|$vperf stat -- true|perf stat -- true"
  "stat 1 s workload vs perf|$vperf stat -e task-clock -- $workload spin 1000|perf stat -e task-clock -- $workload spin 1000"
  "stat 1 s workload vs bare|$vperf stat -e task-clock -- $workload spin 1000|$workload spin 1000"
  "record -F 20000 -g, 1 s workload|$vperf record -q -F 20000 -g -e cpu-clock -o $out/v.data -- $workload spin 1000|perf record -q -F 20000 -g -e cpu-clock -o $out/p.data -- $workload spin 1000"
)
# Flame graphs need a call-graph profile of >= 300,000 samples and the FlameGraph scripts
# ($FLAMEGRAPH_DIR, never committed): vperf flamegraph against the Perl pipeline on one file.
if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -x "$FLAMEGRAPH_DIR/flamegraph.pl" ]; then
  big=$out/big.data
  "$vperf" record -q -F 20000 -g -e cpu-clock -o "$big" -- "$workload" spin 16000
  pairs+=("flamegraph of $(perf script -i "$big" 2>/dev/null | grep -c cpu-clock) samples|$vperf flamegraph -i $big -o $out/v.svg|sh -c 'perf script -i $big 2>/dev/null | $FLAMEGRAPH_DIR/stackcollapse-perf.pl --kernel | $FLAMEGRAPH_DIR/flamegraph.pl --colors=java > $out/p.svg'")
else
  echo "(flame graph benchmark skipped: set FLAMEGRAPH_DIR to a FlameGraph checkout)"
fi

# What a perf.data lost: the kernel's LOST records ("chunks") and the samples they dropped, and
# the LOST_SAMPLES total perf 6.1 adds at the end from read_format LOST (the same drops, counted
# by the kernel per event; vperf's attrs do not ask for it).
lost_in() {
  perf report -D -i "$1" 2>/dev/null | awk '
    /PERF_RECORD_LOST: /         { n++; sub(/.*lost:/, ""); s += $1 }
    /PERF_RECORD_LOST_SAMPLES: / { sub(/.*lost samples :/, ""); ls += $1 }
    END { printf "%d chunks, %d samples (LOST_SAMPLES %d)", n, s, ls }'
}

printf '%-32s %12s %12s %8s\n' "benchmark" "vperf ms" "reference ms" "ratio"
for pair in "${pairs[@]}"; do
  IFS='|' read -r name mine theirs <<<"$pair"
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$out/r.json" "$mine" "$theirs" >/dev/null 2>&1 || \
    hyperfine --warmup 3 --runs "$runs" --export-json "$out/r.json" "$mine" "$theirs" >/dev/null
  python3 - "$out/r.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
a, b = r[0]["mean"] * 1000, r[1]["mean"] * 1000
print(f"{sys.argv[2]:<32} {a:12.2f} {b:12.2f} {a / b:8.2f}")
PY
  if [[ $name == record* ]]; then
    # The files of the last run of each: samples lost at this rate, vperf's against perf's.
    echo "  lost: vperf $(lost_in "$out/v.data"); perf $(lost_in "$out/p.data")"
  fi
done
bench/report.sh build 5  # vperf report vs perf report on a >= 300,000-sample call-graph profile
