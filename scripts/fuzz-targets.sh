# Sourced by scripts/fuzz.sh and bench/fuzz.sh: the libFuzzer targets, their seeds, the flags
# every run uses, and the build.
#
#  fuzz_targets          one name per line: every tests/fuzz/<name>.cpp ending in _fuzz
#  fuzz_seeds NAME       its seed directories (tests/fuzz/corpus/<name without _fuzz>, or the
#                        real data in ../shared/testdata)
#  fuzz_build            configures build-fuzz/ (clang, ASan+UBSan) and builds every target
#  fuzz_flags            -timeout: an input that runs longer than 5 s is a finding (libFuzzer's
#                        default is 1200 s, so short runs never reported a slow input);
#                        -rss_limit_mb (also the largest single allocation): no parser of a
#                        64 KiB input needs 1 GiB, so a lying size field shows as an OOM
fuzz_flags=(-timeout=5 -rss_limit_mb=1024 -max_len=65536)

fuzz_targets() {
  local source
  for source in tests/fuzz/*_fuzz.cpp; do basename "$source" .cpp; done
}

fuzz_seeds() {
  local testdata
  testdata=$(cd .. && pwd)/shared/testdata
  case $1 in
    perfmon_json_fuzz) echo "$testdata/perfmon/IVB/events $testdata/perfmon/SPR/events" ;;
    cpuid_dump_fuzz) echo "$testdata/cpuid" ;;
    perfmon_xz_fuzz) echo "$PWD/pmc/data/perfmon/IVB/events $PWD/pmc/data/perfmon/SLM/events" ;;
    perf_arm64_json_fuzz) echo "$PWD/pmc/data/perf-arm64" ;;
    perf_data_pipe_fuzz) echo "$PWD/tests/fuzz/corpus/perf_data_pipe $PWD/tests/fuzz/corpus/perf_data" ;;
    raw_dump_fuzz) echo "$PWD/tests/fuzz/corpus/perf_data $PWD/tests/fuzz/corpus/perf_data_pipe" ;;
    *) echo "$PWD/tests/fuzz/corpus/${1%_fuzz}" ;;
  esac
}

fuzz_build() {
  # Through ccache where installed, keyed as scripts/build.sh keys it (paths relative to the checkout).
  local launcher=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR=$PWD
    export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  CXX=${CXX:-clang++} cmake -S . -B build-fuzz -G Ninja -DVPERF_BUILD_FUZZERS=ON -DVPERF_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
  # shellcheck disable=SC2046
  cmake --build build-fuzz --target $(fuzz_targets)
}
