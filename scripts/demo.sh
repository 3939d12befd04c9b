#!/usr/bin/env bash
# Installs dependencies, builds vperf and runs its main job on this machine: what PMCs and
# tracing features it really exposes, and the events you can use here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# tracefs is where tracepoints are listed; mount it if this machine has not (as root).
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" -eq 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing || true
fi
# Intel's perfmon tables, where this checkout has them beside it, add the SDM names to decode.
perfmon=()
[ -f ../shared/testdata/perfmon/mapfile.csv ] && perfmon=(--perfmon ../shared/testdata/perfmon)
set -x
build/vperf check
build/vperf list sw
build/vperf list pmu
build/vperf list 'sched:sched_s*'
build/vperf encode --model skx INST_RETIRED.ANY_P MEM_LOAD_RETIRED.L3_MISS:pp
build/vperf decode --model ivb "${perfmon[@]}" r13c
