#!/usr/bin/env bash
# Configures and builds vperf in build/ (warnings are errors). Extra arguments go to cmake.
# With ccache installed (scripts/install-deps.sh installs it), compiles go through it, keyed on
# paths relative to this checkout, so a fresh clone elsewhere (CI's) reuses what an earlier
# build of the same sources compiled; PCH users need the sloppiness below to be cached at all.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DVPERF_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build build
