#!/usr/bin/env python3
"""Times two commands in turns and prints one row of a vperf-against-its-peer table.

    bench/interleave.py [--runs N] [--warmup W] [--samples N] NAME VPERF_COMMAND PEER_COMMAND
    bench/interleave.py --header

W warm-up runs of each (default 1: page cache, symbol files), then N rounds of A B, so that a
machine that gets busier or quieter during the measurement slows or speeds both alike. Each
run's CPU time is the user + system time that wait4(2) reports for the child, which counts the
descendants it waited for (the members of a pipeline run by the shell), plus that of every
descendant it left behind: this script is their subreaper (PR_SET_CHILD_SUBREAPER) and waits
for them too. perf report leaves its addr2line helpers to exit after it without waiting for
them, and they do most of its work on a recording with debug info (5.4 s of CPU of which perf
itself used 0.6). The wall time is the monotonic clock from spawn to reaping the child. Prints the median and minimum CPU time of each command
in milliseconds and the ratios vperf / peer of the medians and of the minimums, CPU and wall
(below 1: vperf is faster). The minimum is the run least disturbed by the rest of the machine;
the median, the typical one.

Then the peak memory of each command, vperf MB / peer MB and their ratio: the largest ru_maxrss
wait4(2) reported over all its runs (for a pipeline, that of its largest member, not their sum).
Linux counts into a child's ru_maxrss the memory it had before exec, this script's own, so the
script resets its peak (/proc/self/clear_refs) before each spawn and prints a peak no higher
than its own resident size as "<=" that size, with no ratio: the command's real peak is below.
With --samples N (the profile's sample or event count), the last column is each command's CPU
cost per sample in microseconds, median CPU time / N, vperf/peer: the same command at several
sizes shows whether that cost stays flat as the profile grows. Without it the column is "-".

A command is split into words and executed directly, or run by /bin/sh -c when it holds shell
syntax (a pipe, a redirection). Its stdout goes to /dev/null. A command that exits non-zero
stops the script with one `vperf: error:` line.
"""
import argparse
import ctypes
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

NAME_WIDTH = 40
COLUMNS = ("vperf cpu ms med/min", "peer cpu ms med/min", "cpu ratio med/min", "wall ratio med/min",
           "peak rss MB v/peer", "rss ratio", "us/sample v/peer")
COLUMN_WIDTHS = (21, 21, 21, 21, 18, 9, 16)
SHELL_SYNTAX = set("|&;<>()$`*?\"'\\")


def header() -> str:
    return f"{'benchmark':<{NAME_WIDTH}} " + " ".join(f"{c:>{w}}" for c, w in zip(COLUMNS, COLUMN_WIDTHS))


def own_resident_kib() -> int:
    """Resets this process's peak RSS to its current RSS, which it returns: the floor under
    what wait4 reports as a child's peak, as the child starts as a copy of this process."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")  # 5: reset the peak resident set size
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run(command: str, stderr_file) -> tuple[float, float, int, int]:
    """Runs command once; returns (cpu seconds, wall seconds, peak RSS in KiB, the floor under
    that peak in KiB)."""
    argv = ["/bin/sh", "-c", command] if SHELL_SYNTAX & set(command) else shlex.split(command)
    stderr_file.seek(0)
    stderr_file.truncate()
    floor_kib = own_resident_kib()
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        try:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=null, stderr=stderr_file)
        except OSError as e:
            sys.exit(f"vperf: error: cannot run {argv[0]}: {e.strerror} (hint: is it built and on PATH?)")
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = 0  # reaped here: keep Popen from waiting for it again
    cpu = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss
    while True:  # the descendants it did not wait for, handed to this subreaper
        try:
            _, _, orphan = os.wait4(-1, 0)
        except ChildProcessError:
            break
        cpu += orphan.ru_utime + orphan.ru_stime
        peak = max(peak, orphan.ru_maxrss)
    if status != 0:
        stderr_file.seek(0)
        lines = [l for l in stderr_file.read().decode(errors="replace").splitlines() if l.strip()]
        said = f"; it said: {lines[-1].strip()}" if lines else ""
        code = os.waitstatus_to_exitcode(status)
        sys.exit(f"vperf: error: `{command}` exited with status {code} (hint: run it by hand{said})")
    return cpu, wall, peak, floor_kib  # Linux: ru_maxrss in KiB


def pair(value_a: float, value_b: float, digits: int) -> str:
    return f"{value_a:.{digits}f}/{value_b:.{digits}f}"


def peak_mb(peak: tuple[int, int]) -> str:
    """A (peak KiB, floor KiB) pair in MB, "<=" the floor when the peak did not rise above it."""
    return f"{peak[0] / 1024:.1f}" if peak[0] > peak[1] else f"<={peak[1] / 1024:.0f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b > 0 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description="Times two commands in turns (A B A B ...).")
    parser.add_argument("--runs", type=int, default=5, help="measured runs of each, after one warm-up (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured runs of each first (default 1)")
    parser.add_argument("--samples", type=int, help="samples in the profile: adds the CPU cost per sample")
    parser.add_argument("--header", action="store_true", help="print the table's header and exit")
    parser.add_argument("name", nargs="?")
    parser.add_argument("vperf_command", nargs="?")
    parser.add_argument("peer_command", nargs="?")
    args = parser.parse_args()
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("vperf: error: prctl(PR_SET_CHILD_SUBREAPER) failed (hint: Linux 3.4 or later is needed)")
    if args.header:
        print(header())
        return
    if args.peer_command is None or args.runs < 1 or args.warmup < 0 or (args.samples is not None and args.samples < 1):
        sys.exit("vperf: error: interleave.py needs NAME, two commands and --runs >= 1 "
                 "and --samples >= 1 if given (hint: bench/interleave.py --runs 5 NAME 'vperf ...' 'perf ...')")
    cpu = {0: [], 1: []}
    wall = {0: [], 1: []}
    peak_rss = {0: (0, 0), 1: (0, 0)}  # (largest ru_maxrss, the highest floor under it), KiB
    commands = (args.vperf_command, args.peer_command)
    with tempfile.TemporaryFile() as stderr_file:
        for _ in range(args.warmup):
            for i, command in enumerate(commands):
                peak_rss[i] = max(peak_rss[i], run(command, stderr_file)[2:])
        for _ in range(args.runs):
            for i, command in enumerate(commands):
                c, w, *rss = run(command, stderr_file)
                cpu[i].append(c)
                wall[i].append(w)
                peak_rss[i] = max(peak_rss[i], tuple(rss))
    med = {i: statistics.median(cpu[i]) * 1000 for i in cpu}
    low = {i: min(cpu[i]) * 1000 for i in cpu}
    digits = 1 if max(med.values()) < 100 else 0
    cells = (
        pair(med[0], low[0], digits),
        pair(med[1], low[1], digits),
        f"{ratio(med[0], med[1])}/{ratio(low[0], low[1])}",
        f"{ratio(statistics.median(wall[0]), statistics.median(wall[1]))}/{ratio(min(wall[0]), min(wall[1]))}",
        f"{peak_mb(peak_rss[0])}/{peak_mb(peak_rss[1])}",
        ratio(peak_rss[0][0], peak_rss[1][0]) if all(p[0] > p[1] for p in peak_rss.values()) else "-",
        pair(med[0] * 1000 / args.samples, med[1] * 1000 / args.samples, 2) if args.samples else "-",
    )
    print(f"{args.name:<{NAME_WIDTH}} " + " ".join(f"{c:>{w}}" for c, w in zip(cells, COLUMN_WIDTHS)), flush=True)


if __name__ == "__main__":
    main()
