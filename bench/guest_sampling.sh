#!/usr/bin/env bash
# vperf kvm record --qmp on the test guest (scripts/test-guest.sh; TCG where KVM cannot run it):
#   - the sampling rate QEMU's monitor sustains: ticks per second (each samples every vCPU) when
#     asked for more than it can give, and at the default 1000;
#   - the cost to the guest: a fixed kernel-heavy job in the guest (busybox dd, 200,000 reads of
#     64 KiB from /dev/zero), timed with the guest's clock, alone and while vCPUs are sampled at -F 1000;
#     reported as the ratio sampled / alone.
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

alone=() sampled=()
for _ in $(seq "$runs"); do
  alone+=("$(guest_dd_seconds)")
  "$vperf" kvm record -q --qmp "$vm/qmp.sock" -F 1000 --duration 120 -o "$vm/slow.data" &
  sampler=$!
  sleep 1
  sampled+=("$(guest_dd_seconds)")
  kill -INT "$sampler"; wait "$sampler" || true
done
python3 - "${alone[*]}" "${sampled[*]}" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]; s = [float(x) for x in sys.argv[2].split()]
ma, ms = statistics.median(a), statistics.median(s)
print(f"guest dd (200,000 x 64 KiB from /dev/zero): alone {ma:.2f} s, while sampled at -F 1000 {ms:.2f} s"
      f" -> slowdown ratio {ms / ma:.2f} (runs: alone {a}, sampled {s})")
PY
