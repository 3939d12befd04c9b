#pragma once
// The machine code of one symbol, for `vperf annotate`: read from where perf annotate reads it.
//  - a user DSO: its ELF file (under --symfs), from the section that holds the symbol, after
//    checking the file's build-id is the one the samples were resolved against;
//  - the [vdso]: this process's vdso image (the same bytes every process on this kernel maps);
//  - the kernel and modules: /proc/kcore, an ELF core file whose PT_LOAD segments map the
//    running kernel's virtual addresses (perf annotate's fallback when there is no vmlinux;
//    root only). Kernel symbols resolve against the running kernel's kallsyms, so the bytes are
//    the running kernel's too.
// Anything else (JIT code, unknown maps) has no code left to read and says so.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "symbols/dso.h"
#include "symbols/elf_file.h"
#include "symbols/symbol.h"
#include "symbols/symbol_config.h"

namespace vperf::report {

struct SymbolCode {
  uint64_t address = 0;         // of bytes[0], in the Dso's address space (ELF vaddr or kernel address)
  std::vector<uint8_t> bytes;   // may be shorter than the symbol when its section ends first
  std::string section;          // ".text"; empty for /proc/kcore
  std::string file;             // the file read, for messages
};

struct CodeSources {
  symbols::SymbolConfig config;  // symfs for user DSOs
  std::filesystem::path kcore = "/proc/kcore";
};

// Bytes [address, address + size) of an ELF file with contents (not a stripped debug file),
// from the section that holds `address`; cut at that section's end.
Result<SymbolCode> read_elf_code(const symbols::ElfFile& elf, uint64_t address, uint64_t size);

// Bytes [address, address + size) of the memory an ELF core file maps (/proc/kcore), from the
// PT_LOAD segment that holds `address`; cut at its end.
Result<SymbolCode> read_core_code(const std::filesystem::path& core, uint64_t address, uint64_t size);

// The code of `symbol` of `dso`, from the source that fits the DSO's kind (see above).
Result<SymbolCode> read_symbol_code(const symbols::Dso& dso, const symbols::Symbol& symbol, const CodeSources& sources);

}  // namespace vperf::report
