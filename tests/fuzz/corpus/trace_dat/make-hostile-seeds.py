#!/usr/bin/python3
"""Hostile trace.dat seeds for trace_dat_fuzz and the unit tests (tests/unit/tracing/
trace_dat_test.cpp), each a small change to the real files beside this script (see README.md):

  fmt-div-zero, fmt-mod-zero   sys_enter_getppid's print fmt: REC->__syscall_nr / 0 (and % 0)
  fmt-div-record-zero          ... / (u8)(REC->__syscall_nr + 146): 0 in every record (nr is 110)
  fmt-print-hex-huge           __print_hex(REC->__syscall_nr, 100000000) of a 12-byte record
  fmt-print-array-huge         __print_array(REC->__syscall_nr, 1000000, 8)
  fmt-field-outside            __syscall_nr declared at offset 100000, printed with %s
  fmt-field-negative           __syscall_nr declared at offset -64 (libtraceevent refuses it: FAILED TO PARSE)
  fmt-common-outside           every format's common_pid declared at offset 100000
  fmt-left-out                 sys_enter_getppid's print fmt names a field it lacks: the format is left out
  page-size-530001             the header's page size 0x530001 (header_page still says 4096)
  v6-second-page-damaged       CPU 0 gets a second page after its first, claiming 100000 bytes of data
  v7-zstd-chunk-claims-2g      a CPU data chunk of v7-zstd-* claiming 0x7fffffff bytes
  v7-zstd-section-claims-2g    the same for the first compressed metadata section

and, for trace_dat_fuzz's second kind of input (a format, then {u16 size, bytes} per record):

  fmtrec-sched-switch          Linux 6.1's sched_switch format and two records
  fmtrec-print-hex             a dynamic array printed with __print_hex of its own length, and of 4096
  fmtrec-bitmask-cpumask       __get_bitmask and __get_cpumask of dynamic fields, one relative
  fmtrec-divide                REC->a / REC->b and REC->a % (u8)REC->b, b 256 in the second record

usage: make-hostile-seeds.py   (writes into its own directory)"""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
v6 = open(os.path.join(here, "v6-getppid-stacktrace"), "rb").read()
page = struct.unpack_from("<I", v6, 14)[0]


def split_v6(data):
    """(preamble pieces, formats [(system or None, text)], rest after formats, cpus [(offset,size)], table offset)"""
    at = 18
    head = data[:at]
    for tag in (b"header_page\x00", b"header_event\x00"):
        (n,) = struct.unpack_from("<Q", data, at + len(tag))
        at += len(tag) + 8 + n
    headers = data[18:at]
    formats = []
    (count,) = struct.unpack_from("<I", data, at)
    at += 4
    for _ in range(count):
        (n,) = struct.unpack_from("<Q", data, at)
        formats.append((None, data[at + 8:at + 8 + n]))
        at += 8 + n
    (systems,) = struct.unpack_from("<I", data, at)
    at += 4
    for _ in range(systems):
        end = data.index(b"\x00", at)
        system = data[at:end]
        at = end + 1
        (count,) = struct.unpack_from("<I", data, at)
        at += 4
        for _ in range(count):
            (n,) = struct.unpack_from("<Q", data, at)
            formats.append((system, data[at + 8:at + 8 + n]))
            at += 8 + n
    return head, headers, formats, at


def join_v6(data, head, headers, formats, after_formats):
    """The file with its formats replaced and each CPU's pages moved to stay page aligned."""
    out = bytearray(head + headers)
    ftrace = [t for s, t in formats if s is None]
    out += struct.pack("<I", len(ftrace))
    for t in ftrace:
        out += struct.pack("<Q", len(t)) + t
    systems = []
    for s, t in formats:
        if s is not None and s not in systems:
            systems.append(s)
    out += struct.pack("<I", len(systems))
    for s in systems:
        mine = [t for x, t in formats if x == s]
        out += s + b"\x00" + struct.pack("<I", len(mine))
        for t in mine:
            out += struct.pack("<Q", len(t)) + t
    rest = data[after_formats:]
    table = len(out) + rest.index(b"flyrecord\x00") + 10
    (cpus,) = struct.unpack_from("<I", data, data.index(b"options  \x00") - 4)
    old_table = data.index(b"flyrecord\x00") + 10
    out += data[after_formats:old_table + 16 * cpus]
    for cpu in range(cpus):
        offset, size = struct.unpack_from("<QQ", data, old_table + 16 * cpu)
        if not size:
            continue
        aligned = (len(out) + page - 1) // page * page
        out += b"\x00" * (aligned - len(out))
        struct.pack_into("<Q", out, table + 16 * cpu, aligned)
        out += data[offset:offset + size]
    return bytes(out)


def with_format(name, change):
    head, headers, formats, after = split_v6(v6)
    formats = [(s, change(t) if t.startswith(b"name: " + name + b"\n") or name == b"*" else t) for s, t in formats]
    return join_v6(v6, head, headers, formats, after)


def print_fmt(fmt):
    return lambda t: t[:t.index(b"print fmt:")] + b"print fmt: " + fmt + b"\n"


seeds = {
    "fmt-div-zero": with_format(b"sys_enter_getppid", print_fmt(b'"%d", REC->__syscall_nr / 0')),
    "fmt-mod-zero": with_format(b"sys_enter_getppid", print_fmt(b'"%d", REC->__syscall_nr % 0')),
    "fmt-div-record-zero": with_format(b"sys_enter_getppid", print_fmt(b'"%d", 1000 / (u8)(REC->__syscall_nr + 146)')),
    "fmt-print-hex-huge": with_format(b"sys_enter_getppid", print_fmt(b'"%s", __print_hex(REC->__syscall_nr, 100000000)')),
    "fmt-print-array-huge": with_format(b"sys_enter_getppid", print_fmt(b'"%s", __print_array(REC->__syscall_nr, 1000000, 8)')),
    "fmt-field-outside": with_format(
        b"sys_enter_getppid",
        lambda t: print_fmt(b'"%s", REC->__syscall_nr')(t.replace(b"__syscall_nr;\toffset:8;", b"__syscall_nr;\toffset:100000;"))),
    "fmt-field-negative": with_format(
        b"sys_enter_getppid",
        lambda t: print_fmt(b'"%d", REC->__syscall_nr')(t.replace(b"__syscall_nr;\toffset:8;", b"__syscall_nr;\toffset:-64;"))),
    "fmt-common-outside": with_format(b"*", lambda t: t.replace(b"common_pid;\toffset:4;", b"common_pid;\toffset:100000;")),
    "fmt-left-out": with_format(b"sys_enter_getppid", print_fmt(b'"%d", REC->no_such_field')),
    "page-size-530001": v6[:14] + struct.pack("<I", 0x530001) + v6[18:],
}


def v7_claim(which):
    data = bytearray(open(os.path.join(here, "v7-zstd-getppid-stacktrace"), "rb").read())
    at = 18
    for _ in range(2):  # compression name and version
        at = data.index(b"\x00", at) + 1
    (options,) = struct.unpack_from("<Q", data, at)
    sections, cpu_offsets = [], []
    while options:
        # An options section: {u16 id, u16 flags, u32 description, u64 size}, then options; the
        # last (id 0) gives the offset of the next options section.
        (size,) = struct.unpack_from("<Q", data, options + 8)
        o, end, options = options + 16, options + 16 + size, 0
        while o < end:
            option, length = struct.unpack_from("<HI", data, o)
            body = o + 6
            if 16 <= option <= 21:
                sections.append(struct.unpack_from("<Q", data, body)[0])
            if option == 3:
                b = body + 8
                b = data.index(b"\x00", b) + 1
                b = data.index(b"\x00", b) + 1
                (cpus,) = struct.unpack_from("<I", data, b + 4)
                for i in range(cpus):
                    cpu, offset, cpu_size = struct.unpack_from("<IQQ", data, b + 8 + 20 * i)
                    if cpu_size:
                        cpu_offsets.append(offset)
            if option == 0:
                (options,) = struct.unpack_from("<Q", data, body)
                break
            o = body + length
    if which == "chunk":
        struct.pack_into("<I", data, cpu_offsets[0] + 8, 0x7FFFFFFF)  # count, packed, then the claim
    else:
        for s in sections:
            if struct.unpack_from("<H", data, s + 2)[0] & 1:
                struct.pack_into("<I", data, s + 16 + 4, 0x7FFFFFFF)
                break
    return bytes(data)


def second_page_damaged():
    data = bytearray(v6)
    table = data.index(b"flyrecord\x00") + 10
    offset, size = struct.unpack_from("<QQ", data, table)
    bad = bytearray(data[offset:offset + page])
    struct.pack_into("<Q", bad, 8, 100000)  # the page header's commit: more data than a page holds
    out = data[:offset + size] + bad + data[offset + size:]
    struct.pack_into("<Q", out, table + 8, size + page)
    (cpus,) = struct.unpack_from("<I", data, data.index(b"options  \x00") - 4)
    for cpu in range(1, cpus):
        o, n = struct.unpack_from("<QQ", out, table + 16 * cpu)
        if n:
            struct.pack_into("<Q", out, table + 16 * cpu, o + page)
    return bytes(out)


seeds["v6-second-page-damaged"] = second_page_damaged()
seeds["v7-zstd-chunk-claims-2g"] = v7_claim("chunk")
seeds["v7-zstd-section-claims-2g"] = v7_claim("section")
COMMON = (b"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
          b"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
          b"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
          b"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n")


def fmtrec(name, fields, print_fmt, records):
    text = b"name: " + name + b"\nID: 900\nformat:\n" + COMMON + fields + b"\nprint fmt: " + print_fmt + b"\n"
    return text + b"\x00" + b"".join(struct.pack("<H", len(r)) + r for r in records)


def common(pid=4242):
    return struct.pack("<HBBi", 900, 0, 0, pid)


seeds["fmtrec-sched-switch"] = fmtrec(
    b"sched_switch",
    b"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    b"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    b"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    b"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    b"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    b"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    b"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
    b'"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, '
    b'REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | '
    b'0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | '
    b'0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "|", { 0x00000001, "S" }, '
    b'{ 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, '
    b'"P" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | '
    b'0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio',
    [common() + b"perf".ljust(16, b"\0") + struct.pack("<iiq", 708, 120, 2) + b"migration/0".ljust(16, b"\0") + struct.pack("<ii", 18, 0),
     common() + b"cc1plus".ljust(16, b"\0") + struct.pack("<iiq", 584, 120, 0x100)])
seeds["fmtrec-print-hex"] = fmtrec(
    b"hexes", b"\tfield:__data_loc u8[] buf;\toffset:8;\tsize:4;\tsigned:0;\n",
    b'"%s %s", __print_hex(__get_dynamic_array(buf), __get_dynamic_array_len(buf)), __print_hex(__get_dynamic_array(buf), 4096)',
    [common() + struct.pack("<I", (6 << 16) | 12) + b"abcdef", common() + struct.pack("<I", (60 << 16) | 12) + b"abc"])
seeds["fmtrec-bitmask-cpumask"] = fmtrec(
    b"masks",
    b"\tfield:__data_loc unsigned long[] mask;\toffset:8;\tsize:4;\tsigned:0;\n"
    b"\tfield:__rel_loc cpumask_t cpus;\toffset:12;\tsize:4;\tsigned:0;\n",
    b'"mask=%s cpus=%s", __get_bitmask(mask), __get_cpumask(cpus)',
    [common() + struct.pack("<II", (8 << 16) | 16, (8 << 16) | 8) + struct.pack("<QQ", 0x5, 0xf0),
     common() + struct.pack("<II", (8 << 16) | 16, (200 << 16) | 8) + struct.pack("<QQ", 0x5, 0xf0)])
seeds["fmtrec-divide"] = fmtrec(
    b"divide",
    b"\tfield:unsigned int a;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:unsigned int b;\toffset:12;\tsize:4;\tsigned:0;\n",
    b'"q=%u r=%u", REC->a / REC->b, REC->a % (u8)REC->b',
    [common() + struct.pack("<II", 100, 7), common() + struct.pack("<II", 100, 256)])

for name, data in seeds.items():
    open(os.path.join(here, name), "wb").write(data)
