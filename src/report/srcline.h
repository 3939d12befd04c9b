#pragma once
// perf's srcline of an address (util/srcline.c), as perf script's srcline field and perf
// report's srcline sort key print it. perf asks binutils' addr2line and prints what it says;
// these are its answers, from the DSO's DWARF and ELF symbols.
#include <optional>
#include <string>

#include "symbols/resolved_address.h"

namespace vperf::report {

// script's (map__fprintf_srcline: no symbol, the address as the fallback): "FILE:LINE" (the
// file's base name) where the DSO's DWARF places the address, ":0" where a compile unit holds it
// without a line; nothing (nullopt) for an ELF file's address after one of its symbols but
// without a line, and outside every map; else "DSO[ADDR]", the DSO's short name and the address
// objdump uses, in hex ("[kernel.kallsyms][ffffffff8133c9c0]", "libgcc_s.so.1[3000]").
std::optional<std::string> script_srcline(const symbols::ResolvedAddress& at);

// report's (hist_entry__srcline: with the entry's symbol): the same lines; "??:0" for an
// address after a symbol but without a line, and outside every map; else "SYMBOL+OFFSET"
// (decimal, "pvm_irq_enable+25": the kernel from kallsyms, files without DWARF), or "DSO[ADDR]"
// without a symbol. (perf also stops asking addr2line about a DSO after 123 answers in a row
// without a line, and shows the fallback for the rest of its addresses; vperf always answers.)
std::string report_srcline(const symbols::ResolvedAddress& at);

}  // namespace vperf::report
