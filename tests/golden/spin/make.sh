#!/bin/sh
# Remakes this golden case (see PROVENANCE.md): builds vperf-workload statically from
# src/workloads, records it with Linux perf 6.1, and writes perf's own outputs as the expected
# ones. Run from anywhere, as root (perf record); it replaces the files of the case.
set -eu
case_dir=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$case_dir/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

perf --version | grep -q '^perf version 6\.1\.' || { echo "make.sh: error: needs Linux perf 6.1 (hint: apt-get install linux-perf)" >&2; exit 1; }

# Static, so no sample or frame lands in this machine's libc or ld.so.
# No -g: .symtab names every function, and without DWARF the build-id does not depend on where
# the source is.
(cd "$source_dir" && g++ -std=c++20 -O2 -fno-omit-frame-pointer -static -o "$work/vperf-workload" src/workloads/*.cpp)
build_id=$(readelf -n "$work/vperf-workload" | sed -n 's/.*Build ID: //p')
run_dir=/tmp/vperf-golden/$build_id
mkdir -p "$run_dir"
cp "$work/vperf-workload" "$run_dir/vperf-workload"

# cpu-clock:u keeps the kernel out; a recording with a sample in [vdso] (the spin reads the
# thread's CPU clock) is made again, as [vdso] symbols come from the reading machine's kernel.
record() {  # OUTPUT [perf record options]
  out=$1
  shift
  for _ in $(seq 50); do
    perf record -q -N -e cpu-clock:u -F 997 "$@" -o "$work/try.data" -- "$run_dir/vperf-workload" spin 100 2>/dev/null
    if ! perf report -i "$work/try.data" --stdio --sort dso 2>/dev/null | grep -q '\[vdso\]'; then
      cp "$work/try.data" "$case_dir/$out"
      return 0
    fi
  done
  echo "make.sh: error: every recording had a [vdso] sample" >&2
  exit 1
}
record spin.data
record spin-g.data -g

# The binary as the tests put it back at $run_dir: symbols and headers, code and data zeroed.
"$case_dir/../symbols_only.py" "$run_dir/vperf-workload" "$work/symbols"
gzip -9 -n -c "$work/symbols" > "$case_dir/vperf-workload.symbols.gz"
cp "$work/symbols" "$run_dir/vperf-workload"

cd "$case_dir"
grep -v '^#' cases.txt | while read -r expected command; do
  # shellcheck disable=SC2086 # the command's words
  perf $command > "$expected" 2>/dev/null
done
echo "$build_id" > build-id
