#!/usr/bin/env bash
# How far fuzzing gets: builds the libFuzzer targets (scripts/fuzz-targets.sh: clang, ASan +
# UBSan, in build-fuzz/) and runs every target for SECONDS from its seeds with the flags
# scripts/fuzz.sh uses (5-s timeout, 1-GiB memory limit), then prints one row per target:
# inputs executed, executions per second, coverage (libFuzzer's cov: edges and ft: features
# at the end), the corpus it ended with, and findings (crash, timeout, OOM). A finding stops
# that target's run; its input is kept under bench-fuzz/ and the script exits 1 at the end.
#
#   bench/fuzz.sh [SECONDS]       SECONDS per target, default 300
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/fuzz-targets.sh
source scripts/fuzz-targets.sh
seconds=${1:-300}
fuzz_build >/dev/null
findings_dir=$PWD/bench-fuzz
rm -rf "$findings_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-22s %12s %9s %7s %7s %7s  %s\n' "target" "executions" "exec/s" "cov" "ft" "corpus" "findings"
status=0
for target in $(fuzz_targets); do
  mkdir -p "$work/$target" "$findings_dir/$target"
  log=$work/$target.log
  seeds=$(fuzz_seeds "$target")  # from the top directory: the run below is in build-fuzz/
  # shellcheck disable=SC2086
  (cd build-fuzz && tests/fuzz/"$target" "${fuzz_flags[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$findings_dir/$target/" "$work/$target" $seeds) >"$log" 2>&1 || true
  findings=$(find "$findings_dir/$target" -type f -printf '%f ' | sed 's/ $//')
  rmdir "$findings_dir/$target" 2>/dev/null || { status=1; cp "$log" "$findings_dir/$target.log"; }
  awk -v t="$target" -v f="${findings:-none}" '
    /^stat::number_of_executed_units:/ { runs = $2 }
    /^stat::average_exec_per_sec:/     { rate = $2 }
    / cov: [0-9]+ ft: [0-9]+/ {
      for (i = 1; i < NF; i++) {
        if ($i == "cov:") cov = $(i + 1)
        if ($i == "ft:") ft = $(i + 1)
        if ($i == "corp:") { corp = $(i + 1); sub(/\/.*/, "", corp) }
      }
    }
    END { printf "%-22s %12s %9s %7s %7s %7s  %s\n", t, runs, rate, cov, ft, corp, f }' "$log"
done
rmdir "$findings_dir" 2>/dev/null || echo "findings kept in $findings_dir (inputs and logs)"
exit "$status"
