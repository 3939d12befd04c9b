#!/usr/bin/env python3
# symbols_only.py ELF OUT: a copy of ELF with the bytes of its loaded code and data sections
# (SHT_PROGBITS with SHF_ALLOC) set to zero. Everything perf report and perf script read to name
# a sample is kept at the same file offsets: program and section headers, the build-id note,
# .symtab and .strtab. The zeros compress away, so a golden case can carry its binary's symbols
# in a few tens of KiB.
import struct
import sys

data = bytearray(open(sys.argv[1], "rb").read())
if data[:4] != b"\x7fELF" or data[4] != 2:
    sys.exit("symbols_only.py: %s is not a 64-bit ELF file" % sys.argv[1])
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
for index in range(shnum):
    _, sh_type, sh_flags, _, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", data, shoff + index * shentsize)
    if sh_type == 1 and sh_flags & 2:
        data[sh_offset:sh_offset + sh_size] = bytes(sh_size)
open(sys.argv[2], "wb").write(data)
