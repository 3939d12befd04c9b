#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds with warnings as errors, fuzzes each
# parser of outside input for a few seconds (FUZZ_SECONDS per target, default 10; 0 skips
# it), then runs every unit, integration and fuzz-replay test with CTest. Skipped tests (a feature this
# machine lacks) are listed with their reason at the end of the run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# With vperf for arm64 and the tests that run it in the arm64 guest (outside the default build).
VPERF_EXTRA_TARGETS="vperf_arm64_guest_tests vperf_arm64_guest_shift1_tests vperf_arm64_guest_nopmu_tests" scripts/build.sh
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" -eq 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing || true
fi
fuzz_seconds=${FUZZ_SECONDS:-10}
if [ "$fuzz_seconds" -gt 0 ]; then scripts/fuzz.sh "$fuzz_seconds"; fi
cd build
# No retries: a test that fails once has failed, and its cause is found (docs/testing.md).
# Integration tests share the machine's kernel, so they run after the others, still two at a time.
status=0
ctest --output-on-failure -j"$(nproc)" -LE '^integration$' "$@" || status=$?
integration_status=0
ctest --output-on-failure -j"$(nproc)" -L '^integration$' "$@" || integration_status=$?
[ "$status" -eq 0 ] && [ "$integration_status" -eq 0 ]
