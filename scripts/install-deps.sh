#!/usr/bin/env bash
# Installs exactly what vperf's build and tests need, from Debian 12's archive. Idempotent:
# packages already present are skipped, and apt-get update runs only when something is missing.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config ccache
  # libraries vperf links
  libpfm4-dev libdw-dev libelf-dev libvirt-dev libboost-json1.81-dev libcli11-dev
  libtraceevent-dev libtracefs-dev libcapstone-dev
  libiberty-dev  # cplus_demangle, perf's C++ demangler (linked statically)
  libzstd-dev zlib1g-dev  # headers only: trace-cmd's compressed trace.dat v7 (the libraries are loaded when a file needs them)
  liblzma-dev  # the bundled Intel perfmon tables are .json.xz (xz-utils regenerates them)
  libdebuginfod-dev  # header only: vperf probe asks DEBUGINFOD_URLS' servers (libdebuginfod1 is loaded when asked)
  # tests: GoogleTest, Linux perf as the reference peer, cpuid(1) for cross-checking leaves,
  # clang with libFuzzer and the sanitizer runtimes for the fuzz targets; llvm's llvm-symbolizer, a
  # third DWARF reader (neither libdw nor binutils) for the inline-chain tests
  googletest libgtest-dev linux-perf cpuid clang libclang-rt-14-dev llvm
  trace-cmd  # the oracle of vperf ftrace: trace-cmd report reads vperf's trace.dat (tests/integration/ftrace_test.cpp)
  strace  # proves which files a command reads (tests/integration/startup_test.cpp)
  debuginfod  # a local debuginfod server serving the workload's debuginfo (tests/integration/probe_test.cpp)
  chromium  # headless: runs the flame graph SVG script (tests/integration/flamegraph_test.cpp), ~30 s to install
  # the real guest of the vperf kvm tests (scripts/test-guest.sh): QEMU (TCG where KVM cannot
  # boot it), cpio for its initramfs; the guest's own packages come with apt-get download
  qemu-system-x86 cpio
  # vperf kvm list / record --domain against a real libvirtd (started by hand in the test)
  libvirt-daemon-system libvirt-clients
  openssh-server  # a test-owned sshd on 127.0.0.1 for qemu+ssh:// URIs (kvm_libvirt_remote_test.cpp)
  # vperf for arm64 and the arm64 guest whose emulated PMUv3 is the tests' hardware PMU
  # (tests/arm64_guest, docs/arm64.md): the cross compiler, the arm64 libraries vperf builds
  # against (multiarch, below), QEMU's arm64 machine, and the arm64 libraries perf 6.1 for arm64
  # links, copied into the guest beside it
  g++-aarch64-linux-gnu qemu-system-arm
  libpfm4-dev:arm64 libdw-dev:arm64 libelf-dev:arm64 libvirt-dev:arm64 libboost-json1.81-dev:arm64
  libtraceevent-dev:arm64 libtracefs-dev:arm64 libcapstone-dev:arm64 libiberty-dev:arm64 libzstd-dev:arm64
  zlib1g-dev:arm64 liblzma-dev:arm64 libdebuginfod-dev:arm64
  libbabeltrace1:arm64 libcap2:arm64 libnuma1:arm64 libopencsd1:arm64 libperl5.36:arm64 libpython3.11:arm64
  libslang2:arm64 libunwind8:arm64
)

# arm64's packages come through Debian's multiarch: the architecture is added once.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  [ "$(id -u)" -eq 0 ] || { echo "vperf: error: arm64 is not a dpkg architecture here (hint: run this script as root)" >&2; exit 1; }
  dpkg --add-architecture arm64
  added_architecture=1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})) || [ -n "${added_architecture:-}" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "vperf: error: missing packages ${missing[*]} (hint: run this script as root)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
