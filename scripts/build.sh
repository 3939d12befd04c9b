#!/usr/bin/env bash
# Configures and builds vperf in build/ (warnings are errors). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DVPERF_WERROR=ON "$@" >/dev/null
cmake --build build
