#pragma once
// The kernel's symbols from /proc/kallsyms (or a guest's copy of it).
//
// Format, one symbol a line: "ADDRESS TYPE NAME" or "ADDRESS TYPE NAME\t[MODULE]", ADDRESS in
// hex without 0x, TYPE one letter (upper case = global, 'W'/'w' = weak). Like perf 6.1
// (map__process_kallsym_symbol) vperf keeps types T, W, D and B in either case: text symbols
// are what samples land in, data symbols bound the inferred size of the text before them.
// Symbols carry no size; each ends where the next one starts (SizeInference::Kallsyms).
//
// Under kptr_restrict, or for an unprivileged reader, every address reads as 0; loading such a
// file is an Error that says how to fix it.
//
// The relocation reference is the address of "_text" (else "_stext"): perf records it as the
// pgoff of the kernel's PERF_RECORD_MMAP ("[kernel.kallsyms]_text"), so samples recorded under
// another KASLR offset can be shifted onto these addresses.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "symbols/symbol.h"

namespace vperf::symbols {

struct RelocationReference {
  std::string name;  // "_text" or "_stext"
  uint64_t address = 0;
};

class Kallsyms {
 public:
  static Result<Kallsyms> load(const std::filesystem::path& path = "/proc/kallsyms");
  // Only the relocation reference, read up to the line that holds it (near the top): what a
  // reader of a recording needs before any kernel address is resolved. nullopt where the file
  // has none or hides the addresses.
  static Result<std::optional<RelocationReference>> load_relocation_reference(
      const std::filesystem::path& path = "/proc/kallsyms");
  // Only the kernel image's part, from its finished table and its markers (kernel_image_cache.h).
  static Kallsyms kernel_image(SymbolTable kernel, std::map<std::string, uint64_t, std::less<>> markers);
  // `source` names the text in errors.
  static Result<Kallsyms> parse(std::string_view text, std::string_view source);

  // The kernel image's symbols (lines without a [module]).
  const SymbolTable& kernel() const { return kernel_; }
  // Symbols of each module, by module name without brackets ("kvm", "__builtin__ftrace").
  const std::map<std::string, SymbolTable>& modules() const { return modules_; }
  const SymbolTable* module(std::string_view name) const;

  const std::optional<RelocationReference>& relocation_reference() const { return reloc_; }
  // Address of a kernel (not module) symbol by name: a kept one, or a marker of any type
  // ("_etext", "__start_orc_unwind_ip", "linux_banner").
  std::optional<uint64_t> address_of(std::string_view name) const;
  // The kernel image's markers kept by address whatever their type (see address_of).
  const std::map<std::string, uint64_t, std::less<>>& markers() const { return markers_; }

 private:
  friend class KallsymsParser;
  void set_relocation_reference();
  SymbolTable kernel_;
  std::map<std::string, SymbolTable> modules_;
  std::map<std::string, uint64_t, std::less<>> markers_;  // _text, _stext, _etext, ORC tables, linux_banner
  std::optional<RelocationReference> reloc_;
};

// The fix for a kallsyms whose addresses are all hidden.
std::string kallsyms_restricted_hint();

}  // namespace vperf::symbols
