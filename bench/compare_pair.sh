# Sourced by the benchmark scripts: times two commands in the same run and prints one row of
# "vperf ms, reference ms, ratio" under its header.
#
#   compare_pair NAME STAT WARMUP RUNS MINE THEIRS
#
# STAT is median or mean. hyperfine when installed (-N, no shell, falling back to a shell for
# commands that need one), else bash's clock: the median of RUNS single runs, or RUNS runs timed
# together for the mean. MINE and THEIRS are command lines, split on spaces.
compare_pair() {
  local name=$1 stat=$2 warmup=$3 runs=$4 mine=$5 theirs=$6 json a b
  printf '%-32s %12s %12s %8s\n' "benchmark" "vperf ms" "reference ms" "ratio"
  if command -v hyperfine >/dev/null; then
    json=$(mktemp)
    hyperfine -N --warmup "$warmup" --runs "$runs" --output=null --export-json "$json" "$mine" "$theirs" >/dev/null 2>&1 ||
      hyperfine --warmup "$warmup" --runs "$runs" --output=null --export-json "$json" "$mine" "$theirs" >/dev/null
    python3 - "$json" "$stat" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
a, b = r[0][sys.argv[2]] * 1000, r[1][sys.argv[2]] * 1000
print(f"{sys.argv[3]:<32} {a:12.2f} {b:12.2f} {a / b:8.3f}")
PY
    rm -f "$json"
    return
  fi
  a=$(bash_clock_ms "$stat" "$runs" $mine)
  b=$(bash_clock_ms "$stat" "$runs" $theirs)
  awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN { printf "%-32s %12.2f %12.2f %8.3f\n", n, a, b, a / b }'
}

# bash_clock_ms STAT RUNS COMMAND...: milliseconds per run of COMMAND without hyperfine.
bash_clock_ms() {
  local stat=$1 runs=$2 start end i times=()
  shift 2
  if [ "$stat" = mean ]; then
    start=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1; done
    end=$(date +%s%N)
    echo $(((end - start) / runs / 1000000))
    return
  fi
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s%N)
    times+=($(((end - start) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p"
}
