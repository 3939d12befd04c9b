#!/usr/bin/env bash
# vperf's speed against the tool each command replaces, the benchmark matrix of issue 17, in one
# run: every row times a vperf command and its peer doing the same job on the same file, in
# turns (bench/interleave.py: one warm-up each, then A B A B ...; a busy machine slows both
# alike), and prints CPU time (user + sys of the command and the processes it waited for) and
# the ratios vperf / peer of the medians and of the minimums, CPU and wall (below 1: vperf is
# faster). The issue's targets: every report ratio <= 0.5, flame graph <= 1/20, startup < 1.0.
#
#   startup      `vperf --help` vs `perf --help` (perf's usage on stdout; with no command it
#                opens no man page); `vperf stat -e task-clock -- true` vs the same perf stat;
#                10 x RUNS runs, as they take milliseconds
#   report       `report --stdio --children` and `--no-children`, the same arguments to both,
#                at each size
#   flamegraph   `vperf flamegraph -i F -o F.svg` vs `perf script -i F | stackcollapse-perf.pl
#                --kernel | flamegraph.pl --colors=java > F.svg` at 300k and 1M samples;
#                --flame-runs runs (default 2) and no warm-up: the Perl pipeline takes about
#                3.5 CPU minutes per run on the 1M deep profile, 1.2 on the 1M shallow one, and
#                the files are warm from the report rows before them
#   script       `vperf script -i F` vs `perf script -i F` at 300k and 1M samples
#
# Each size is two profiles, recorded once per run of this script into a temporary directory:
# `perf record -q -e cpu-clock -F 20000 -g` of two `vperf-workload` processes in parallel (one
# per CPU of a 2-CPU machine, as bench/report.sh), `spin` (shallow stacks, ~8 frames) and
# `spin-deep` (~25 frames: the readers' cost per frame), each burning SIZE / 40 ms of CPU time
# (20 kHz x seconds x 2 processes = SIZE samples). The actual sample count of each file is
# printed: a busy machine loses few samples, but some.
#
#   bench/speed.sh [--runs N] [--flame-runs N] [--quick] [--sizes LIST] [--build DIR] [--real-programs]
#
#   --runs N      measured runs of each command, default 5 (a 1M-sample report takes seconds)
#   --flame-runs N  measured runs of each flame graph row, default 2 (at most --runs)
#   --quick       sizes 10k,100k and 3 runs: a fast check that everything runs
#   --sizes LIST  comma-separated sample counts out of 10k, 100k, 300k, 1M (default all four);
#                 flame graph and script rows are made for 300k and 1M only
#   --build DIR   where vperf and src/workloads/vperf-workload are, default build
#   --real-programs  then the same on profiles of real programs (bench/real_programs.sh, with
#                 the same --runs, --build and, with --quick, its --quick): the bundled
#                 workloads' stacks are clean and narrow, real programs' are not
#
# The FlameGraph scripts come from $FLAMEGRAPH_DIR, default ../shared/tools/FlameGraph beside the repository (never
# copied into the repository). A default run takes about 22 minutes on a 2-CPU machine, 13 of
# them in the flame graph rows (the Perl pipeline), and holds 450 MB of profiles under mktemp -d;
# --quick takes under a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "vperf: error: $1 (hint: $2)" >&2; exit 1; }

runs="" flame_runs=2 quick=0 sizes="10k,100k,300k,1M" build=build real_programs=0
while [ $# -gt 0 ]; do
  case $1 in
    --runs) [ $# -ge 2 ] || fail "--runs needs a number" "bench/speed.sh --runs 5"; runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    --flame-runs) [ $# -ge 2 ] || fail "--flame-runs needs a number" "bench/speed.sh --flame-runs 2"; flame_runs=$2; shift 2 ;;
    --flame-runs=*) flame_runs=${1#--flame-runs=}; shift ;;
    --quick) quick=1; shift ;;
    --sizes) [ $# -ge 2 ] || fail "--sizes needs a list" "bench/speed.sh --sizes 10k,300k"; sizes=$2; shift 2 ;;
    --sizes=*) sizes=${1#--sizes=}; shift ;;
    --build) [ $# -ge 2 ] || fail "--build needs a directory" "bench/speed.sh --build build"; build=$2; shift 2 ;;
    --build=*) build=${1#--build=}; shift ;;
    --real-programs) real_programs=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown option '$1'" "bench/speed.sh [--runs N] [--flame-runs N] [--quick] [--sizes LIST] [--build DIR] [--real-programs]" ;;
  esac
done
if [ "$quick" = 1 ]; then
  sizes="10k,100k"
  runs=${runs:-3}
fi
runs=${runs:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || fail "--runs '$runs' is not a positive number" "bench/speed.sh --runs 5"
[[ $flame_runs =~ ^[1-9][0-9]*$ ]] || fail "--flame-runs '$flame_runs' is not a positive number" "bench/speed.sh --flame-runs 2"
[ "$flame_runs" -le "$runs" ] || flame_runs=$runs

samples_of() {  # 10k -> 10000
  case $1 in
    10k) echo 10000 ;; 100k) echo 100000 ;; 300k) echo 300000 ;; 1M) echo 1000000 ;;
    *) fail "unknown size '$1'" "--sizes takes a comma-separated list out of 10k,100k,300k,1M" ;;
  esac
}
IFS=',' read -r -a size_list <<<"$sizes"
[ ${#size_list[@]} -gt 0 ] || fail "--sizes is empty" "bench/speed.sh --sizes 10k,100k"
for size in "${size_list[@]}"; do samples_of "$size" >/dev/null; done
big_sizes=()
for size in "${size_list[@]}"; do [[ $size == 300k || $size == 1M ]] && big_sizes+=("$size"); done

vperf=$build/vperf
workload=$build/src/workloads/vperf-workload
for built in "$vperf" "$workload"; do
  [ -x "$built" ] || fail "$built not built" "ninja -C $build vperf vperf-workload"
done
"$workload" spin-deep 0 2>/dev/null || fail "$workload has no spin-deep" "ninja -C $build vperf-workload"
command -v perf >/dev/null || fail "perf not found" "apt-get install linux-perf"
command -v python3 >/dev/null || fail "python3 not found" "apt-get install python3"
flamegraph_dir=${FLAMEGRAPH_DIR:-$(cd .. && pwd)/shared/tools/FlameGraph}
if [ ${#big_sizes[@]} -gt 0 ]; then
  [[ -f $flamegraph_dir/flamegraph.pl && -f $flamegraph_dir/stackcollapse-perf.pl ]] ||
    fail "$flamegraph_dir does not hold flamegraph.pl and stackcollapse-perf.pl" \
      "clone github.com/brendangregg/FlameGraph outside the repository and export FLAMEGRAPH_DIR"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
started=$SECONDS

# Two workloads in parallel, SIZE / 40 ms of CPU time each.
record() {  # record SIZE KIND(spin|spin-deep) FILE
  local ms=$(($(samples_of "$1") / 40))
  perf record -q -e cpu-clock -F 20000 -g -o "$3" -- \
    sh -c "$workload $2 $ms & $workload $2 $ms; wait" 2>"$out/record.err" ||
    fail "perf record of $2 failed: $(tail -n 1 "$out/record.err")" "run perf record -e cpu-clock -g -- true by hand"
}
# Samples in a file: perf's own count of its SAMPLE records, without resolving any symbol.
sample_count() {
  perf report --stats -i "$1" 2>/dev/null | awk '/^ *SAMPLE events:/ { print $3; exit }'
}

echo "profiles (perf record -e cpu-clock -F 20000 -g, 2 workloads in parallel):"
for size in "${size_list[@]}"; do
  for kind in spin spin-deep; do
    file=$out/$size-$kind.data
    record "$size" "$kind" "$file"
    printf '  %-5s %-10s %9s samples (%s)\n' "$size" "$kind" "$(sample_count "$file")" "$(du -h "$file" | cut -f1)"
  done
done
flame_note=""
[ ${#big_sizes[@]} -eq 0 ] || flame_note=", $flame_runs without warm-up for flame graphs"
echo "timing: $runs runs of each command after one warm-up, in turns ($((runs * 10)) for startup$flame_note); cpu in ms"

row() { python3 bench/interleave.py --runs "$1" "$2" "$3" "$4"; }
flame_row() { python3 bench/interleave.py --runs "$flame_runs" --warmup 0 "$1" "$2" "$3"; }
depth() { [ "$1" = spin ] && echo shallow || echo deep; }

python3 bench/interleave.py --header
row $((runs * 10)) "startup --help" "$vperf --help" "perf --help"
row $((runs * 10)) "startup stat -e task-clock -- true" "$vperf stat -e task-clock -- true" "perf stat -e task-clock -- true"
for size in "${size_list[@]}"; do
  for mode in --children --no-children; do
    for kind in spin spin-deep; do
      file=$out/$size-$kind.data
      row "$runs" "report $mode $size $(depth $kind)" \
        "$vperf report --stdio $mode -i $file" "perf report --stdio $mode -i $file"
    done
  done
done
for size in "${big_sizes[@]}"; do
  for kind in spin spin-deep; do
    file=$out/$size-$kind.data
    flame_row "flamegraph $size $(depth $kind)" "$vperf flamegraph -i $file -o $out/v.svg" \
      "perf script -i $file 2>/dev/null | $flamegraph_dir/stackcollapse-perf.pl --kernel | $flamegraph_dir/flamegraph.pl --colors=java > $out/p.svg"
  done
done
for size in "${big_sizes[@]}"; do
  for kind in spin spin-deep; do
    file=$out/$size-$kind.data
    row "$runs" "script $size $(depth $kind)" "$vperf script -i $file" "perf script -i $file"
  done
done
echo "took $((SECONDS - started)) s"
if [ "$real_programs" = 1 ]; then
  echo
  real_args=(--runs "$runs" --build "$build")
  [ "$quick" = 1 ] && real_args+=(--quick)
  bench/real_programs.sh "${real_args[@]}"
fi
