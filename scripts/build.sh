#!/usr/bin/env bash
# Configures and builds vperf in build/ (warnings are errors). Extra arguments go to cmake.
# With ccache installed (scripts/install-deps.sh installs it), compiles go through it; PCH users
# need the sloppiness below to be cached at all. The build directory stays part of the key
# (ccache's hash_dir): an object reused from another checkout would carry that checkout's
# directory in its DWARF, and probe -L, annotate's source lines and the inline tests read the
# workloads' sources through it.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$PWD
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DVPERF_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build build
# Targets outside the default build that the caller wants too (scripts/test.sh: the arm64 ones).
if [ -n "${VPERF_EXTRA_TARGETS:-}" ]; then
  # shellcheck disable=SC2086  # a space-separated list of target names
  cmake --build build --target $VPERF_EXTRA_TARGETS
fi
