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

printf '%-32s %12s %12s %8s\n' "benchmark" "vperf ms" "reference ms" "ratio"
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 1 --runs "$runs" --output=null --export-json "$out/r.json" "$mine" "$theirs" >/dev/null 2>&1 ||
    hyperfine --warmup 1 --runs "$runs" --output=null --export-json "$out/r.json" "$mine" "$theirs" >/dev/null
  python3 - "$out/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
a, b = r[0]["median"] * 1000, r[1]["median"] * 1000
print(f"{'report --stdio, children + graph':<32} {a:12.2f} {b:12.2f} {a / b:8.3f}")
PY
else
  median_ms() {
    local times=() start end
    for ((i = 0; i < runs; i++)); do
      start=$(date +%s%N)
      "$@" >/dev/null 2>&1
      end=$(date +%s%N)
      times+=($(((end - start) / 1000000)))
    done
    printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p"
  }
  a=$(median_ms $mine)
  b=$(median_ms $theirs)
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%-32s %12.2f %12.2f %8.3f\n", "report --stdio, children + graph", a, b, a / b }'
fi
