#!/usr/bin/python3
"""Fuzz seeds for trace_dat_fuzz from a real trace.dat version 6 as `vperf ftrace record`
writes it: the same file without its kallsyms section (5 MB of /proc/kallsyms would slow every
fuzz run) and with its CPU data moved up to match. trace-cmd convert then makes version 7 seeds
of it (see README.md).

usage: make-seeds.py IN.dat OUT.dat"""
import struct
import sys

data = open(sys.argv[1], "rb").read()
assert data[:10] == b"\x17\x08Dtracing" and data[10:12] == b"6\x00", "not a trace.dat version 6"
at = 12 + 1 + 1 + 4


def sized(at, width):
    (n,) = struct.unpack_from("<Q" if width == 8 else "<I", data, at)
    return at + width + n


for tag in (b"header_page\x00", b"header_event\x00"):
    assert data[at:at + len(tag)] == tag
    at = sized(at + len(tag), 8)
(count,) = struct.unpack_from("<I", data, at)
at += 4
for _ in range(count):
    at = sized(at, 8)
(systems,) = struct.unpack_from("<I", data, at)
at += 4
for _ in range(systems):
    at = data.index(b"\x00", at) + 1
    (count,) = struct.unpack_from("<I", data, at)
    at += 4
    for _ in range(count):
        at = sized(at, 8)
kallsyms_at, after_kallsyms = at, sized(at, 4)
head = data[:kallsyms_at] + struct.pack("<I", 0) + data[after_kallsyms:]
removed = after_kallsyms - kallsyms_at - 4
# The flyrecord table: each CPU's offset moves up by what was removed, kept page aligned.
table = head.index(b"flyrecord\x00") + 10
(cpus,) = struct.unpack_from("<I", head, head.index(b"options  \x00") - 4)
page = struct.unpack_from("<I", head, 14)[0]
body_start = table + 16 * cpus
out = bytearray(head[:body_start])
entries = []
for cpu in range(cpus):
    offset, size = struct.unpack_from("<QQ", head, table + 16 * cpu)
    entries.append((offset - removed if size else 0, size, offset))
for cpu, (new_offset, size, old_offset) in enumerate(entries):
    struct.pack_into("<QQ", out, table + 16 * cpu, 0, size)
for cpu, (new_offset, size, old_offset) in enumerate(entries):
    if not size:
        continue
    aligned = (len(out) + page - 1) // page * page
    out += b"\x00" * (aligned - len(out))
    struct.pack_into("<Q", out, table + 16 * cpu, aligned)
    out += data[old_offset:old_offset + size]
open(sys.argv[2], "wb").write(bytes(out))
