#pragma once
// The ELF file vperf inject --jit writes for one function of JIT code, as perf inject's genelf
// lays it out so that both tools read either's: an ET_DYN whose .text at kJitElfTextOffset
// (after the ELF header and its one program header, 16-aligned) holds the code, a PT_LOAD over
// it, a FUNC symbol naming it, and a GNU build-id note. The MMAP2 record inject writes for the
// code maps the file at that offset, so an address resolves as in any shared object.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::symbols {

inline constexpr uint64_t kJitElfTextOffset = 0x80;

// Writes `path` (replacing it) and returns the build-id written into it: 20 bytes derived from
// the name, the address and the code, so the same function loaded again gets the same id and
// two functions different ones.
Result<std::vector<uint8_t>> write_jit_elf(const std::filesystem::path& path, uint32_t elf_machine, std::string_view name,
                                           uint64_t load_address, std::span<const uint8_t> code);

}  // namespace vperf::symbols
