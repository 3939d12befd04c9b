#!/usr/bin/env bash
# Regenerates vperf's bundle of Intel's perfmon event tables (pmc/data/perfmon) from a git
# clone of https://github.com/intel/perfmon at a pinned commit:
#
#   scripts/bundle-perfmon.sh PERFMON_GIT_DIR COMMIT [OUT_DIR]
#
# PERFMON_GIT_DIR is a clone's .git directory (or a bare repository); nothing is checked out,
# every file is read with `git show COMMIT:PATH`. OUT_DIR defaults to pmc/data/perfmon beside
# this script. The bundle is Intel's mapfile.csv and LICENSE as they are, and every file that a
# mapfile row of EventType core, hybridcore, uncore or "uncore experimental" names, byte for
# byte, each compressed with xz as PATH.xz. The other EventTypes (metrics, offcore matrices,
# fp_arith_inst, retire latency) are not event tables that vperf reads and are left out.
#
# Needs git and xz (Debian: git, xz-utils). The output depends only on COMMIT and the xz
# version (recorded in PROVENANCE.md), so a rerun with both unchanged changes nothing but the
# generation date.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 PERFMON_GIT_DIR COMMIT [OUT_DIR]" >&2
  exit 2
fi
git_dir=$1
commit=$(git --git-dir="$git_dir" rev-parse --verify "$2^{commit}")
out=${3:-$(cd "$(dirname "$0")/.." && pwd)/pmc/data/perfmon}

# Event types whose files hold events in the schema pmc/perfmon_json.h reads.
is_event_table() {
  case "$1" in
    core | hybridcore | uncore | "uncore experimental") return 0 ;;
    *) return 1 ;;
  esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$git_dir" show "$commit:mapfile.csv" >"$tmp/mapfile.csv"
git --git-dir="$git_dir" show "$commit:LICENSE" >"$tmp/LICENSE"

# xz settings: the largest table is ~2.6 MB, so a 4 MiB dictionary loses nothing against -9's
# 64 MiB and keeps the decoder's memory small (pmc/xz_text.cpp caps it).
xz_options=(--format=xz --check=crc64 --lzma2=preset=9e,dict=4MiB --threads=1 --stdout)

declare -A written=()
rows=0
while IFS=, read -r family_model version filename event_type _; do
  [[ $family_model == "Family-model" ]] && continue
  is_event_table "$event_type" || continue
  rows=$((rows + 1))
  [[ -n ${written[$filename]:-} ]] && continue
  written[$filename]=1
  target="$tmp/files${filename}.xz"
  mkdir -p "$(dirname "$target")"
  git --git-dir="$git_dir" show "$commit:${filename#/}" | xz "${xz_options[@]}" >"$target"
done <"$tmp/mapfile.csv"

models=$(awk -F, 'NR > 1 && ($4 == "core" || $4 == "hybridcore") { print $1 }' "$tmp/mapfile.csv" | sort -u | wc -l)
dirs=$(cd "$tmp/files" && ls | wc -l)
commit_date=$(git --git-dir="$git_dir" show -s --format=%cI "$commit")

cat >"$tmp/PROVENANCE.md" <<EOF
# Intel perfmon event tables, as bundled with vperf

- Source: https://github.com/intel/perfmon
- Commit: $commit ($commit_date)
- Generated: $(date -u +%Y-%m-%d) by \`scripts/bundle-perfmon.sh PERFMON_GIT_DIR $commit\`
- Compressed with: $(xz --version | head -1) (\`xz ${xz_options[*]}\`)
- Licence: Intel's BSD 3-Clause licence, in LICENSE beside this file.

What is here: Intel's \`mapfile.csv\` and \`LICENSE\` unchanged, and every file that a mapfile
row of EventType \`core\`, \`hybridcore\`, \`uncore\` or \`uncore experimental\` names, unchanged
byte for byte and compressed with xz (\`IVB/events/ivybridge_core.json\` is
\`IVB/events/ivybridge_core.json.xz\`): ${#written[@]} files in $dirs model directories, for the
$rows mapfile rows of those types ($models CPU signatures with a core table).

Left out: the rows of EventType \`metrics\`, \`offcore\` (the offcore-response matrices),
\`fp_arith_inst\` and \`retire latency\`. Their files use other schemas, which vperf does not read;
the offcore events themselves (OFFCORE_RESPONSE.*) are in the core tables.

vperf reads this directory as it reads a perfmon checkout given with \`--perfmon DIR\`
(pmc/perfmon_mapfile.h), looking for \`FILE.xz\` where a checkout has \`FILE\`; see
docs/encode.md for where event names come from and in which order.

To regenerate: clone https://github.com/intel/perfmon, then
\`scripts/bundle-perfmon.sh perfmon/.git COMMIT\` and commit the result with this file.
EOF

mkdir -p "$out"
find "$out" -mindepth 1 -delete
cp "$tmp/mapfile.csv" "$tmp/LICENSE" "$tmp/PROVENANCE.md" "$out/"
cp -r "$tmp/files/." "$out/"
echo "bundled ${#written[@]} files ($rows mapfile rows, $models core signatures) from $commit into $out"
du -sh --apparent-size "$out"
