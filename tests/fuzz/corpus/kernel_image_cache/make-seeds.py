#!/usr/bin/env python3
"""Writes seed-host-slice, a kernel image cache file (src/symbols/kernel_image_cache.h's
layout, written here from that description, not by vperf) for a slice of a real x86_64
/proc/kallsyms. tests/unit/symbols/kernel_image_cache_test.cpp decodes it, so the layout the
header documents is the one vperf reads."""
import os
import struct

BOOT = b"0f3b6a7e-2a44-4c55-9e2c-1f6e0b8c7d21"
# (start, end, name, binding: 0 local, 1 global, 2 weak): a finished table, sorted and sized.
SYMBOLS = [
    (0xFFFFFFFF81000000, 0xFFFFFFFF81000040, b"_text", 1),
    (0xFFFFFFFF81000040, 0xFFFFFFFF81000100, b"startup_64", 1),
    (0xFFFFFFFF81000100, 0xFFFFFFFF81000200, b"verify_cpu", 0),
    (0xFFFFFFFF81000200, 0xFFFFFFFF81000300, b"weak_helper", 2),
    (0xFFFFFFFF81000300, 0xFFFFFFFF81000500, b"do_syscall_64", 1),
    (0xFFFFFFFF81000500, 0xFFFFFFFF81001000, b"_etext", 1),
]
MARKERS = [(0xFFFFFFFF81000500, b"_etext"), (0xFFFFFFFF81000000, b"_stext"), (0xFFFFFFFF81000000, b"_text")]

names = b""
def keep(name):
    global names
    at = len(names)
    names += name
    return at, len(name)

body = b""
for start, end, name, binding in SYMBOLS:
    at, length = keep(name)
    body += struct.pack("<QQIHBB", start, end, at, length, binding, 0)
for address, name in MARKERS:
    at, length = keep(name)
    body += struct.pack("<QIHH", address, at, length, 0)
header = b"VPERFKI1" + BOOT.ljust(64, b"\0") + struct.pack("<IIQ", len(SYMBOLS), len(MARKERS), len(names))
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed-host-slice"), "wb") as out:
    out.write(header + body + names)
