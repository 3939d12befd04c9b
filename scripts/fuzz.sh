#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) in build-fuzz/ and runs each for
# SECONDS seconds (default 10) from its seeds, with the flags of scripts/fuzz-targets.sh (5-s
# timeout, 1-GiB memory limit), as many at a time as there are CPUs (each target is one
# process on one CPU: 26 targets take 2 minutes on 2 CPUs, not 4). A crash, timeout or OOM leaves
# its input as build-fuzz/crash-*, timeout-* or oom-*, and fails the run once every target ran.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/fuzz-targets.sh
source scripts/fuzz-targets.sh
seconds=${1:-10}
fuzz_build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One target: its own working corpus (the first directory, writable; the seeds are read-only
# inputs) and its own log, printed whole when it ends so parallel runs do not interleave.
fuzz_one() {
  local target=$1 seeds status=0
  mkdir "$work/$target"
  seeds=$(fuzz_seeds "$target")  # from the top directory: the run below is in build-fuzz/
  # shellcheck disable=SC2086
  (cd build-fuzz && tests/fuzz/"$target" "${fuzz_flags[@]}" -max_total_time="$seconds" -print_final_stats=0 \
      "$work/$target" $seeds >"$work/$target.log" 2>&1) || status=$?
  tail -n 2 "$work/$target.log"
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $target FAILED (exit $status); its log:"
    grep -v '^#' "$work/$target.log" | tail -n 40
    return 1
  fi
  echo "fuzz: $target ran ${seconds}s without a crash, timeout or OOM"
}
export -f fuzz_one fuzz_seeds
export work seconds
export fuzz_flags_text="${fuzz_flags[*]}"
failed=0
# shellcheck disable=SC2016
fuzz_targets | xargs -P "$(nproc)" -I{} bash -c 'fuzz_flags=($fuzz_flags_text); fuzz_one "$1"' _ {} || failed=1
exit "$failed"
