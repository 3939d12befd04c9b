#!/usr/bin/env bash
# vperf's flame graph SVG writer against Brendan Gregg's flamegraph.pl on the same folded stacks:
# a deterministic profile of about 400,000 samples over 8,000 distinct stacks (a fixed
# pseudo-random call tree, perl's seeded rand), drawn by `flamegraph.pl` and by
# flamegraph_svg_bench (bench/flamegraph_svg.cpp: parse_folded + flame_graph_svg, the same
# library code `vperf flamegraph` uses). Prints the time ratio (vperf / flamegraph.pl; below 1
# means vperf is faster).
#
#   FLAMEGRAPH_DIR=/path/to/FlameGraph bench/flamegraph_svg.sh [BUILD_DIR] [RUNS]
#
# BUILD_DIR defaults to build (configured with VPERF_BUILD_TESTS=ON, the default); RUNS to 10.
# Uses hyperfine when installed, else bash's time over RUNS runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/compare_pair.sh
source bench/compare_pair.sh
build=${1:-build}
runs=${2:-10}
driver=$build/bench/flamegraph_svg_bench
[ -x "$driver" ] || { echo "vperf: error: $driver not built (hint: ninja -C $build flamegraph_svg_bench)" >&2; exit 1; }
[ -n "${FLAMEGRAPH_DIR:-}" ] && [ -f "$FLAMEGRAPH_DIR/flamegraph.pl" ] || {
  echo "vperf: error: FLAMEGRAPH_DIR does not hold flamegraph.pl (hint: clone github.com/brendangregg/FlameGraph outside the repository and export FLAMEGRAPH_DIR)" >&2
  exit 1
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
folded=$out/profile.folded

perl -e '
  srand(42);
  my @names = map { "func_$_" } 0 .. 799;
  push @names, "std::vector<int, std::allocator<int> >::push_back", "[unknown]", "do_syscall_64_[k]";
  my %folded;
  for my $i (1 .. 8000) {
    my ($stack, $node) = ("bench", 0);
    my $depth = 3 + int(rand(25));
    for (1 .. $depth) {
      $node = ($node * 7 + 1 + int(rand(4))) % scalar(@names);
      $stack .= ";" . $names[$node];
    }
    $folded{$stack} += 1 + int(rand(100));
  }
  print "$_ $folded{$_}\n" for sort keys %folded;
' >"$folded"
samples=$(awk '{ s += $NF } END { print s }' "$folded")
echo "profile: $(wc -l <"$folded") distinct stacks, $samples samples"

mine="$driver $folded"
theirs="perl $FLAMEGRAPH_DIR/flamegraph.pl $folded"
# Same boxes from both (count of frame groups), as a sanity check of what is being timed.
boxes() { grep -c '<rect x=.*rx="2"' || true; }
echo "boxes drawn: vperf $($mine | boxes), flamegraph.pl $($theirs 2>/dev/null | boxes)"

compare_pair "flame graph SVG (folded in)" mean 2 "$runs" "$mine" "$theirs"
