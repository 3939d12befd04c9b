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
#include <string>
#include <string_view>
#include <vector>

namespace vperf::symbols {

enum class SymbolBinding : uint8_t { Local, Global, Weak };

struct Symbol {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  std::string name;  // as perf shows it (C++ names demangled, without parameters)
  SymbolBinding binding = SymbolBinding::Global;

  bool contains(uint64_t addr) const { return addr >= start && addr < end; }
  uint64_t size() const { return end - start; }
};

// How zero-sized symbols get their end (perf's symbols__fixup_end).
enum class SizeInference : uint8_t {
  // ELF: a symbol of size 0 ends where the next one starts.
  Elf,
  // kallsyms: every symbol is loaded with size 0 and ends where the next one starts, except at
  // the boundary between kernel and module symbols, where it ends at the next page.
  Kallsyms,
};

struct SymbolSource {
  uint64_t start = 0;
  uint64_t size = 0;  // 0 = unknown
  std::string name;
  SymbolBinding binding = SymbolBinding::Global;
  bool in_module = false;  // kallsyms only: the line named a [module]
};

class SymbolTable {
 public:
  SymbolTable() = default;
  // Sorts (stably: file order breaks ties), infers sizes, then drops duplicates at one address.
  static SymbolTable build(std::vector<SymbolSource> sources, SizeInference inference);

  // The symbol containing addr, or nullptr.
  const Symbol* find(uint64_t addr) const;
  // First symbol with this exact name, or nullptr (linear: for tests and tools, not hot paths).
  const Symbol* find_by_name(std::string_view name) const;

  const std::vector<Symbol>& symbols() const { return symbols_; }
  size_t size() const { return symbols_.size(); }
  bool empty() const { return symbols_.empty(); }

 private:
  std::vector<Symbol> symbols_;
};

}  // namespace vperf::symbols
