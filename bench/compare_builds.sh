#!/usr/bin/env bash
# Two vperf builds on the same perf.data files, interleaved run by run (A B A B ...), so that
# a busy machine slows both alike: report (children and no-children), flamegraph and script on
# a large and a small call-graph profile of the bundled workload. Prints the median and minimum
# of CPU time (user + sys) and wall time per command, and the ratio NEW / BASE (below 1: NEW is
# faster). For checking that a change to the reading side is no slower.
#
#   bench/compare_builds.sh BASE_VPERF NEW_VPERF [RUNS] [WORKLOAD]
#
# RUNS defaults to 7; WORKLOAD to build/src/workloads/vperf-workload. Needs perf to record.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1 new=$2 runs=${3:-7} workload=${4:-build/src/workloads/vperf-workload}
for built in "$base" "$new" "$workload"; do
  [ -x "$built" ] || { echo "vperf: error: $built is not an executable (hint: build it first)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "vperf: error: perf not found (hint: apt-get install linux-perf)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Large: 2 x 8 s at 20 kHz (about 320,000 samples, as bench/report.sh); small: 2 x 0.25 s.
perf record -q -e cpu-clock -F 20000 -g -o "$out/large.data" -- sh -c "$workload spin 8000 & $workload spin 8000; wait" 2>/dev/null
perf record -q -e cpu-clock -F 20000 -g -o "$out/small.data" -- sh -c "$workload spin 250 & $workload spin 250; wait" 2>/dev/null
python3 - "$base" "$new" "$runs" "$out" <<'PY'
import os, statistics, subprocess, sys, time
base, new, runs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
commands = {
    "report --children": ["report", "--stdio", "--children"],
    "report --no-children": ["report", "--stdio", "--no-children"],
    "flamegraph": ["flamegraph", "-o", "-"],
    "script": ["script"],
}
def run(argv):
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if status != 0: sys.exit(f"vperf: error: {' '.join(argv)} failed (hint: run it by hand)")
    return usage.ru_utime + usage.ru_stime, wall
print(f"{'profile':<6} {'command':<22} {'cpu med base/new ms':>21} {'ratio':>6} {'cpu min ratio':>13} {'wall med ratio':>14} {'wall min ratio':>14}")
for size in ("large", "small"):
    data = f"{out}/{size}.data"
    for name, args in commands.items():
        times = {base: [], new: []}
        for binary in (base, new):  # warm-up: page cache, symbol files
            run([binary, *args, "-i", data])
        for _ in range(runs):
            for binary in (base, new):
                times[binary].append(run([binary, *args, "-i", data]))
        cpu = {b: [t[0] for t in ts] for b, ts in times.items()}
        wall = {b: [t[1] for t in ts] for b, ts in times.items()}
        med = lambda v: statistics.median(v)
        print(f"{size:<6} {name:<22} {med(cpu[base])*1000:9.0f}/{med(cpu[new])*1000:<9.0f}"
              f"   {med(cpu[new])/med(cpu[base]):6.3f} {min(cpu[new])/min(cpu[base]):13.3f}"
              f" {med(wall[new])/med(wall[base]):14.3f} {min(wall[new])/min(wall[base]):14.3f}")
PY
