#pragma once
// A symbol and a sorted table of them, with the clean-ups Linux perf applies after loading
// (tools/perf/util/symbol.c): sizes of zero-sized symbols inferred from the next symbol, and one
// symbol kept per start address (perf's choose_best_symbol order).
//
// Invariants of a SymbolTable: symbols sorted by start; start < end (end exclusive) for every
// symbol; no two symbols share a start address. Addresses are in the Dso's own address space:
// ELF virtual addresses (what objdump shows) for user DSOs, absolute addresses for kallsyms
// and JIT maps.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_mapping.h"

namespace vperf::symbols {

enum class SymbolBinding : uint8_t { Local, Global, Weak };

struct Symbol {
  uint64_t start = 0;
  uint64_t end = 0;       // exclusive
  std::string_view name;  // as perf shows it (C++ names demangled, without parameters); lives in the table's SymbolNames
  SymbolBinding binding = SymbolBinding::Global;

  bool contains(uint64_t addr) const { return addr >= start && addr < end; }
  uint64_t size() const { return end - start; }
};

// How zero-sized symbols get their end (perf's symbols__fixup_end).
enum class SizeInference : uint8_t {
  // ELF: a symbol of size 0 ends where the next one starts.
  Elf,
  // kallsyms: every symbol is loaded with size 0 and ends where the next one starts; the last
  // one of a table ends a page after its start's page (perf's rounding at the boundary between
  // kernel and module symbols, which kallsyms sizes in one list).
  Kallsyms,
};

// Where the names of a table's symbols live: a Symbol's name views this store, so a table of
// 100k kernel symbols is a few blocks of text rather than 100k strings (on a VM every page a
// process first touches is a fault of several microseconds, and the kernel's table is most of a
// report's memory). Views stay valid as long as the store: blocks never move.
class SymbolNames {
 public:
  // A copy of `name` in this store.
  std::string_view keep(std::string_view name);
  // Names that point into `mapping` live as long as this store: they need no copy.
  void hold(FileMapping mapping) { mappings_.push_back(std::move(mapping)); }

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::vector<FileMapping> mappings_;
  size_t block_used_ = 0, block_size_ = 0;
};

struct SymbolSource {
  uint64_t start = 0;
  uint64_t size = 0;      // 0 = unknown
  std::string_view name;  // in the SymbolNames given to SymbolTable::build
  SymbolBinding binding = SymbolBinding::Global;
};

class SymbolTable {
 public:
  SymbolTable() = default;
  // Sorts (stably: file order breaks ties), infers sizes, then drops duplicates at one address.
  // `names` holds the sources' names and the table keeps it; none when the names outlive the
  // table anyway (string literals, an ElfFile that lives longer).
  static SymbolTable build(std::vector<SymbolSource> sources, SizeInference inference,
                           std::shared_ptr<const SymbolNames> names = nullptr);
  // The same from symbols whose end is their start where the size is unknown (kallsyms's
  // lines), sorted and cleaned up in place: no second copy of a large table.
  static SymbolTable from_symbols(std::vector<Symbol> symbols, std::shared_ptr<const SymbolNames> names);

  // The symbol containing addr, or nullptr.
  const Symbol* find(uint64_t addr) const;
  // First symbol with this exact name, or nullptr (linear: for tests and tools, not hot paths).
  const Symbol* find_by_name(std::string_view name) const;

  const std::vector<Symbol>& symbols() const { return storage_ ? storage_->symbols : kNoSymbols; }
  size_t size() const { return symbols().size(); }
  bool empty() const { return symbols().empty(); }

 private:
  struct Storage {
    std::vector<Symbol> symbols;
    std::shared_ptr<const SymbolNames> names;
  };
  static const std::vector<Symbol> kNoSymbols;
  // Immutable once built and shared: a copy of a table (the kernel's, given to each Dso of a
  // machine's kernel) costs a reference count.
  std::shared_ptr<const Storage> storage_;
};

}  // namespace vperf::symbols
