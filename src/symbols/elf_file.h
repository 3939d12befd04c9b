#pragma once
// An ELF file opened with libelf: its type, build-id note, PT_LOAD segments and function
// symbols. Opened from a path or from a memory image (the [vdso]).
//
// Function symbols are chosen as perf 6.1 does (symbol-elf.c, dso__load_sym): .symtab if the
// file has one, else .dynsym; STT_FUNC and STT_GNU_IFUNC symbols that have a name and are
// defined, plus size-0 STT_NOTYPE labels in executable sections (assembly entry points).
// Values stay ELF virtual addresses; names stay mangled (the Dso demangles).
#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"
#include "symbols/build_id.h"
#include "symbols/symbol.h"

namespace vperf::symbols {

// An executable section's addresses, [start, end).
struct CodeSection {
  uint64_t start = 0, end = 0;
};

struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t offset = 0;
  uint64_t filesz = 0;
  uint64_t memsz = 0;
  bool executable = false;
};

// The ELF virtual address of a file offset: through the PT_LOAD segment that holds it, an
// executable one first (perf converts with p_vaddr - p_offset of the executable segment).
std::optional<uint64_t> file_offset_to_vaddr(const std::vector<LoadSegment>& segments, uint64_t offset);

// The file offset of an ELF virtual address: through the PT_LOAD segment whose file-backed part
// holds it (where uprobes are placed: uprobe_events takes file offsets).
std::optional<uint64_t> vaddr_to_file_offset(const std::vector<LoadSegment>& segments, uint64_t address);

class ElfFile {
 public:
  static Result<ElfFile> open(const std::filesystem::path& path);
  // `name` is for messages ("[vdso]").
  static Result<ElfFile> from_image(std::vector<char> image, std::string name);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  const std::string& name() const { return name_; }
  int fd() const { return fd_.get(); }  // -1 for an image
  Elf* handle() const { return elf_; }
  uint16_t type() const;  // ET_EXEC, ET_DYN, ET_REL ...

  std::optional<BuildId> build_id() const;
  std::vector<LoadSegment> load_segments() const;
  // The allocated, executable sections (.init, .plt, .text, .fini, ...), in file order.
  std::vector<CodeSection> code_sections() const;
  // A section that exists and has contents in this file (not SHT_NOBITS, as in stripped files).
  bool has_section_data(std::string_view section) const;
  bool has_symtab() const { return has_section_data(".symtab"); }
  bool has_debug_info() const { return has_section_data(".debug_info") || has_section_data(".zdebug_info"); }
  // A section by name, with its header; nullopt when the file has none.
  struct Section {
    Elf_Scn* scn;
    GElf_Shdr header;
  };
  std::optional<Section> section(std::string_view name) const;
  bool is_64bit() const { return gelf_getclass(elf_) == ELFCLASS64; }
  // The file name in .gnu_debuglink, if any.
  std::optional<std::string> debuglink() const;
  // Function symbols with mangled names and ELF sizes (see the top of this file). The names
  // view this file's string table: valid while the ElfFile lives.
  std::vector<SymbolSource> function_symbols() const;
  // The same, one at a time, in file order: no vector of them all.
  // With `data_objects`, also the named STT_OBJECT symbols of loaded sections (perf's
  // elf_sym__filter keeps them: an address in data is named by its object, "name+0xoff").
  void visit_function_symbols(const std::function<void(const SymbolSource&)>& visit, bool data_objects = false) const;
  // How many entries the table function_symbols reads holds (functions and the rest): a bound
  // on how many it gives.
  size_t symbol_entries() const;
  // Symbols perf synthesizes for PLT entries (dso__synthesize_plt_symbols): "NAME@plt" per
  // .rela.plt/.rel.plt relocation, in relocation order, one entry each (x86: 16 bytes) after
  // the .plt header, or from the start of .plt.sec when there is one; the header itself has no
  // symbol, as in perf 6.1. NAME stays mangled. Empty without a PLT. The names are kept in `names`.
  std::vector<SymbolSource> plt_symbols(SymbolNames& names) const;
  // The address of the data object `name` (STT_OBJECT or STT_COMMON) in .symtab, else .dynsym;
  // a global definition before a file-local one.
  std::optional<uint64_t> object_symbol(std::string_view name) const;

 private:
  ElfFile() = default;
  std::optional<Section> function_symbol_table() const;  // .symtab, else .dynsym
  std::string name_;
  ScopedFd fd_;
  std::shared_ptr<std::vector<char>> image_;  // keeps an in-memory image alive while elf_ uses it
  Elf* elf_ = nullptr;
};

}  // namespace vperf::symbols
