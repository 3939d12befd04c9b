#!/usr/bin/env bash
# vperf kvm record --qmp on the test guest (scripts/test-guest.sh; TCG where KVM cannot run it):
#   - the sampling rate QEMU's monitor sustains: ticks per second (each samples every vCPU) when
#     asked for more than it can give, and at the default 1000;
#   - the cost to the guest: a fixed kernel-heavy job in the guest (busybox dd, 200,000 reads of
#     64 KiB from /dev/zero), timed by the guest's clock and the host's, alone and while vCPUs are
#     sampled at -F 1000 with registers only, with -g (guest kernel stacks) and with -g --pause;
#     reported as ratios sampled / alone, with the tick rate each mode reached;
#   - when a libvirtd answers at qemu:///system: the same rate through libvirt (record --domain)
#     and through that domain's own QMP socket, on one transient domain of the same guest, in
#     turns, with the filesystem of /run/libvirt (each monitor command rewrites the domain's
#     status XML there: docs/guest.md, "Sampling rate through libvirt").
# No perf counterpart exists (perf cannot see a guest without a host PMU), so the reference of
# the ratio is the guest's own unsampled run.
#
#   bench/guest_sampling.sh [RUNS]      RUNS of each timing, default 3
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
vperf=build/vperf
[ -x "$vperf" ] || { echo "vperf: error: $vperf not built (hint: run scripts/build.sh)" >&2; exit 1; }
rig=build/guest-rig
[ -f "$rig/vmlinuz" ] || bash scripts/test-guest.sh build "$rig" >/dev/null
vm=$(mktemp -d)
trap 'bash scripts/test-guest.sh stop "$vm" >/dev/null 2>&1; rm -rf "$vm"' EXIT
cp "$rig/vmlinuz" "$rig/initramfs.cpio.gz" "$vm/"
[ -f "$rig/kvm-silent" ] && cp "$rig/kvm-silent" "$vm/"
bash scripts/test-guest.sh boot "$vm" >&2

# Runs the dd job in the guest through its agent and prints how long it took.
guest_dd_seconds() {
  python3 - "$vm/qga.sock" <<'PY'
import base64, json, re, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
def cmd(c, a=None):
    f.write(json.dumps({"execute": c, **({"arguments": a} if a else {})}) + "\n"); f.flush()
    while True:
        line = f.readline().lstrip("\xff")
        if line.strip():
            r = json.loads(line)
            if "return" in r or "error" in r: return r
# busybox dd prints no timing: the guest's /proc/uptime before and after (the guest's clock).
job = ("a=$(cut -d' ' -f1 /proc/uptime); dd if=/dev/zero of=/dev/null bs=65536 count=200000 2>/dev/null; "
       "b=$(cut -d' ' -f1 /proc/uptime); echo $a $b")
pid = cmd("guest-exec", {"path": "/bin/sh", "arg": ["-c", job], "capture-output": True})["return"]["pid"]
while True:
    st = cmd("guest-exec-status", {"pid": pid})["return"]
    if st.get("exited"): break
    time.sleep(0.2)
out = base64.b64decode(st.get("out-data", "")).decode().split()
print(f"{float(out[1]) - float(out[0]):.2f}" if len(out) == 2 else "nan")
PY
}

rate() {  # ticks per second that record reports for -F $1
  "$vperf" kvm record --qmp "$vm/qmp.sock" -F "$1" --duration 5 -o "$vm/rate.data" 2>&1 |
    sed -n 's/.*monitor at \([0-9]*\) Hz.*/\1/p'
}

echo "sampling rate (each tick samples both vCPUs):"
echo "  asked 10000/s: $(rate 10000) ticks/s"
echo "  asked  1000/s: $(rate 1000) ticks/s"

ticks_per_second() {  # ticks per second that record reports for its arguments at -F 10000
  "$vperf" kvm record "$@" -F 10000 --duration 3 -o "$vm/rate.data" 2>&1 | sed -n 's/.*monitor at \([0-9]*\) Hz.*/\1/p'
}

if virsh -c qemu:///system version >/dev/null 2>&1; then
  # QEMU runs as libvirt's user: it reads the guest's files and creates its extra QMP socket in
  # a directory it may write.
  chmod 755 "$vm"
  install -d -m 0777 "$vm/sock"
  domain="vperf-bench-$$"
  cat >"$vm/domain.xml" <<XML
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'><name>$domain</name>
<memory unit='MiB'>512</memory><vcpu>2</vcpu>
<os><type arch='x86_64' machine='pc'>hvm</type><kernel>$vm/vmlinuz</kernel><initrd>$vm/initramfs.cpio.gz</initrd>
<cmdline>console=ttyS0 panic=-1 quiet</cmdline></os><on_reboot>destroy</on_reboot>
<devices><serial type='file'><source path='$vm/domain-serial.log'/></serial><controller type='virtio-serial'/>
<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel></devices>
<qemu:commandline><qemu:arg value='-qmp'/><qemu:arg value='unix:$vm/sock/qmp.sock,server=on,wait=off'/></qemu:commandline>
</domain>
XML
  virsh -q -c qemu:///system create "$vm/domain.xml" >/dev/null
  trap 'virsh -q -c qemu:///system destroy "$domain" >/dev/null 2>&1 || true; bash scripts/test-guest.sh stop "$vm" >/dev/null 2>&1; rm -rf "$vm"' EXIT
  for _ in $(seq 120); do
    virsh -c qemu:///system qemu-agent-command "$domain" '{"execute":"guest-ping"}' >/dev/null 2>&1 && break
    sleep 1
  done
  through_libvirt=() through_socket=()
  for _ in $(seq "$runs"); do
    through_libvirt+=("$(ticks_per_second --domain "$domain")")
    through_socket+=("$(ticks_per_second --qmp "$vm/sock/qmp.sock")")
  done
  echo "one libvirt domain (/run/libvirt on $(stat -f -c %T /run/libvirt)), asked 10000/s, $runs runs each in turns:"
  echo "  through libvirt (record --domain):      ${through_libvirt[*]} ticks/s"
  echo "  through its own QMP socket (--qmp):     ${through_socket[*]} ticks/s"
  virsh -q -c qemu:///system destroy "$domain" >/dev/null
fi

# The guest's cost of being sampled: the dd job alone, then while vperf samples at -F 1000 with
# registers only, with -g (kernel stacks dumped after the registers) and with -g --pause (the VM
# stopped for each tick). Timed with the guest's clock and with the host's wall clock around the
# agent's job; the rate is what record achieved over the same window.
guest_cost() {  # prints "guest_s wall_s [ticks_per_s]" for one dd run, sampled with options $1 ("" = alone)
  local start end dd ticks=""
  if [ -n "$1" ]; then
    # shellcheck disable=SC2086  # the options are separate words
    "$vperf" kvm record --qmp "$vm/qmp.sock" --qga "$vm/qga.sock" $1 -F 1000 --duration 300 -o "$vm/slow.data" 2>"$vm/slow.err" &
    sampler=$!
    sleep 2
  fi
  start=$(date +%s.%N)
  dd=$(guest_dd_seconds)
  end=$(date +%s.%N)
  if [ -n "$1" ]; then
    kill -INT "$sampler" 2>/dev/null || { echo "vperf kvm record $1 ended early:" >&2; cat "$vm/slow.err" >&2; exit 1; }
    wait "$sampler" || true
    ticks=$(sed -n 's/.*monitor at \([0-9]*\) Hz.*/\1/p' "$vm/slow.err")
  fi
  echo "$dd $(python3 -c "print(f'{$end - $start:.2f}')") $ticks"
}
modes=("" "-F 1000" "-g" "-g --pause")
for i in "${!modes[@]}"; do
  for _ in $(seq "$runs"); do guest_cost "${modes[$i]/-F 1000/ }" >>"$vm/cost-$i"; done
done
python3 - "$vm" "${modes[@]}" <<'PY'
import statistics, sys
vm, modes = sys.argv[1], sys.argv[2:]
def load(i):
    rows = [l.split() for l in open(f"{vm}/cost-{i}") if l.strip()]
    return [float(r[0]) for r in rows], [float(r[1]) for r in rows], [r[2] for r in rows if len(r) > 2]
ga, wa, _ = load(0)
mg, mw = statistics.median(ga), statistics.median(wa)
print(f"guest dd (200,000 x 64 KiB from /dev/zero), median of {len(ga)} runs: alone {mg:.2f} s by the guest's clock, {mw:.2f} s wall")
for i, mode in enumerate(modes[1:], start=1):
    g, w, t = load(i)
    print(f"  sampled ({mode:>10}): {statistics.median(g):.2f} s guest, {statistics.median(w):.2f} s wall -> slowdown "
          f"{statistics.median(g) / mg:.2f} (guest clock), {statistics.median(w) / mw:.2f} (wall); ticks/s {' '.join(t)}")
PY
