#!/usr/bin/python3
"""The hostile-input run of issue 30: N mutated copies of real trace.dat files through
`vperf ftrace report`, `vperf flamegraph --folded` and `trace-cmd report`, each under a 10 s
timeout and /usr/bin/time. Counts crashes (a signal), hangs (the timeout), the largest RSS, and
partial output without a warning (exit 0, nothing on stderr, fewer events than the unmutated
file gives). The mutations: random bytes overwritten (in the formats, the headers, the pages),
u32 fields set to hostile values, the page size, a page's commit word, sys_enter_getppid's print fmt
replaced by a hostile one (v6), truncation; seeded, so a run is repeatable.

usage: hostile-run.py VPERF OUT_DIR N FILE.dat...    (prints a table; OUT_DIR keeps the inputs)"""
import os
import random
import struct
import subprocess
import sys

vperf, out_dir, count, originals = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
os.makedirs(out_dir, exist_ok=True)
rng = random.Random(30)
HOSTILE = [0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x530001, 100000, 4095, 4097]


PRINT_FMTS = [b'"%d", REC->__syscall_nr / 0', b'"%d", REC->__syscall_nr % 0', b'"%s", __print_hex(REC->__syscall_nr, 100000000)',
              b'"%s", __print_array(REC->__syscall_nr, 1000000, 8)', b'"%d", 1000 / (u8)(REC->__syscall_nr + 146)',
              b'"%s", __print_hex(REC->__syscall_nr, REC->__syscall_nr * 1000)', b'"%d %d", REC->__syscall_nr[4000000000], 1',
              b'"%s", REC->__syscall_nr', b'"%d", REC->nope']


def with_print_fmt(data, fmt):
    """sys_enter_getppid's print fmt replaced (v6 only: its formats are not compressed), the
    format's size and every later CPU offset moved by a whole number of pages."""
    name = data.find(b"name: sys_enter_getppid\n")
    if name < 0 or data[10:12] != b"6\x00":
        return None
    (size,) = struct.unpack_from("<Q", data, name - 8)
    text = data[name:name + size]
    new = text[:text.index(b"print fmt:")] + b"print fmt: " + fmt + b"\n"
    pages = (len(new) - len(text) + 4095) // 4096 if len(new) > len(text) else 0
    new += b"\n" * (len(text) + pages * 4096 - len(new))
    out = bytearray(data[:name - 8]) + struct.pack("<Q", len(new)) + new + data[name + size:]
    table = out.index(b"flyrecord\x00") + 10
    (cpus,) = struct.unpack_from("<I", out, out.index(b"options  \x00") - 4)
    for cpu in range(cpus):
        offset, n = struct.unpack_from("<QQ", out, table + 16 * cpu)
        if n:
            struct.pack_into("<Q", out, table + 16 * cpu, offset + pages * 4096)
    return out


def mutate(data):
    data = bytearray(data)
    kind = rng.randrange(7)
    if kind == 4:  # the page size
        struct.pack_into("<I", data, 14, rng.choice(HOSTILE + [rng.randrange(1 << 32)]))
        return bytes(data)
    if kind == 5:  # a hostile print fmt
        changed = with_print_fmt(bytes(data), rng.choice(PRINT_FMTS))
        if changed is not None:
            return bytes(changed)
        kind = 1
    if kind == 6:  # a page header's commit (the data size and flags)
        at = rng.randrange(len(data) // 4096) * 4096 + 8 if len(data) >= 4096 else 8
        struct.pack_into("<I", data, at, rng.choice(HOSTILE + [rng.randrange(1 << 32)]))
        return bytes(data)
    if kind == 0:  # a few random bytes
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1:  # a hostile u32 at a random place
        at = rng.randrange(len(data) - 4)
        struct.pack_into("<I", data, at, rng.choice(HOSTILE))
    elif kind == 2:  # a print fmt or field offset rewritten
        at = data.find(b"print fmt:", rng.randrange(len(data)))
        if at < 0:
            at = data.find(b"print fmt:")
        if at >= 0:
            for _ in range(rng.randrange(1, 4)):
                data[at + 11 + rng.randrange(40)] = rng.choice(b"/%0*[]()-9_xX,\"")
    else:  # truncation
        del data[rng.randrange(len(data) // 2, len(data)):]
    return bytes(data)


def run(argv):
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M"] + argv, capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return "hang", 0, b"", b""
    err = p.stderr.decode(errors="replace")
    rss = 0
    lines = err.strip().split("\n")
    if lines and lines[-1].startswith("MAXRSS"):
        rss = int(lines[-1].split()[1])
        lines = lines[:-1]
    if "Command terminated by signal" in err:
        lines = [l for l in lines if "Command terminated by signal" not in l]
        return "crash", rss, p.stdout, "\n".join(lines).encode()
    status = int(err.split("Command exited with non-zero status ")[1].split()[0]) if "non-zero status" in err else 0
    lines = [l for l in lines if "Command exited with non-zero status" not in l]
    return status, rss, p.stdout, "\n".join(lines).encode()


def events(text):
    return sum(1 for line in text.split(b"\n") if b"]" in line[:40] and b": " in line)


tools = {
    "vperf ftrace report": lambda f: [vperf, "ftrace", "report", "-i", f],
    "vperf flamegraph": lambda f: [vperf, "flamegraph", "--folded", "-o", "-", "-i", f],
    "trace-cmd report": lambda f: ["trace-cmd", "report", "-i", f],
}
baseline = {}
for original in originals:
    for tool, argv in tools.items():
        _, _, out, _ = run(argv(original))
        baseline[(original, tool)] = events(out) if tool != "vperf flamegraph" else sum(int(l.split()[-1]) for l in out.split(b"\n") if l.strip())
stats = {tool: {"crash": 0, "hang": 0, "rss": 0, "silent": 0, "exit0": 0, "errors": 0} for tool in tools}
examples = {tool: [] for tool in tools}
for i in range(count):
    original = originals[i % len(originals)]
    path = os.path.join(out_dir, "m%04d.dat" % i)
    with open(path, "wb") as f:
        f.write(mutate(open(original, "rb").read()))
    for tool, argv in tools.items():
        status, rss, out, err = run(argv(path))
        s = stats[tool]
        s["rss"] = max(s["rss"], rss)
        if status in ("crash", "hang"):
            s[status] += 1
            examples[tool].append((path, status))
            continue
        if status == 0:
            s["exit0"] += 1
            got = events(out) if tool != "vperf flamegraph" else sum(int(l.split()[-1]) for l in out.split(b"\n") if l.strip() and l.split()[-1].isdigit())
            if not err.strip() and got < baseline[(original, tool)]:
                s["silent"] += 1
                examples[tool].append((path, "silent %d < %d" % (got, baseline[(original, tool)])))
        else:
            s["errors"] += 1
print("%-22s %6s %6s %6s %8s %8s %10s" % ("tool", "crash", "hang", "exit0", "exit!=0", "silent", "max RSS KB"))
for tool, s in stats.items():
    print("%-22s %6d %6d %6d %8d %8d %10d" % (tool, s["crash"], s["hang"], s["exit0"], s["errors"], s["silent"], s["rss"]))
for tool, found in examples.items():
    for path, what in found[:8]:
        print("  %s: %s %s" % (tool, os.path.basename(path), what))
