#!/usr/bin/env python3
"""Times two commands in turns and prints one row of a vperf-against-its-peer table.

    bench/interleave.py [--runs N] [--warmup W] NAME VPERF_COMMAND PEER_COMMAND
    bench/interleave.py --header

W warm-up runs of each (default 1: page cache, symbol files), then N rounds of A B, so that a
machine that gets busier or quieter during the measurement slows or speeds both alike. Each
run's CPU time is the user + system time that wait4(2) reports for the child, which counts the
descendants it waited for (the members of a pipeline run by the shell); its wall time is the
monotonic clock from spawn to reaping. Prints the median and minimum CPU time of each command
in milliseconds and the ratios vperf / peer of the medians and of the minimums, CPU and wall
(below 1: vperf is faster). The minimum is the run least disturbed by the rest of the machine;
the median, the typical one.

A command is split into words and executed directly, or run by /bin/sh -c when it holds shell
syntax (a pipe, a redirection). Its stdout goes to /dev/null. A command that exits non-zero
stops the script with one `vperf: error:` line.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

NAME_WIDTH = 34
COLUMNS = ("vperf cpu ms med/min", "peer cpu ms med/min", "cpu ratio med/min", "wall ratio med/min")
SHELL_SYNTAX = set("|&;<>()$`*?\"'\\")


def header() -> str:
    return f"{'benchmark':<{NAME_WIDTH}} " + " ".join(f"{c:>21}" for c in COLUMNS)


def run(command: str, stderr_file) -> tuple[float, float]:
    """Runs command once; returns (cpu seconds, wall seconds)."""
    argv = ["/bin/sh", "-c", command] if SHELL_SYNTAX & set(command) else shlex.split(command)
    stderr_file.seek(0)
    stderr_file.truncate()
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        try:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=null, stderr=stderr_file)
        except OSError as e:
            sys.exit(f"vperf: error: cannot run {argv[0]}: {e.strerror} (hint: is it built and on PATH?)")
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = 0  # reaped here: keep Popen from waiting for it again
    if status != 0:
        stderr_file.seek(0)
        lines = [l for l in stderr_file.read().decode(errors="replace").splitlines() if l.strip()]
        said = f"; it said: {lines[-1].strip()}" if lines else ""
        code = os.waitstatus_to_exitcode(status)
        sys.exit(f"vperf: error: `{command}` exited with status {code} (hint: run it by hand{said})")
    return usage.ru_utime + usage.ru_stime, wall


def pair(value_a: float, value_b: float, digits: int) -> str:
    return f"{value_a:.{digits}f}/{value_b:.{digits}f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b > 0 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description="Times two commands in turns (A B A B ...).")
    parser.add_argument("--runs", type=int, default=5, help="measured runs of each, after one warm-up (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured runs of each first (default 1)")
    parser.add_argument("--header", action="store_true", help="print the table's header and exit")
    parser.add_argument("name", nargs="?")
    parser.add_argument("vperf_command", nargs="?")
    parser.add_argument("peer_command", nargs="?")
    args = parser.parse_args()
    if args.header:
        print(header())
        return
    if args.peer_command is None or args.runs < 1 or args.warmup < 0:
        sys.exit("vperf: error: interleave.py needs NAME, two commands and --runs >= 1 "
                 "(hint: bench/interleave.py --runs 5 NAME 'vperf ...' 'perf ...')")
    cpu = {0: [], 1: []}
    wall = {0: [], 1: []}
    commands = (args.vperf_command, args.peer_command)
    with tempfile.TemporaryFile() as stderr_file:
        for _ in range(args.warmup):
            for command in commands:
                run(command, stderr_file)
        for _ in range(args.runs):
            for i, command in enumerate(commands):
                c, w = run(command, stderr_file)
                cpu[i].append(c)
                wall[i].append(w)
    med = {i: statistics.median(cpu[i]) * 1000 for i in cpu}
    low = {i: min(cpu[i]) * 1000 for i in cpu}
    digits = 1 if max(med.values()) < 100 else 0
    cells = (
        pair(med[0], low[0], digits),
        pair(med[1], low[1], digits),
        f"{ratio(med[0], med[1])}/{ratio(low[0], low[1])}",
        f"{ratio(statistics.median(wall[0]), statistics.median(wall[1]))}/{ratio(min(wall[0]), min(wall[1]))}",
    )
    print(f"{args.name:<{NAME_WIDTH}} " + " ".join(f"{c:>21}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
