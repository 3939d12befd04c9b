#!/usr/bin/env bash
# Regenerates vperf's bundle of Linux perf's arm64 event tables (pmc/data/perf-arm64) from
# Debian's linux-source package of a pinned kernel version:
#
#   apt-get download linux-source-6.12=6.12.117-1~deb12u1
#   scripts/bundle-perf-arm64.sh linux-source-6.12_6.12.117-1~deb12u1_all.deb [OUT_DIR]
#
# Why Debian's source package and not a git clone: a Linux clone is 8.6 GB and out of reach of
# these machines, while Debian's archive is reachable and its package pins the exact tree
# (version and sha256, recorded in PROVENANCE.md). The bundle is perf's mapfile.csv as it is,
# every JSON file of the tables' root (the architecture-standard events that model files name
# with ArchStdEvent), and every file of each directory a mapfile row names, except metrics.json
# (derived metrics, which vperf does not read), each compressed with xz as PATH.xz; and the
# kernel's COPYING and GPL-2.0 text, the licence the tables come under.
#
# Needs dpkg-deb, tar and xz (Debian: dpkg, tar, xz-utils). The output depends only on the
# package and the xz version, so a rerun with both unchanged changes only the generation date.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 LINUX_SOURCE_DEB [OUT_DIR]" >&2
  exit 2
fi
deb=$(realpath "$1")
out=${2:-$(cd "$(dirname "$0")/.." && pwd)/pmc/data/perf-arm64}
package=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)
[[ $package == linux-source-* ]] || { echo "$0: $deb is $package, not a linux-source package" >&2; exit 2; }
sha256=$(sha256sum "$deb" | cut -d' ' -f1)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree=${package}  # the tarball's top directory, e.g. linux-source-6.12
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$tree.tar.xz" | xz -dc |
  tar -x -C "$tmp" --wildcards "$tree/tools/perf/pmu-events/arch/arm64/*" "$tree/COPYING" \
    "$tree/LICENSES/preferred/GPL-2.0" "$tree/Makefile"
src=$tmp/$tree/tools/perf/pmu-events/arch/arm64
kernel=$(awk -F' = ' '/^VERSION =/{v=$2} /^PATCHLEVEL =/{p=$2} /^SUBLEVEL =/{s=$2} END{print v "." p "." s}' "$tmp/$tree/Makefile")

xz_options=(--format=xz --check=crc64 --lzma2=preset=9e,dict=4MiB --threads=1 --stdout)
stage=$tmp/bundle
mkdir -p "$stage"
cp "$src/mapfile.csv" "$stage/mapfile.csv"
cp "$tmp/$tree/COPYING" "$stage/COPYING"
cp "$tmp/$tree/LICENSES/preferred/GPL-2.0" "$stage/GPL-2.0"
files=0
for json in "$src"/*.json; do
  xz "${xz_options[@]}" "$json" >"$stage/$(basename "$json").xz"
  files=$((files + 1))
done
declare -A written=()
rows=0
while IFS=, read -r midr _version dir event_type _; do
  [[ $midr == \#* || -z $midr ]] && continue
  [[ $event_type == core ]] || continue
  rows=$((rows + 1))
  [[ -n ${written[$dir]:-} ]] && continue
  written[$dir]=1
  mkdir -p "$stage/$dir"
  for json in "$src/$dir"/*.json; do
    [[ $(basename "$json") == metrics.json ]] && continue
    xz "${xz_options[@]}" "$json" >"$stage/$dir/$(basename "$json").xz"
    files=$((files + 1))
  done
done <"$src/mapfile.csv"

cat >"$stage/PROVENANCE.md" <<EOF
# Linux perf's arm64 event tables, as bundled with vperf

- Source: Linux $kernel, tools/perf/pmu-events/arch/arm64
- Taken from: Debian's $package $version (sha256 of the .deb: $sha256)
- Generated: $(date -u +%Y-%m-%d) by \`scripts/bundle-perf-arm64.sh ${package}_${version}_all.deb\`
- Compressed with: $(xz --version | head -1) (\`xz ${xz_options[*]}\`)
- Licence: the Linux kernel's, GPL-2.0 (COPYING and GPL-2.0 beside this file); the tables
  carry no SPDX tag of their own.

What is here: perf's \`mapfile.csv\` unchanged; the ${#written[@]} model directories its $rows rows
name, each JSON file of them byte for byte and compressed with xz
(\`arm/neoverse-n1/l1d_cache.json\` is \`arm/neoverse-n1/l1d_cache.json.xz\`); and the JSON
files of the tables' root (\`common-and-microarch.json\`, \`recommended.json\` ...), the
architecture-standard events whose codes model files take by \`ArchStdEvent\`: $files files.

Left out: each directory's \`metrics.json\` (derived metrics, which vperf does not read) and the
\`sys/\` directories of uncore PMUs matched by \`Compat\` (no mapfile row names them).

vperf reads the model files as perf's jevents does (pmc/perf_arm64_events.h): an entry's code
and name come from the standard event it names, and its own descriptions win over the standard
event's. To regenerate: \`apt-get download $package=$version\`, then the command above.
EOF

rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$stage" "$out"
echo "bundled $files files for $rows mapfile rows (Linux $kernel) into $out"
