#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) in build-fuzz/ and runs each for
# SECONDS seconds (default 10: with a dozen targets the whole step stays near 2 minutes) from
# its seeds, with the flags of scripts/fuzz-targets.sh (5-s timeout, 1-GiB memory limit). A
# crash, timeout or OOM leaves its input as build-fuzz/crash-*, timeout-* or oom-* and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/fuzz-targets.sh
source scripts/fuzz-targets.sh
seconds=${1:-10}
fuzz_build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for target in $(fuzz_targets); do
  mkdir "$work/$target"
  # The first directory is the writable working corpus; the seeds are read-only inputs.
  seeds=$(fuzz_seeds "$target")  # from the top directory: the run below is in build-fuzz/
  # shellcheck disable=SC2086
  (cd build-fuzz && tests/fuzz/"$target" "${fuzz_flags[@]}" -max_total_time="$seconds" -print_final_stats=0 \
      "$work/$target" $seeds 2>&1 | tail -n 2)
  echo "fuzz: $target ran ${seconds}s without a crash, timeout or OOM"
done
