#pragma once
// Where a uprobe on a function of an ELF file goes: uprobe_events takes a file offset, and
// perf probe turns FUNC[+OFF] into one by the function's symbol (.symtab, else .dynsym, the
// symbols ElfFile::function_symbols chooses) and the PT_LOAD segment that holds it. A name with
// several addresses (a local function in two objects) is probed at each, as perf does.
//
// An offset must land inside the function and on the first byte of one of its instructions: a
// uprobe elsewhere replaces a byte in the middle of an instruction with the breakpoint, and the
// probed program then runs garbage (SIGSEGV, SIGILL, or silently wrong results) whenever the
// event is enabled. perf 6.1 checks only the function's size (and with DWARF only); vperf
// proves the boundary too, by decoding the function from its entry (check_function_offset).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "symbols/elf_file.h"
#include "symbols/symbol.h"

namespace vperf::symbols {

struct FunctionProbePoint {
  uint64_t address = 0;      // the function's ELF virtual address, plus the offset
  uint64_t file_offset = 0;  // ... as a file offset: what uprobe_events takes
};

// Where the instructions of a function's code start, as offsets from its first byte, sorted;
// or an Error saying why they cannot be known (no decoder for the machine, undecodable bytes).
using InstructionDecoder = std::function<Result<std::vector<uint64_t>>(std::span<const uint8_t> code)>;

// Whether `offset` bytes into `function` (`size` bytes) is a place for a probe: inside the
// function and at one of `instruction_starts` (offset 0, the entry, always is). An Error, one
// line, names the function's size, or the instructions on either side of the offset, or why
// the boundary cannot be proven (`instruction_starts`' own Error).
Result<void> check_function_offset(std::string_view function, uint64_t size, uint64_t offset,
                                   const Result<std::vector<uint64_t>>& instruction_starts);

// The bytes of [address, address + size) as `elf`'s loaded segments hold them in the file, or
// an Error when some lie outside the file's part of every segment (the size is bounded by them).
Result<std::vector<uint8_t>> loaded_code(const ElfFile& elf, uint64_t address, uint64_t size);

// The probe points of `function` + `offset` among `symbols` of a file whose PT_LOAD segments are
// `segments` (named `file_name` in errors), by address. `instruction_starts(entry, size)`
// decodes the function at `entry` when the offset is not 0. A symbol of unknown size (0) ends
// where the next symbol or its segment does (perf's symbols__fixup_end). An Error says what to
// do when the function is not there, or the offset is not a place for a probe.
Result<std::vector<FunctionProbePoint>> function_probe_points(
    const std::vector<SymbolSource>& symbols, const std::vector<LoadSegment>& segments, std::string_view file_name,
    std::string_view function, uint64_t offset,
    const std::function<Result<std::vector<uint64_t>>(uint64_t entry, uint64_t size)>& instruction_starts);

// The same for an ELF file, its code decoded by `decode` (an empty decoder: offsets other than 0
// are refused, the boundary being unprovable).
Result<std::vector<FunctionProbePoint>> function_probe_points(const std::filesystem::path& file, std::string_view function,
                                                               uint64_t offset, const InstructionDecoder& decode = {});

// The ELF file a probe reads (-x, -m, -k), refused in one line when it is not one: not a
// regular file (a directory, FIFO or device; never opened for reading, so a FIFO cannot block),
// not an ELF file (empty, or another format), or an ELF file cut short (its headers, sections or
// segments claim bytes past its end).
Result<ElfFile> open_probe_target(const std::filesystem::path& file);

}  // namespace vperf::symbols
