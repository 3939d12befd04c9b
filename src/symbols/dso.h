#pragma once
// A DSO ("dynamic shared object" in perf's wide sense): one file or image whose symbols
// samples resolve against: the kernel, a module, an executable or library, the [vdso], a JIT
// map. Symbols are loaded on first use, once (thread-safe), by a loader given at creation.
//
// Address spaces. A Map turns a sample ip into the Dso-relative address perf calls map_ip
// (file offset for file-backed maps, the ip itself for the kernel and JIT maps); the Dso turns
// that into the address its symbols use (ELF virtual address, through the PT_LOAD segments;
// identity otherwise). That second address is what objdump shows, so annotate can use it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "symbols/build_id.h"
#include "symbols/elf_file.h"
#include "symbols/source_lines.h"
#include "symbols/symbol.h"
#include "symbols/symbol_config.h"

namespace vperf::symbols {

enum class DsoKind : uint8_t { Kernel, GuestKernel, Module, User, Vdso, Jit, Unknown };

std::string_view dso_kind_name(DsoKind kind);

// What a loader produces.
struct DsoContents {
  SymbolTable symbols;
  // PT_LOAD segments of the mapped file, for file offset -> virtual address. Empty = identity.
  std::vector<LoadSegment> segments;
  std::vector<CodeSection> code_sections;  // of the file whose symbols these are (srcline needs them)
  std::optional<BuildId> build_id;     // of the file actually mapped
  std::filesystem::path symbol_file;   // where the symbols came from
  std::filesystem::path dwarf_file;    // a file with .debug_info for this DSO, if one was found
};

class Dso {
 public:
  using Loader = std::function<Result<DsoContents>()>;

  // `name` as perf prints it in perf script's dso field: the path as recorded for files,
  // "[kernel.kallsyms]", "[kvm]", "[vdso]", "/tmp/perf-PID.map".
  Dso(DsoKind kind, std::string name, Loader loader);

  // The ELF loader for a file-backed DSO: `recorded_path` under config.symfs, its debuginfo by
  // build-id and debuglink, symbols from the best file with a .symtab (else .dynsym). With an
  // `expected` build-id (from perf.data), a file whose build-id differs is not used.
  static Loader elf_loader(SymbolConfig config, std::string recorded_path, std::optional<BuildId> expected);
  // The same for an in-memory image (the vdso).
  // A kernel image (vmlinux): its ELF symbols at their absolute addresses, and its DWARF.
  static Loader vmlinux_loader(std::filesystem::path path, bool demangle);
  static Loader image_loader(std::function<Result<std::vector<char>>()> read_image, std::string name, bool demangle);

  DsoKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  // perf report's "Shared Object" column: the basename for files, the name for [brackets]
  // (made once: reports compare it for every pair of entries they order).
  const std::string& short_name() const { return short_name_; }
  // One number per short name, the same for every Dso that has it: perf report compares DSOs by
  // their short names, so two files of one basename (a guest's libc and the host's) are one
  // entry of its histogram.
  uint32_t short_name_id() const { return short_name_id_; }
  bool is_kernel() const { return kind_ == DsoKind::Kernel || kind_ == DsoKind::GuestKernel || kind_ == DsoKind::Module; }

  // Loads on first call. On failure the table is empty and load_error() says why.
  const SymbolTable& symbols() const;
  const std::optional<Error>& load_error() const;
  const std::optional<BuildId>& build_id() const;  // of the loaded file (after symbols())
  const DsoContents& contents() const;

  // Map-relative address (perf's map_ip) -> the address symbols use; nullopt if outside every
  // segment of the file.
  std::optional<uint64_t> symbol_address(uint64_t map_relative) const;
  // The symbol at a map-relative address, or nullptr.
  const Symbol* find_symbol(uint64_t map_relative) const;

  // Source line and inline chain at a symbol address (see source_lines.h). Needs DWARF.
  Result<std::vector<InlineFrame>> inline_frames(uint64_t symbol_address) const;
  std::optional<SourceLocation> source_line(uint64_t symbol_address) const;
  // Whether one of the symbols the file itself holds (not a synthesized @plt entry) starts in
  // the executable section of the address, at or before it: binutils' addr2line then names a
  // function there, however far the address is past its end.
  bool file_symbol_before(uint64_t symbol_address) const;
  // Whether the DSO's DWARF has a compile unit over the address (an assembly file's may hold
  // no line for it).
  bool has_compile_unit_at(uint64_t symbol_address) const;

 private:
  void load() const;
  const DwarfInfo* dwarf() const;

  DsoKind kind_;
  std::string name_;
  std::string short_name_;
  uint32_t short_name_id_;
  Loader loader_;
  mutable std::once_flag loaded_;
  mutable DsoContents contents_;
  mutable std::optional<Error> error_;
  mutable std::once_flag dwarf_loaded_;
  mutable std::optional<DwarfInfo> dwarf_;
  mutable std::optional<Error> dwarf_error_;
};

}  // namespace vperf::symbols
