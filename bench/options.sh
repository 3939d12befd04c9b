# The options bench/ftrace.sh and bench/probe.sh take, sourced by them: parse_bench_options
# SCRIPT ARGS... sets runs (--runs N, default 5; 3 with --quick), quick (0 or 1) and build
# (--build DIR, default build), prints SCRIPT's header comment for -h, and fails in one line on
# anything else.

fail() { echo "vperf: error: $1 (hint: $2)" >&2; exit 1; }

parse_bench_options() {
  local script=$1 name
  name=bench/$(basename "$1")
  shift
  runs="" quick=0 build=build
  while [ $# -gt 0 ]; do
    case $1 in
      --runs) [ $# -ge 2 ] || fail "--runs needs a number" "$name --runs 5"; runs=$2; shift 2 ;;
      --runs=*) runs=${1#--runs=}; shift ;;
      --quick) quick=1; shift ;;
      --build) [ $# -ge 2 ] || fail "--build needs a directory" "$name --build build"; build=$2; shift 2 ;;
      --build=*) build=${1#--build=}; shift ;;
      -h|--help) sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) fail "unknown option '$1'" "$name [--runs N] [--quick] [--build DIR]" ;;
    esac
  done
  [ "$quick" = 1 ] && runs=${runs:-3}
  runs=${runs:-5}
  [[ $runs =~ ^[1-9][0-9]*$ ]] || fail "--runs '$runs' is not a positive number" "$name --runs 5"
}
