#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) in build-fuzz/ and runs each for
# SECONDS seconds (default 20) from its seeds. A crash leaves crash-* in build-fuzz/ and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DVPERF_BUILD_FUZZERS=ON -DVPERF_BUILD_TESTS=OFF >/dev/null
testdata=$(cd .. && pwd)/shared/testdata
declare -A seeds=(
  [event_parser_fuzz]="$PWD/tests/fuzz/corpus/event_parser"
  [perfmon_json_fuzz]="$testdata/perfmon/IVB/events $testdata/perfmon/SPR/events"
  [cpuid_dump_fuzz]="$testdata/cpuid"
  [perf_data_fuzz]="$PWD/tests/fuzz/corpus/perf_data"
  [perf_data_pipe_fuzz]="$PWD/tests/fuzz/corpus/perf_data_pipe $PWD/tests/fuzz/corpus/perf_data"
)
for target in "${!seeds[@]}"; do
  cmake --build build-fuzz --target "$target"
  work=$(mktemp -d)
  # The first directory is the writable working corpus; the seeds are read-only inputs.
  (cd build-fuzz && tests/fuzz/"$target" -max_total_time="$seconds" -max_len=65536 -print_final_stats=0 \
      "$work" ${seeds[$target]} 2>&1 | tail -n 2)
  rm -rf "$work"
  echo "fuzz: $target ran ${seconds}s without a crash"
done
