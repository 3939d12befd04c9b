#pragma once
// Source lines and inline chains from DWARF (libdw), for annotate and --inline.
//
// For an address, the chain is innermost first: frames[0] is the code at the address (an
// inlined callee if the compiler inlined one there), each next frame is the function it was
// inlined into, and the last is the out-of-line function that owns the address. Each frame's
// location is where that frame is executing: the line-table row for frames[0], the call site
// (DW_AT_call_file/line of the inlined instance) for the callers.
#include <elfutils/libdw.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::symbols {

struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool operator==(const SourceLocation&) const = default;
};

struct InlineFrame {
  std::string function;  // demangled, without parameters (as perf shows it)
  SourceLocation location;
  bool inlined = false;  // true for a DW_TAG_inlined_subroutine, false for the owning function
};

// DWARF 5 line tables may name a file relative to the compile unit's directory (gcc 12 writes
// "../src/x.cpp" under DW_AT_comp_dir): joined here, so the path does not depend on the
// directory vperf runs in.
std::string file_in_cu(const char* file, Dwarf_Die* cu);

class DwarfInfo {
 public:
  // `path` is a file with .debug_info: the binary itself or its separate debuginfo.
  static Result<DwarfInfo> open(const std::filesystem::path& path);
  DwarfInfo(DwarfInfo&& other) noexcept;
  DwarfInfo& operator=(DwarfInfo&& other) noexcept;
  DwarfInfo(const DwarfInfo&) = delete;
  DwarfInfo& operator=(const DwarfInfo&) = delete;
  ~DwarfInfo();

  // Addresses are ELF virtual addresses (as in the symbol table).
  std::optional<SourceLocation> line_at(uint64_t vaddr) const;
  Result<std::vector<InlineFrame>> frames_at(uint64_t vaddr) const;
  Dwarf* handle() const { return dwarf_; }

 private:
  DwarfInfo() = default;
  ScopedFd fd_;
  Dwarf* dwarf_ = nullptr;
};

}  // namespace vperf::symbols
