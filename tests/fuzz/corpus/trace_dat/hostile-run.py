#!/usr/bin/python3
"""The hostile-input run of issue 30: N mutated copies of real trace.dat files through
`vperf ftrace report`, `vperf flamegraph --folded` and `trace-cmd report`, each under a 10 s
timeout and /usr/bin/time. Counts crashes (a signal), hangs (the timeout), the largest RSS, and
partial output without a warning (exit 0, nothing on stderr, fewer events than the unmutated
file gives). The mutations: random bytes overwritten (in the formats, the headers, the pages),
u32/u64 fields set to hostile values, truncation; seeded, so a run is repeatable.

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


def mutate(data):
    data = bytearray(data)
    kind = rng.randrange(4)
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
