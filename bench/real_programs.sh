#!/usr/bin/env bash
# vperf against perf and trace-cmd on profiles of programs nobody here wrote (issue 31): the
# bundled workloads have clean, narrow stacks; real programs have junk frames (libraries built
# without frame pointers), wide fan-out, many processes and DSOs, JIT maps, DWARF stacks and
# tracepoints. Every row times a vperf command and its peer reading the same file, in turns
# (bench/interleave.py: one warm-up each, then A B A B ...; a busy machine slows both alike), and
# prints CPU time (user + sys of the command and the processes it waited for), the ratios
# vperf / peer of the medians and of the minimums, CPU and wall (below 1: vperf is faster), the
# peak RSS of each in MB (the largest ru_maxrss over its runs; for a pipeline, its largest
# member; "<=15" means no higher than interleave.py's own size, which Linux counts into a child's
# peak, so no ratio) and their ratio, and the CPU cost per sample of each in microseconds,
# median CPU / samples in the file: the same row at small, medium and large shows whether that
# cost stays flat as the profile grows (the issue's goal: large within 1.5x of small).
#
# Profiles, recorded once per run into a temporary directory by perf 6.1 (cpu-clock: there is
# no hardware PMU in these guests), at three sizes, small / medium / large = about 30k / 300k /
# 1.4M samples (the actual count of each file, from perf report --stats, is printed):
#   xz           perf record -e cpu-clock -F 20000 -g -- xz -9e -T1 on a tar of system files
#                (/usr/share/doc, man, perl, /usr/lib/python3; 3, 30 and 140 MB of it), ended
#                after 1.5, 15 and 70 s if it has not finished by then; liblzma
#                has no frame pointers, so frame-pointer walks pick up junk return addresses
#   python       the same of /usr/bin/python3 bench/real_programs/busy.py (a CPU-bound
#                pure-Python script: 1.5, 15 and 70 s of CPU time)
#   system       perf record -a -g -F 20000 for 0.75, 7.5 and 35 s (2 CPUs, idle included)
#                while xz, python3, gzip, sort and shell loops spawning short processes run:
#                many processes and DSOs
#   node         perf record -g of node --perf-basic-prof bench/real_programs/busy.js (V8
#                writes /tmp/perf-PID.map, removed at exit); 1.5, 15 and 70 s of CPU time
#   dwarf        perf record --call-graph dwarf -F 4000 of the python script, about 10k and 40k
#                samples at small and medium (8 KB of stack each; no large: 1.4M would be 11 GB)
#   debuginfo    the same of python3.11d, Debian's interpreter built with its DWARF (package
#                python3.11-dbg, -Og): every unwound frame expands into its inline chain, read
#                from DWARF (perf asks binutils' addr2line); skipped without the package
#   tracepoint   perf record -g -e sched:sched_switch -e syscalls:sys_enter_read
#                -e syscalls:sys_exit_read -e syscalls:sys_enter_write of dd bs=1 | dd bs=1
#                (one-byte reads and writes through a pipe: about 6 events a byte)
#   ftrace       a trace.dat of 30k, 300k and 1.4M sys_enter_getppid events
#                (vperf ftrace record -- vperf-workload getppid N)
#
# Rows, for each profile and size (vperf's command first, then its peer):
#   report --children    report --stdio --children -i F, the same arguments to both; not for
#                        python at large: perf holds 9 GB (and 50-100 s) for the 300k-sample file's
#                        deep recursive stacks, and 1.4M samples would not fit in 23 GB
#   report --no-children report --stdio --no-children -i F
#   report comm,dso      report --stdio --no-children --sort comm,dso -i F
#   script               script -i F
#   flamegraph           vperf flamegraph -i F -o F.svg vs perf script -i F |
#                        stackcollapse-perf.pl --kernel | flamegraph.pl --colors=java; small and
#                        medium only (the Perl pipeline is slow): small as the other rows,
#                        medium min(2, --runs) runs without warm-up
#   dwarf, debuginfo rows  report --stdio --no-children and script only
#   ftrace report        vperf ftrace report -i F vs trace-cmd report F
# A row whose command fails prints the error in place of numbers; a profile that cannot be
# recorded here prints a skip line with the reason and has no rows.
#
#   bench/real_programs.sh [--runs N] [--quick] [--sizes LIST] [--only LIST] [--build DIR] [--base DIR]
#
#   --runs N      measured runs of each command, default 5 (3 with --quick)
#   --quick       small size only, 3 runs: a smoke check that everything records and runs
#   --sizes LIST  comma-separated out of small,medium,large (default all three)
#   --only LIST   comma-separated kinds out of xz,python,system,node,dwarf,debuginfo,tracepoint,ftrace
#                 (default all, in that order; given, in the order given: recording, then rows)
#   --build DIR   where vperf and src/workloads/vperf-workload are, default build
#   --base DIR    an earlier build's directory (its vperf): each row is measured for it too, on
#                 the same files in the same run, as a "(base)" row above vperf's, both against
#                 the peer: before and after a change (issue 31's table: the build before it)
#
# Needs root (system-wide recording, tracepoints, tracefs), perf, xz, gzip, node, trace-cmd and
# the FlameGraph scripts in $FLAMEGRAPH_DIR, default ../shared/tools/FlameGraph beside the
# repository. Recording every kind at every size took 7 minutes of a busy 2-CPU machine and
# held 1.6 GB of profiles under mktemp -d (removed on exit); --sizes small,medium records in
# 1.5 minutes (620 MB) and its rows take 10 at --runs 3; the large rows take far longer, as a
# slow reader spends a minute or more a run there; --quick takes 1.5 minutes in all.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "vperf: error: $1 (hint: $2)" >&2; exit 1; }
usage="bench/real_programs.sh [--runs N] [--quick] [--sizes LIST] [--only LIST] [--build DIR] [--base DIR]"
all_kinds="xz,python,system,node,dwarf,debuginfo,tracepoint,ftrace"

runs="" quick=0 sizes="small,medium,large" only=$all_kinds build=build base=""
while [ $# -gt 0 ]; do
  case $1 in
    --runs) [ $# -ge 2 ] || fail "--runs needs a number" "bench/real_programs.sh --runs 5"; runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    --quick) quick=1; shift ;;
    --sizes) [ $# -ge 2 ] || fail "--sizes needs a list" "bench/real_programs.sh --sizes small,medium"; sizes=$2; shift 2 ;;
    --sizes=*) sizes=${1#--sizes=}; shift ;;
    --only) [ $# -ge 2 ] || fail "--only needs a list" "bench/real_programs.sh --only xz,python"; only=$2; shift 2 ;;
    --only=*) only=${1#--only=}; shift ;;
    --build) [ $# -ge 2 ] || fail "--build needs a directory" "bench/real_programs.sh --build build"; build=$2; shift 2 ;;
    --build=*) build=${1#--build=}; shift ;;
    --base) [ $# -ge 2 ] || fail "--base needs a directory" "bench/real_programs.sh --base ../vperf-before/build"; base=$2; shift 2 ;;
    --base=*) base=${1#--base=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown option '$1'" "$usage" ;;
  esac
done
if [ "$quick" = 1 ]; then
  sizes=small
  runs=${runs:-3}
fi
runs=${runs:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || fail "--runs '$runs' is not a positive number" "bench/real_programs.sh --runs 5"
flame_runs=$((runs < 2 ? runs : 2))

IFS=',' read -r -a size_list <<<"$sizes"
[ ${#size_list[@]} -gt 0 ] || fail "--sizes is empty" "bench/real_programs.sh --sizes small,medium"
for size in "${size_list[@]}"; do
  [[ $size =~ ^(small|medium|large)$ ]] || fail "unknown size '$size'" "--sizes takes a comma-separated list out of small,medium,large"
done
IFS=',' read -r -a kind_list <<<"$only"
[ ${#kind_list[@]} -gt 0 ] || fail "--only is empty" "bench/real_programs.sh --only xz,python"
for kind in "${kind_list[@]}"; do
  [[ ,$all_kinds, == *",$kind,"* ]] || fail "unknown kind '$kind'" "--only takes a comma-separated list out of $all_kinds"
done

[[ $build == /* ]] || build=$PWD/$build
vperf=$build/vperf
workload=$build/src/workloads/vperf-workload
for built in "$vperf" "$workload"; do
  [ -x "$built" ] || fail "$built not built" "cmake --build $build --target vperf vperf-workload"
done
base_vperf=""
if [ -n "$base" ]; then
  [[ $base == /* ]] || base=$PWD/$base
  base_vperf=$base/vperf
  [ -x "$base_vperf" ] || fail "$base_vperf not built" "cmake --build $base --target vperf"
fi
[ "$(id -u)" = 0 ] || fail "system-wide recording and tracepoints need root" "sudo bench/real_programs.sh"
for tool in perf xz gzip sort dd python3; do
  command -v "$tool" >/dev/null || fail "$tool not found" "apt-get install the package that has $tool"
done
python=/usr/bin/python3  # Debian's interpreter, the one its packages' symbols describe
[ -x "$python" ] || fail "$python not found" "apt-get install python3"
flamegraph_dir=${FLAMEGRAPH_DIR:-$(cd .. && pwd)/shared/tools/FlameGraph}
[[ -f $flamegraph_dir/flamegraph.pl && -f $flamegraph_dir/stackcollapse-perf.pl ]] ||
  fail "$flamegraph_dir does not hold flamegraph.pl and stackcollapse-perf.pl" \
    "clone github.com/brendangregg/FlameGraph outside the repository and export FLAMEGRAPH_DIR"

out=$(mktemp -d)
background_groups=()  # process groups of the system-wide recording's programs
node_pid_files=()     # where each node run wrote its pid: its /tmp/perf-PID.map goes at exit
cleanup() {
  local group pid_file
  for group in "${background_groups[@]}"; do kill -- "-$group" 2>/dev/null || true; done
  for pid_file in "${node_pid_files[@]}"; do
    [ ! -s "$pid_file" ] || rm -f "/tmp/perf-$(cat "$pid_file").map"
  done
  rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$SECONDS

# Samples in a perf.data file: perf's own count of its SAMPLE records, without resolving symbols.
sample_count() { perf report --stats -i "$1" 2>/dev/null | awk '/^ *SAMPLE events:/ { print $3; exit }'; }
samples_of() {  # the target sample count of a size
  case $1 in small) echo 30000 ;; medium) echo 300000 ;; large) echo 1400000 ;; esac
}
# CPU seconds for a single process sampled at 20 kHz to reach a size (1.5, 15, 70).
seconds_of() { python3 -c "print($(samples_of "$1") / 20000)"; }
skip() { printf '  %-10s %-6s skipped: %s\n' "$1" "$2" "$3"; }

# perf record, quiet, into FILE; a failure is reported by the caller as a skip line.
# -N: no build-id cache, so that recording leaves nothing in ~/.debug and both readers find
# the DSOs on disk by path.
perf_record() {  # perf_record FILE PERF-RECORD-ARGS...
  local file=$1
  shift
  perf record -q -N -o "$file" "$@" 2>"$out/record.err" >/dev/null
}
why() { grep -v '^$' "$out/record.err" | tail -n 1 || echo "no message"; }

declare -A samples=()  # "kind size" -> samples in its file (events for ftrace)
recorded() {  # recorded KIND SIZE FILE: prints its line and remembers its count
  samples["$1 $2"]=$3
  printf '  %-10s %-6s %9s samples (%s)\n' "$1" "$2" "$3" "$(du -h "$4" | cut -f1)"
}

# The tar xz compresses: system files, as many bytes as the largest size needs.
# About 10k samples a MB at 20 kHz on a busy 2-CPU machine (xz -9e is bound by memory: it takes
# more CPU time a MB when other programs share the caches; 15k were seen on a quieter one).
xz_bytes_of() {
  case $1 in small) echo 3000000 ;; medium) echo 30000000 ;; large) echo 140000000 ;; esac
}
tar_for_xz() {  # the system-wide recording's programs read 20 MB of it
  local largest=20000000 size bytes
  for size in "${size_list[@]}"; do
    bytes=$(xz_bytes_of "$size")
    [ "$bytes" -le "$largest" ] || largest=$bytes
  done
  tar -cf - -C / usr/share/doc usr/share/man usr/share/perl usr/lib/python3 2>/dev/null | head -c "$largest" > "$out/system-files.tar" || true
}

# xz's CPU time a MB varies fivefold between machines (10k to 57k samples a MB were seen), so
# the recording is also bounded in time, as python's is: timeout ends xz after the size's
# seconds (perf record then exits with timeout's 124, which is the expected end here).
record_xz() {  # record_xz SIZE FILE
  head -c "$(xz_bytes_of "$1")" "$out/system-files.tar" > "$out/xz-input"
  local status=0
  perf_record "$2" -e cpu-clock -F 20000 -g -- timeout "$(seconds_of "$1")" xz -9e -T1 -c "$out/xz-input" || status=$?
  [ "$status" -eq 0 ] || [ "$status" -eq 124 ]
}
record_python() {
  perf_record "$2" -e cpu-clock -F 20000 -g -- "$python" bench/real_programs/busy.py "$(seconds_of "$1")"
}
record_node() {
  local pid_file=$out/node-$1.pid
  node_pid_files+=("$pid_file")
  # In $out: V8 writes an isolate-*-v8.log into its working directory under --perf-basic-prof.
  # shellcheck disable=SC2016 # $$ and $1 to $4 are the inner shell's
  perf_record "$2" -e cpu-clock -F 20000 -g -- \
    sh -c 'echo $$ > "$1"; cd "$3" && exec node --perf-basic-prof "$2" "$4"' sh "$pid_file" "$PWD/bench/real_programs/busy.js" "$out" "$(seconds_of "$1")"
}
record_dwarf() {  # 10k / 40k samples: 4 kHz for 2.5 / 10 s of CPU time
  local seconds
  case $1 in small) seconds=2.5 ;; medium) seconds=10 ;; esac
  perf_record "$2" -e cpu-clock -F 4000 --call-graph dwarf -m 16M -- "$python" bench/real_programs/busy.py "$seconds"
}
debug_python=/usr/bin/python3.11d  # python3.11-dbg's interpreter, with its DWARF
record_debuginfo() {  # as record_dwarf: 10k / 40k samples
  local seconds
  case $1 in small) seconds=2.5 ;; medium) seconds=10 ;; esac
  perf_record "$2" -e cpu-clock -F 4000 --call-graph dwarf -m 16M -- "$debug_python" bench/real_programs/busy.py "$seconds"
}
record_tracepoint() {  # about 6 events a byte through the pipe
  local bytes=$(($(samples_of "$1") / 6))
  perf_record "$2" -g -m 16M -e sched:sched_switch -e syscalls:sys_enter_read -e syscalls:sys_exit_read \
    -e syscalls:sys_enter_write -- sh -c "dd if=/dev/zero bs=1 count=$bytes status=none | dd of=/dev/null bs=1 status=none"
}
# Programs of every sort, each in its own process group (killed by its id afterwards), while
# perf records both CPUs: 2 CPUs x 20 kHz x seconds = samples, idle time included.
record_system() {
  local seconds group
  seconds=$(python3 -c "print($(samples_of "$1") / 40000)")
  head -c 20000000 "$out/system-files.tar" > "$out/system-input"
  background_groups=()
  for program in \
    "while :; do xz -9e -T1 -c $out/system-input > /dev/null; done" \
    "while :; do $python bench/real_programs/busy.py 5 > /dev/null; done" \
    "while :; do gzip -9 -c $out/system-input > /dev/null; done" \
    "while :; do sort -S 64M $out/system-input > /dev/null 2>&1; done" \
    "while :; do for i in 1 2 3 4 5 6 7 8; do expr \$i + 1 > /dev/null; cat /proc/loadavg > /dev/null; ls /usr/bin > /dev/null; done; done"; do
    setsid sh -c "$program" </dev/null >/dev/null 2>&1 &
    background_groups+=($!)
  done
  perf_record "$2" -e cpu-clock -F 20000 -a -g -- sleep "$seconds"
  local status=$?
  for group in "${background_groups[@]}"; do kill -- "-$group" 2>/dev/null || true; done
  for group in "${background_groups[@]}"; do wait "$group" 2>/dev/null || true; done
  background_groups=()
  return $status
}
# A trace.dat of N sys_enter_getppid events, buffers large enough that none is lost.
record_ftrace() {
  local events kb output
  events=$(samples_of "$1")
  kb=$(((events * 16 / 1024) * 3 / 2 + 1024))
  output=$("$vperf" ftrace record -e syscalls:sys_enter_getppid -b "$kb" -o "$2" -- "$workload" getppid "$events" 2>&1 >/dev/null) ||
    { echo "$output" > "$out/record.err"; return 1; }
  if grep -q ' [1-9][0-9]* events lost' <<<"$output"; then echo "$output" > "$out/record.err"; return 1; fi
}
# Events in a trace.dat, as trace-cmd reads it (which also checks that trace-cmd can).
ftrace_count() { trace-cmd report "$1" 2>/dev/null | grep -c 'sys_enter_getppid' || true; }

echo "recording (perf $(perf --version | awk '{print $3}'), into $out):"
record_started=$SECONDS
[[ ,$only, != *,xz,* && ,$only, != *,system,* ]] || tar_for_xz
for kind in "${kind_list[@]}"; do
  for size in "${size_list[@]}"; do
    file=$out/$kind-$size.data
    if [[ $kind == dwarf || $kind == debuginfo ]] && [ "$size" = large ]; then
      skip "$kind" "$size" "DWARF stacks are 8 KB a sample: 1.4M samples would be 11 GB (small and medium are 10k and 40k)"
      continue
    fi
    if [ "$kind" = debuginfo ] && [ ! -x "$debug_python" ]; then
      skip "$kind" "$size" "$debug_python not found (apt-get install python3.11-dbg)"
      continue
    fi
    if [ "$kind" = node ] && ! command -v node >/dev/null; then skip "$kind" "$size" "node not found"; continue; fi
    if [ "$kind" = ftrace ] && ! command -v trace-cmd >/dev/null; then skip "$kind" "$size" "trace-cmd not found"; continue; fi
    if ! "record_$kind" "$size" "$file"; then
      skip "$kind" "$size" "recording failed: $(why)"
      rm -f "$file"
      continue
    fi
    if [ "$kind" = ftrace ]; then count=$(ftrace_count "$file"); else count=$(sample_count "$file"); fi
    if [ -z "$count" ] || [ "$count" -eq 0 ]; then
      skip "$kind" "$size" "the file holds no samples that the peer can read"
      rm -f "$file"
      continue
    fi
    recorded "$kind" "$size" "$count" "$file"
  done
done
rm -f "$out/system-files.tar" "$out/xz-input" "$out/system-input"
echo "recording took $((SECONDS - record_started)) s; profiles take $(du -sh "$out" | cut -f1)"
echo "timing: $runs runs of each command after one warm-up, in turns ($flame_runs without warm-up for medium flame graphs); cpu in ms"

# One row; a failing command prints its error in the row's place and the table goes on. With
# --base, the base build's row first (its vperf in place of this build's, same peer command).
row() {  # row RUNS WARMUP SAMPLES NAME VPERF-COMMAND PEER-COMMAND
  if [ -n "$base_vperf" ]; then
    measure "$1" "$2" "$3" "$4 (base)" "${5/#$vperf/$base_vperf}" "$6"
  fi
  measure "$@"
}
measure() {
  local line
  if ! line=$(python3 bench/interleave.py --runs "$1" --warmup "$2" --samples "$3" "$4" "$5" "$6" 2>&1); then
    line=$(printf '%-40s failed: %s' "$4" "$(tail -n 1 <<<"$line")")
  fi
  echo "$line"
}
python3 bench/interleave.py --header
for kind in "${kind_list[@]}"; do
  for size in "${size_list[@]}"; do
    file=$out/$kind-$size.data
    [ -f "$file" ] || continue
    n=${samples["$kind $size"]}
    label="$kind $size"
    case $kind in
      ftrace)
        row "$runs" 1 "$n" "$label ftrace report" "$vperf ftrace report -i $file" "trace-cmd report $file" ;;
      dwarf|debuginfo)
        row "$runs" 1 "$n" "$label report --no-children" "$vperf report --stdio --no-children -i $file" "perf report --stdio --no-children -i $file"
        row "$runs" 1 "$n" "$label script" "$vperf script -i $file" "perf script -i $file" ;;
      *)
        if [ "$kind $size" = "python large" ]; then
          printf '%-40s skipped: perf report --children held 9 GB for 300k samples of these deep stacks; 1.4M would exceed the 23 GB here\n' "$label report --children"
        else
          row "$runs" 1 "$n" "$label report --children" "$vperf report --stdio --children -i $file" "perf report --stdio --children -i $file"
        fi
        row "$runs" 1 "$n" "$label report --no-children" "$vperf report --stdio --no-children -i $file" "perf report --stdio --no-children -i $file"
        row "$runs" 1 "$n" "$label report comm,dso" "$vperf report --stdio --no-children --sort comm,dso -i $file" \
          "perf report --stdio --no-children --sort comm,dso -i $file"
        row "$runs" 1 "$n" "$label script" "$vperf script -i $file" "perf script -i $file"
        if [ "$size" = small ]; then
          # About a second per Perl pipeline: as many runs as the other rows, after a warm-up.
          row "$runs" 1 "$n" "$label flamegraph" "$vperf flamegraph -i $file -o $out/v.svg" \
            "perf script -i $file 2>/dev/null | $flamegraph_dir/stackcollapse-perf.pl --kernel | $flamegraph_dir/flamegraph.pl --colors=java > $out/p.svg"
        elif [ "$size" = medium ]; then
          row "$flame_runs" 0 "$n" "$label flamegraph" "$vperf flamegraph -i $file -o $out/v.svg" \
            "perf script -i $file 2>/dev/null | $flamegraph_dir/stackcollapse-perf.pl --kernel | $flamegraph_dir/flamegraph.pl --colors=java > $out/p.svg"
        fi ;;
    esac
  done
done
echo "took $((SECONDS - started)) s"
