#!/usr/bin/env bash
# A real Debian guest for vperf's guest-profiling tests, built only from Debian's packages:
# Debian 12's own 6.1 kernel, busybox-static as the whole userland, and qemu-guest-agent with
# the libraries it links, packed into an initramfs. Booted by QEMU with KVM where /dev/kvm
# works, TCG otherwise (TCG reaches the shell in 10-25 s here).
#
#   scripts/test-guest.sh build DIR   download and assemble DIR/vmlinuz, DIR/initramfs.cpio.gz,
#                                     DIR/modules/ (the kernel's .ko files, for symbols)
#   scripts/test-guest.sh boot DIR    boot it in the background; waits until the guest has
#                                     written its /proc/kallsyms and /proc/modules (to
#                                     DIR/guest-kallsyms and DIR/guest-modules) and its agent runs.
#                                     DIR/qmp.sock is QEMU's QMP monitor, DIR/qga.sock the agent,
#                                     DIR/serial.log the console (CRLF line endings), DIR/qemu.pid;
#                                     DIR/console.sock types into the console's shell (init's
#                                     busybox sh on ttyS0), for a look inside a guest whose agent
#                                     stopped answering. VPERF_GUEST_ACCEL=tcg|kvm picks the
#                                     accelerator instead of the KVM probe; VPERF_GUEST_TCG=single
#                                     runs TCG's vCPUs on one host thread (see start_qemu).
#   scripts/test-guest.sh stop DIR    quit QEMU (through QMP, then SIGKILL if it lingers)
#   scripts/test-guest.sh capture DIR build (unless built), boot, keep the symbol dumps, stop:
#                                     what the vperf kvm tests need from a real guest
#   scripts/test-guest.sh add-vperf DIR VPERF WORKLOAD [FILE...]
#                                     append vperf and vperf-workload (stripped, at /bin) and
#                                     the libraries they link to DIR/initramfs.cpio.gz before a
#                                     boot, and each FILE at /lib/vperf-test/: tests that run
#                                     vperf inside the guest (kprobes, function tracers)
#   scripts/test-guest.sh vmlinux DIR DIR/vmlinux-dbg: the kernel image with DWARF, out of
#                                     Debian's linux-image-RELEASE-dbg (858 MB; only vmlinux kept)
#   scripts/test-guest.sh perf DIR    DIR/perf: perf 6.1 for the guest's architecture (Debian's
#                                     linux-perf), to pass to add-vperf as a FILE
#   scripts/test-guest.sh module DIR  build tests/kernel_module against the headers of DIR's
#                                     kernel (installing linux-headers-RELEASE when missing) into
#                                     DIR/test-module/vperf_probe_module.ko, with DWARF
#
# VPERF_GUEST_ARCH=arm64 makes every action work on an arm64 guest instead: Debian's arm64 6.1
# kernel and arm64 packages (through multiarch: scripts/install-deps.sh adds the architecture),
# booted by qemu-system-aarch64 -M virt -cpu max (always TCG here), whose emulated PMUv3 is a
# real hardware PMU for the tests (docs/arm64.md). VPERF_GUEST_ICOUNT=N boots it with
# -icount shift=N: one instruction per 2^N ns of virtual time, so cycles = instructions << N.
# VPERF_GUEST_PMU=off boots it with -cpu max,pmu=off: a guest whose hypervisor gives no PMU.
#
# Why a second serial port for kallsyms: the emulated 16550 console moves ~100 KB/s under TCG,
# and kallsyms is ~8 MB; a virtio-serial port backed by a host file takes a second.
set -euo pipefail

die() { echo "test-guest: error: $*" >&2; exit 1; }
[ $# -eq 2 ] || [ "${1:-}" = add-vperf ] || die "usage: $0 build|boot|stop|capture|module|vmlinux|perf DIR, or add-vperf DIR VPERF WORKLOAD [FILE...]"
action=$1
dir=$(realpath -m "$2")

arch=${VPERF_GUEST_ARCH:-x86_64}
case "$arch" in
  x86_64) deb_arch=amd64 triplet=x86_64-linux-gnu console=ttyS0 ;;
  arm64) deb_arch=arm64 triplet=aarch64-linux-gnu console=ttyAMA0 ;;
  *) die "VPERF_GUEST_ARCH=$arch is neither x86_64 nor arm64 (hint: unset it for an x86-64 guest)" ;;
esac
icount=${VPERF_GUEST_ICOUNT:-}
[[ -z $icount || $icount =~ ^([0-9]|10)$ ]] || die "VPERF_GUEST_ICOUNT=$icount is not a shift of 0 to 10 (hint: 0: one instruction per ns)"
pmu=${VPERF_GUEST_PMU:-on}
[[ $pmu = on || $pmu = off ]] || die "VPERF_GUEST_PMU=$pmu is neither on nor off (hint: off boots the arm64 guest with -cpu max,pmu=off)"

# The shared libraries FILE... need, and theirs, as absolute paths: from ROOT's library
# directories first (the packages unpacked for the guest), then this machine's for the guest's
# architecture (glibc and the libraries multiarch installed). readelf reads either
# architecture's ELF, where ldd runs only this machine's.
needed_libs() {
  local root=$1 lib found d
  shift
  local dirs=("$root/lib/$triplet" "$root/usr/lib/$triplet" "/lib/$triplet" "/usr/lib/$triplet")
  local -A seen=()
  local queue=("$@")
  while ((${#queue[@]})); do
    local file=${queue[0]}
    queue=("${queue[@]:1}")
    for lib in $(readelf -d "$file" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [ -n "${seen[$lib]:-}" ] && continue
      found=""
      for d in "${dirs[@]}"; do [ -e "$d/$lib" ] && { found="$d/$lib"; break; }; done
      [ -n "$found" ] || die "$file needs $lib, which neither the guest's packages nor this machine's $triplet libraries hold"
      seen[$lib]=$found
      queue+=("$(realpath "$found")")
      echo "$found"
    done
  done
}

# The program interpreter (the dynamic loader) FILE names, e.g. /lib/ld-linux-aarch64.so.1.
interpreter_of() { readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p'; }

# The guest-side init: devices, the virtio console modules in dependency order (no udev, no
# modprobe), the symbol dumps, then the agent on the first virtio-serial port.
write_init() {
  cat >"$1" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run /var/run
# The modules this kernel has of them (the rest are built in), in the build's order.
for m in $(cat /lib/vperf-modules/order); do
  insmod /lib/vperf-modules/$m.ko || echo "vperf-guest: insmod $m failed"
done
# Without udev the ports have only their numbered names; wait for both to appear.
for i in $(seq 50); do [ -e /dev/vport0p2 ] && break; sleep 0.1; done
echo 0 >/proc/sys/kernel/kptr_restrict
{ cat /proc/kallsyms; echo "vperf-guest: end of kallsyms"; } >/dev/vport0p2
cat /proc/modules >/dev/vport0p3
echo "vperf-guest: symbols written"
qemu-ga --method=virtio-serial --path=/dev/vport0p1 --daemonize --pidfile=/run/qemu-ga.pid
echo "vperf-guest: agent started"
exec sh </dev/CONSOLE >/dev/CONSOLE 2>&1
EOF
  sed -i "s|/dev/CONSOLE|/dev/$console|g" "$1"
  chmod +x "$1"
}

build() {
  mkdir -p "$dir/debs" "$dir/root"
  cd "$dir/debs"
  local kernel
  kernel=$(apt-cache search "^linux-image-6\.1\.0-[0-9]+-$deb_arch\$" | awk '{print $1}' | sort -V | tail -1)
  [ -n "$kernel" ] || die "no linux-image-6.1.0-*-$deb_arch in the apt lists (hint: apt-get update)"
  # qemu-ga's libraries, and theirs, as Debian 12 packages them.
  local libs=(libglib2.0-0 libnuma1 libudev1 liburing2 libffi8 libpcre2-8-0 libmount1 libselinux1 libblkid1 zlib1g)
  local packages=("$kernel" busybox-static qemu-guest-agent "${libs[@]}")
  # apt-get download writes as _apt when it can; a root-owned directory makes it warn, not fail.
  apt-get download -q "${packages[@]/%/:$deb_arch}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
  local root="$dir/root"
  rm -rf "$root" "$dir/kernel"
  mkdir -p "$root" "$dir/kernel"
  dpkg-deb -x "$kernel"_*_"$deb_arch".deb "$dir/kernel"
  local p
  for p in busybox-static qemu-guest-agent "${libs[@]}"; do dpkg-deb -x "$p"_*_"$deb_arch".deb "$root"; done
  # glibc comes from this machine (the same Debian 12 release; for arm64 its multiarch copy):
  # the loader and the C library.
  local lib loader needed
  needed=$(needed_libs "$root" "$root/usr/sbin/qemu-ga") || exit 1
  for lib in $needed; do
    [ -e "$root$lib" ] || install -D -m 0755 "$lib" "$root$lib"
  done
  loader=$(interpreter_of "$root/usr/sbin/qemu-ga")
  [ -e "$root$loader" ] || install -D -m 0755 "$loader" "$root$loader"
  mkdir -p "$root/bin" "$root/lib/vperf-modules" "$root/etc" "$root/proc" "$root/sys" "$root/dev"
  cp "$root/usr/bin/busybox" "$root/bin/busybox" 2>/dev/null || cp "$root/bin/busybox" "$root/bin/busybox" 2>/dev/null || true
  [ -x "$root/bin/busybox" ] || die "busybox-static did not unpack a busybox binary"
  local release m module
  release=$(ls "$dir/kernel/lib/modules")
  : >"$root/lib/vperf-modules/order"
  for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_console; do
    module=$(find "$dir/kernel/lib/modules/$release" -name "$m.ko" | head -1)
    [ -n "$module" ] || continue  # built into this kernel
    cp "$module" "$root/lib/vperf-modules/"
    echo "$m" >>"$root/lib/vperf-modules/order"
  done
  grep -qx virtio_console "$root/lib/vperf-modules/order" || grep -q '^CONFIG_VIRTIO_CONSOLE=y' "$dir/kernel/boot/config-$release" ||
    die "the $release kernel has no virtio console, as a module or built in"
  echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
  write_init "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initramfs.cpio.gz"
  cp "$dir/kernel/boot/vmlinuz-$release" "$dir/vmlinuz"
  rm -rf "$dir/modules"
  cp -r "$dir/kernel/lib/modules/$release/kernel" "$dir/modules"
  cp "$dir/kernel/boot/System.map-$release" "$dir/System.map"
  echo "$release" >"$dir/release"
  echo "test-guest: built $dir (kernel $release)"
}

# QEMU can open KVM: a VM-less QEMU still running after a second. It is killed with SIGKILL
# (a QEMU stopped with -S in a stuck KVM ioctl ignores SIGTERM) and reaped: nothing lingers.
kvm_works() {
  [ "$arch" = x86_64 ] && [ -w /dev/kvm ] || return 1
  qemu-system-x86_64 -accel kvm -machine none -display none -S -monitor none \
    -serial none -parallel none </dev/null >/dev/null 2>&1 &
  local pid=$!
  sleep 1
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; wait "$pid" 2>/dev/null || true; return 0; fi
  wait "$pid" 2>/dev/null && return 0 || return 1
}

start_qemu() {
  rm -f "$dir"/{qmp.sock,qga.sock,console.sock,serial.log,guest-kallsyms,guest-modules,qemu.pid}
  echo "$1" >"$dir/accel"
  # VPERF_GUEST_TCG=single: one host thread runs both vCPUs in turn. QEMU 7.2's multi-threaded
  # TCG can leave one vCPU running a stale translation of kernel text another vCPU has just
  # patched (ftrace's text_poke_bp): it traps on the int3 that memory no longer holds, forever,
  # with interrupts off, and the patching vCPU waits for it in smp_call_function_many_cond. The
  # guests that run the tracers use it; a vCPU thread each stays the default (the kvm monitor
  # tests sample the vCPU threads).
  local accel_option=$1
  if [ "$1" = tcg ] && [ "${VPERF_GUEST_TCG:-}" = single ]; then accel_option=tcg,thread=single; fi
  # The console is a socket whose every byte QEMU also writes to serial.log, whether or not a
  # client is connected (QEMU >= 5.2 logs what a client-less socket drops). Nothing connects in
  # a good run; on a stall the test rig types commands into init's shell there and reads the
  # answers. sysrq_always_enabled: when that shell is stuck too, QMP's send-key can still make
  # the kernel raise its console loglevel and print every CPU's and every blocked task's stack.
  local machine=(qemu-system-x86_64 -accel "$accel_option" -m 512)
  if [ "$arch" = arm64 ]; then
    # With -icount, TCG runs every vCPU on one host thread (QEMU has no multi-threaded icount).
    local cpu=max
    [ "$pmu" = on ] || cpu=max,pmu=off
    machine=(qemu-system-aarch64 -M virt -cpu "$cpu" -accel "$accel_option" -m 1024)
    [ -z "$icount" ] || machine+=(-icount "shift=$icount")
  fi
  "${machine[@]}" -smp 2 -nodefaults -display none -no-reboot \
    -name vperf-test-guest,debug-threads=on \
    -kernel "$dir/vmlinuz" -initrd "$dir/initramfs.cpio.gz" \
    -append "console=$console panic=-1 quiet sysrq_always_enabled=1" \
    -chardev socket,id=console,path="$dir/console.sock",server=on,wait=off,logfile="$dir/serial.log" -serial chardev:console \
    -device virtio-serial-pci \
    -chardev socket,id=qga,path="$dir/qga.sock",server=on,wait=off \
    -device virtserialport,chardev=qga,name=org.qemu.guest_agent.0,nr=1 \
    -chardev file,id=kallsyms,path="$dir/guest-kallsyms" -device virtserialport,chardev=kallsyms,nr=2 \
    -chardev file,id=modules,path="$dir/guest-modules" -device virtserialport,chardev=modules,nr=3 \
    -qmp unix:"$dir/qmp.sock",server=on,wait=off \
    -pidfile "$dir/qemu.pid" -daemonize </dev/null >/dev/null 2>"$dir/qemu.err"
  # The daemon must not hold the caller's stdout/stderr open (a test waiting for this script's
  # output would wait for QEMU to end); its messages go to DIR/qemu.err, shown here.
  grep -v "host doesn't support requested feature" "$dir/qemu.err" >&2 || true
}

# Waits up to $1 seconds for the guest's "agent started" line; 0 when it came.
wait_for_guest() {
  local waited=0
  until grep -q 'vperf-guest: agent started' "$dir/serial.log" 2>/dev/null; do
    kill -0 "$(cat "$dir/qemu.pid" 2>/dev/null)" 2>/dev/null || die "QEMU exited while booting (see $dir/serial.log)"
    [ $waited -lt "$1" ] || return 1
    sleep 1
    waited=$((waited + 1))
  done
  booted_after=$waited
}

boot() {
  [ -f "$dir/vmlinuz" ] && [ -f "$dir/initramfs.cpio.gz" ] || die "no guest in $dir (hint: $0 build $dir)"
  [ -f "$dir/qemu.pid" ] && kill -0 "$(cat "$dir/qemu.pid")" 2>/dev/null && die "a guest already runs from $dir (pid $(cat "$dir/qemu.pid"))"
  local accel=${VPERF_GUEST_ACCEL:-}
  case "$accel" in "" | tcg | kvm) ;; *) die "VPERF_GUEST_ACCEL=$accel is neither tcg nor kvm (hint: unset it to let the rig pick)" ;; esac
  case "${VPERF_GUEST_TCG:-}" in "" | single | multi) ;; *) die "VPERF_GUEST_TCG=$VPERF_GUEST_TCG is neither single nor multi (hint: unset it for QEMU's default)" ;; esac
  if [ -z "$accel" ] && [ -f "$dir/kvm-silent" ]; then accel=tcg; fi
  if [ -z "$accel" ] && kvm_works; then
    # Nested KVM can start a VM that never runs a Linux kernel; a silent console after 30 s
    # sends the guest to TCG, and DIR/kvm-silent keeps later boots from waiting again.
    start_qemu kvm
    if ! wait_for_guest 30; then
      stop
      touch "$dir/kvm-silent"
      echo "test-guest: KVM opened but the guest stayed silent for 30 s; booting under TCG" >&2
      accel=tcg
    fi
  fi
  if [ "$accel" != "" ] || [ ! -f "$dir/qemu.pid" ]; then
    start_qemu "${accel:-tcg}"
    wait_for_guest 240 || { stop; die "the guest did not come up in 240 s (see $dir/serial.log)"; }
  fi
  # The dump travels on a virtio port of its own and the console on another: "agent started"
  # can reach serial.log while QEMU still has the dump's last bytes to write (seen on a loaded
  # host). Its end marker is what says it is whole.
  local polls=0
  until grep -q 'vperf-guest: end of kallsyms' "$dir/guest-kallsyms" 2>/dev/null || [ $polls -ge 150 ]; do
    sleep 0.2
    polls=$((polls + 1))
  done
  grep -q 'vperf-guest: end of kallsyms' "$dir/guest-kallsyms" || die "the guest's kallsyms dump is incomplete"
  # perf's relocation reference: _text, or _stext where the kernel lists no _text (arm64).
  grep -qE ' _s?text$' "$dir/guest-kallsyms" || die "the guest's kallsyms has neither _text nor _stext (see $dir/serial.log)"
  sed -i '/^vperf-guest: end of kallsyms$/d' "$dir/guest-kallsyms"
  echo "test-guest: up after ${booted_after} s under $(cat "$dir/accel"); $(wc -l <"$dir/guest-kallsyms") kallsyms lines, $(wc -l <"$dir/guest-modules") modules"
}

stop() {
  [ -f "$dir/qemu.pid" ] || return 0
  local pid
  pid=$(cat "$dir/qemu.pid")
  if kill -0 "$pid" 2>/dev/null; then
    printf '{"execute":"qmp_capabilities"}\n{"execute":"quit"}\n' | timeout 5 socat - UNIX-CONNECT:"$dir/qmp.sock" >/dev/null 2>&1 ||
      python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{\"execute\":\"qmp_capabilities\"}\n{\"execute\":\"quit\"}\n"); s.recv(4096)' "$dir/qmp.sock" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/qemu.pid"
}

# A second archive appended to the first: the kernel unpacks both. Files into directories the
# first one has (/bin, /lib/x86_64-linux-gnu), so nothing of it is replaced, and /lib/vperf-test.
add_vperf() {
  local vperf=$1 workload=$2 stage="$dir/vperf-root" lib file strip=strip
  shift 2
  [ -f "$dir/initramfs.cpio.gz" ] || die "no initramfs in $dir (hint: $0 boot copies one there from the rig)"
  [ "$arch" = x86_64 ] || strip=$triplet-strip
  rm -rf "$stage"
  mkdir -p "$stage/bin" "$stage/lib/vperf-test"
  $strip -o "$stage/bin/vperf" "$vperf"
  $strip -o "$stage/bin/vperf-workload" "$workload"
  for file in "$@"; do cp "$file" "$stage/lib/vperf-test/"; done
  # The libraries of vperf, vperf-workload and every FILE that is a program (perf), and those
  # vperf opens only when a command needs them (dlopen, so no NEEDED entry names them): libpfm4,
  # for PMC names and encodings (the tests run no annotate there, so capstone stays out).
  local programs=("$vperf" "$workload")
  for file in "$@"; do readelf -h "$file" >/dev/null 2>&1 && programs+=("$file"); done
  for lib in libpfm.so.4; do
    [ -e "/usr/lib/$triplet/$lib" ] && programs+=("$(readlink -f "/usr/lib/$triplet/$lib")")
  done
  local needed
  needed=$(needed_libs "$stage" "${programs[@]}") || exit 1
  for lib in $(sort -u <<<"$needed"); do
    install -D -m 0755 "$lib" "$stage$lib"
  done
  for lib in libpfm.so.4; do
    [ -e "/usr/lib/$triplet/$lib" ] && install -D -m 0755 "$(readlink -f "/usr/lib/$triplet/$lib")" "$stage/usr/lib/$triplet/$lib"
  done
  # vperf's data where an installed vperf at /bin finds it (../share/vperf): on arm64, perf's
  # arm64 event tables, for list --pmc, encode and decode of arm64 models.
  if [ "$arch" = arm64 ]; then
    mkdir -p "$stage/share/vperf"
    cp -r "$(cd "$(dirname "$0")/.." && pwd)/pmc/data/perf-arm64" "$stage/share/vperf/"
  fi
  # Its new directories first (the kernel creates a file only in a directory it has), then files.
  (cd "$stage" && { echo ./lib/vperf-test; [ -d share ] && find ./share -type d; find . -type f; } |
    cpio -o -H newc --quiet | gzip -1) >>"$dir/initramfs.cpio.gz"
  rm -rf "$stage"
}

# The test module, built once per rig against its kernel's headers (Debian's
# linux-headers-RELEASE, which pulls the matching kbuild and compiler packages).
build_module() {
  local release headers out="$dir/test-module" source
  release=$(cat "$dir/release" 2>/dev/null) || die "no kernel release in $dir (hint: $0 build $dir)"
  [ -f "$out/vperf_probe_module.ko" ] && return 0
  headers=/usr/src/linux-headers-$release
  if [ ! -f "$headers/Makefile" ]; then
    [ "$(id -u)" -eq 0 ] || die "no $headers (hint: apt-get install linux-headers-$release)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "linux-headers-$release" >/dev/null ||
      die "cannot install linux-headers-$release (hint: apt-get update)"
  fi
  source="$(cd "$(dirname "$0")/.." && pwd)/tests/kernel_module"
  rm -rf "$out"
  mkdir -p "$out"
  cp "$source/vperf_probe_module.c" "$source/Kbuild" "$out/"
  make -s -C "$headers" M="$out" modules >"$out/build.log" 2>&1 || die "the test module did not build (see $out/build.log)"
  [ -f "$out/vperf_probe_module.ko" ] || die "the test module build left no .ko (see $out/build.log)"
}

# The guest kernel's vmlinux with DWARF, for vperf probe -k: Debian's -dbg package, of which
# only the vmlinux is unpacked (the package installs 5.6 GB of module debuginfo too).
extract_vmlinux() {
  local release package
  release=$(cat "$dir/release" 2>/dev/null) || die "no kernel release in $dir (hint: $0 build $dir)"
  [ -f "$dir/vmlinux-dbg" ] && return 0
  package="linux-image-$release-dbg"
  mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download -q "$package" 2>&1 | grep -v '^W: Download is performed unsandboxed') || true
  compgen -G "$dir/debs/${package}_*.deb" >/dev/null || die "cannot download $package (hint: apt-get update)"
  rm -rf "$dir/dbg"
  mkdir -p "$dir/dbg"
  dpkg-deb --fsys-tarfile "$dir"/debs/"$package"_*.deb | tar -x -C "$dir/dbg" "./usr/lib/debug/boot/vmlinux-$release"
  mv "$dir/dbg/usr/lib/debug/boot/vmlinux-$release" "$dir/vmlinux-dbg"
  rm -rf "$dir/dbg" "$dir"/debs/"$package"_*.deb
}

# perf 6.1 for the guest's architecture, the oracle of the tests that run in it: Debian's
# linux-perf, of which only /usr/bin/perf is kept (add-vperf brings its libraries).
fetch_perf() {
  [ -x "$dir/perf" ] && return 0
  mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download -q "linux-perf:$deb_arch" 2>&1 | grep -v '^W: Download is performed unsandboxed') || true
  compgen -G "$dir/debs/linux-perf_*_$deb_arch.deb" >/dev/null || die "cannot download linux-perf:$deb_arch (hint: apt-get update)"
  dpkg-deb --fsys-tarfile "$dir"/debs/linux-perf_*_"$deb_arch".deb | tar -xO ./usr/bin/perf >"$dir/perf.new"
  chmod 0755 "$dir/perf.new"
  mv "$dir/perf.new" "$dir/perf"
}

case "$action" in
  perf) fetch_perf ;;
  add-vperf) [ $# -ge 4 ] || die "usage: $0 add-vperf DIR VPERF WORKLOAD [FILE...]"; shift 2; add_vperf "$@" ;;
  module) build_module ;;
  vmlinux) extract_vmlinux ;;
  build) build ;;
  boot) boot ;;
  stop) stop ;;
  capture)
    [ -f "$dir/vmlinuz" ] && [ -f "$dir/initramfs.cpio.gz" ] || build
    boot
    stop
    ;;
  *) die "unknown action '$action' (build, boot, stop, capture, module, vmlinux, perf or add-vperf)" ;;
esac
