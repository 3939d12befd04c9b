#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds with warnings as errors, fuzzes each
# parser of outside input for a few seconds (FUZZ_SECONDS per target, default 10; 0 skips
# it), then runs every unit, integration and fuzz-replay test with CTest. Skipped tests (a feature this
# machine lacks) are listed with their reason at the end of the run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" -eq 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing || true
fi
fuzz_seconds=${FUZZ_SECONDS:-10}
if [ "$fuzz_seconds" -gt 0 ]; then scripts/fuzz.sh "$fuzz_seconds"; fi
cd build
# Unit, fuzz-replay and mount-state tests get no retries: one failure is a failure.
# Integration tests sample a real kernel shared with the rest of the run, and a few compare
# sample shares with thresholds that a loaded 2-CPU machine can miss; those that fail get up to
# two more runs, and every test that passed only on a retry is named at the end, so a flaky
# test is visible on every green run. Issue 30 removes this retry once full runs pass without
# it: its note names the tests still found failing once (Ftrace.TraceCmdsOwnFilesReadAsTraceCmdReadsThem
# counted 225 of 200 getppid events in two of three full runs, its cause not yet found).
status=0
ctest --output-on-failure -j"$(nproc)" -LE '^integration$' "$@" || status=$?
integration_status=0
ctest --output-on-failure -j"$(nproc)" -L '^integration$' "$@" || integration_status=$?
if [ "$integration_status" -ne 0 ] && [ -s Testing/Temporary/LastTestsFailed.log ]; then
  retried=$(cut -d: -f2- Testing/Temporary/LastTestsFailed.log | tr '\n' ' ')
  echo "vperf: retrying the integration tests that failed once: $retried"
  integration_status=0
  ctest --output-on-failure --rerun-failed --repeat until-pass:2 || integration_status=$?
  echo "vperf: RETRIED (failed once, then $([ "$integration_status" -eq 0 ] && echo passed || echo failed again)): $retried"
fi
[ "$status" -eq 0 ] && [ "$integration_status" -eq 0 ]
