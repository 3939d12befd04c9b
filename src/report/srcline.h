#pragma once
// perf's srcline of an address (util/srcline.c), as perf script's srcline field prints it
// (map__fprintf_srcline: no symbol, the address as the fallback).
#include <optional>
#include <string>

#include "symbols/resolved_address.h"

namespace vperf::report {

// "FILE:LINE" (the file's base name) where the DSO's DWARF places the address, ":0" where a
// compile unit holds it without a line; nothing (nullopt) for an ELF file's address after one
// of its symbols but without a line, and outside every map; else "DSO[ADDR]", the DSO's short name and the
// address objdump uses, in hex ("[kernel.kallsyms][ffffffff8133c9c0]", "libgcc_s.so.1[3000]").
// perf asks binutils' addr2line and prints what it says; these are its answers.
std::optional<std::string> script_srcline(const symbols::ResolvedAddress& at);

}  // namespace vperf::report
