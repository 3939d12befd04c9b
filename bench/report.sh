#!/usr/bin/env bash
# vperf report against perf report on the same call-graph profile of >= 300,000 samples:
# `perf record -e cpu-clock -F 20000 -g` of two parallel `vperf-workload spin` (one per CPU of
# a 2-CPU machine), then `vperf report --stdio` and `perf report --stdio` (both with their
# default children + call graph) timed on that file. Prints the time ratio (vperf / perf; the
# target is <= 0.5).
#
#   bench/report.sh [BUILD_DIR] [RUNS]      BUILD_DIR default build, RUNS default 5
#
# Uses hyperfine when installed (median of RUNS), else bash's clock over RUNS runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/compare_pair.sh
source bench/compare_pair.sh
build=${1:-build}
runs=${2:-5}
vperf=$build/vperf
workload=$build/src/workloads/vperf-workload
for built in "$vperf" "$workload"; do
  [ -x "$built" ] || { echo "vperf: error: $built not built (hint: ninja -C $build vperf vperf-workload)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "vperf: error: perf not found (hint: apt-get install linux-perf)" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
data=$out/big.data
# 2 x 8 s of CPU at 20 kHz: about 320,000 samples, each with its call chain.
perf record -q -e cpu-clock -F 20000 -g -o "$data" -- sh -c "$workload spin 8000 & $workload spin 8000; wait" 2>/dev/null

samples=$(perf script -i "$data" -F period 2>/dev/null | wc -l)
echo "profile: $samples samples ($(du -h "$data" | cut -f1))"
[ "$samples" -ge 300000 ] || echo "warning: fewer than 300,000 samples (a busy machine?)" >&2

mine="$vperf report --stdio -i $data"
theirs="perf report --stdio -i $data"
# The same entries from both, as a sanity check of what is being timed.
echo "entries: vperf $($mine 2>/dev/null | grep -c '^ .*%  ') perf $($theirs 2>/dev/null | grep -c '^ .*%  ')"

compare_pair "report --stdio, children + graph" median 1 "$runs" "$mine" "$theirs"
