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
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/file_mapping.h"

namespace vperf::symbols {

enum class SymbolBinding : uint8_t { Local, Global, Weak };

struct Symbol {
  uint64_t start = 0;
  uint64_t end = 0;       // exclusive
  std::string_view name;  // as perf shows it (C++ names demangled, without parameters); lives in the table's SymbolNames
  SymbolBinding binding = SymbolBinding::Global;
  bool object = false;  // a data object (STT_OBJECT), not code: perf report shows "name+0xoff"

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
  bool object = false;  // STT_OBJECT
};

// Symbols kept as fixed-size entries in a file (the kernel image cache, kernel_image_cache.h):
// kEntryBytes each, the start and the end (u64), the name's offset and length in `names` (u32,
// u16), the binding (u8) and a pad byte, in the host's byte order.
struct PackedSymbols {
  static constexpr size_t kEntryBytes = 24;
  std::span<const uint8_t> entries;  // a whole number of entries
  std::string_view names;

  size_t size() const { return entries.size() / kEntryBytes; }
  // Entry i as a Symbol (its name a view into `names`); nullopt when its binding is unknown, it
  // does not end after it starts, or its name lies outside `names`.
  std::optional<Symbol> symbol(size_t i) const;
  // Entry i's fields as they are (a name outside `names` is empty).
  uint64_t start(size_t i) const;
  uint64_t end(size_t i) const;
  std::string_view name(size_t i) const;
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
  // With `mangled` true, names of C++ symbols ("_Z...") are kept as the ELF has them and each is
  // demangled when a lookup first returns it, as perf shows it (demangle.h): a library's table
  // holds thousands a report never meets (demangling libstdc++'s all was a tenth of a small
  // profile's flame graph). Aliases at one address are still chosen by their demangled names.
  static SymbolTable from_symbols(std::vector<Symbol> symbols, std::shared_ptr<const SymbolNames> names,
                                  bool mangled = false);
  // A table over packed entries that keep the invariants already (sorted by start, one symbol
  // per start, each ending after it starts, names within `names`), as vperf writes them; nullopt
  // when the first or last entry does not. Entries are read where they lie, and checked as
  // lookups reach them: a report meets a few hundred of a kernel's 150k symbols (making them
  // all, 6 MB, a page fault per 4 KB, was 15% of a small profile's flame graph; checking them
  // all, a third). Entries of a damaged file that break the invariants are skipped by find(),
  // left out of symbols() (which then holds fewer than size()) and empty symbols at their
  // start from at(). `names` keeps the entries' bytes alive.
  static std::optional<SymbolTable> from_packed(PackedSymbols packed, std::shared_ptr<const SymbolNames> names);

  // The symbol containing addr, or nullptr.
  const Symbol* find(uint64_t addr) const;
  // First symbol with this exact name, or nullptr (linear: for tests and tools, not hot paths).
  const Symbol* find_by_name(std::string_view name) const;

  // Every symbol, by start (a packed table makes them all, but for damaged entries).
  std::span<const Symbol> symbols() const;
  // The i-th symbol by start, i < size().
  const Symbol& at(size_t i) const;
  const Symbol& front() const { return at(0); }
  const Symbol& back() const { return at(size() - 1); }
  size_t size() const { return storage_ ? storage_->count : 0; }
  bool empty() const { return size() == 0; }

 private:
  struct Storage {
    size_t count = 0;
    std::vector<Symbol> symbols;  // a built table's
    bool mangled = false;         // its C++ names are demangled as they are used
    bool packed_table = false;
    PackedSymbols packed;  // a packed table's entries
    // The Symbols made so far, by index, of a packed table (all its symbols) or of a mangled one
    // (its C++ symbols): nodes never move, so a Symbol handed out stays. (An array of them all,
    // zero until made, cost two page faults per 4 KB it reached: a few hundred lookups across a
    // kernel's 150k symbols touched most of its 5 MB.)
    std::mutex making;
    std::unordered_map<size_t, Symbol> made;
    SymbolNames demangled;  // the names of those made from mangled ones
    std::once_flag all_made;
    std::vector<Symbol> all;  // symbols() of a packed or mangled table
    std::shared_ptr<const SymbolNames> names;
  };
  uint64_t start_at(size_t i) const;
  uint64_t end_at(size_t i) const;
  bool usable(size_t i) const;          // false for a damaged packed entry
  const Symbol& make(size_t i) const;  // of a packed or mangled table
  Symbol made_symbol(size_t i) const;  // entry i, as make() makes it

  // Shared, and immutable but for a packed table's Symbols made on demand: a copy of a table
  // (the kernel's, given to each Dso of a machine's kernel) costs a reference count.
  std::shared_ptr<Storage> storage_;
};

}  // namespace vperf::symbols
