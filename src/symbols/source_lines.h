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
#include <memory>
#include <optional>
#include <string>
#include <utility>
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

  // Addresses are ELF virtual addresses (as in the symbol table). frames_at indexes a compile
  // unit's functions the first time one of its addresses is asked for (CuFunctions); each
  // next address of that unit is a binary search, where libdw's dwarf_getscopes walks the
  // unit's DIEs again for every address (seconds for an interpreter's main loop, whose one
  // function holds thousands of inlined instances). Safe to call from several threads.
  std::optional<SourceLocation> line_at(uint64_t vaddr) const;
  // Whether a compile unit's ranges hold the address (with or without a line for it).
  bool covers(uint64_t vaddr) const;
  Result<std::vector<InlineFrame>> frames_at(uint64_t vaddr) const;
  Dwarf* handle() const { return dwarf_; }

  // The functions of one compile unit: every subprogram and inlined instance with code, and
  // the unit's addresses cut into disjoint segments that each name the innermost of them.
  struct CuFunctions {
    static constexpr uint32_t kNone = UINT32_MAX;
    struct Function {
      Dwarf_Die die;
      uint32_t caller;  // the function this instance is inlined into; kNone for a subprogram
      bool inlined;     // a DW_TAG_inlined_subroutine
    };
    struct Segment {
      uint64_t start, end;
      uint32_t function;
    };
    std::vector<Function> functions;
    std::vector<Segment> segments;  // sorted by start, not overlapping

    static CuFunctions index(Dwarf_Die* cu);
    uint32_t innermost_at(uint64_t vaddr) const;  // kNone when no function covers it
  };

 private:
  DwarfInfo() = default;
  struct IndexCache;
  const CuFunctions& functions_of(Dwarf_Die* cu) const;
  // The compile unit whose code holds `vaddr`, or nullptr: only inside code_ranges_, whatever
  // the DWARF says (the linker leaves the DWARF of the functions it discarded, duplicate inline
  // and template copies, at address 0).
  Dwarf_Die* code_unit(uint64_t vaddr, Dwarf_Die* cu) const;

  ScopedFd fd_;
  Dwarf* dwarf_ = nullptr;
  std::unique_ptr<IndexCache> index_cache_;
  // The file's executable segments, [start, end) by vaddr, read once; none for a file without
  // program headers (a kernel module), which is taken at its DWARF's word.
  std::vector<std::pair<uint64_t, uint64_t>> code_ranges_;
};

}  // namespace vperf::symbols
