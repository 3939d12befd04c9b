#include <algorithm>
#include <cstring>
#include <memory>

#include "symbols/symbol.h"

#include "symbols/demangle.h"

namespace vperf::symbols {
namespace {

constexpr uint64_t kPage = 4096;

uint64_t round_up_page(uint64_t v) { return (v + kPage - 1) / kPage * kPage; }

size_t leading_underscores(std::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// perf's choose_best_symbol: true if `a` should be kept over `b` (same start address).
bool prefer_first(const Symbol& a, const Symbol& b) {
  bool a_sized = a.end > a.start, b_sized = b.end > b.start;
  if (a_sized != b_sized) return a_sized;
  bool a_weak = a.binding == SymbolBinding::Weak, b_weak = b.binding == SymbolBinding::Weak;
  if (a_weak != b_weak) return !a_weak;
  bool a_global = a.binding == SymbolBinding::Global, b_global = b.binding == SymbolBinding::Global;
  if (a_global != b_global) return a_global;
  size_t a_us = leading_underscores(a.name), b_us = leading_underscores(b.name);
  if (a_us != b_us) return a_us < b_us;
  if (a.name.size() != b.name.size()) return a.name.size() > b.name.size();
  return true;
}

// prefer_first by the names as shown: `mangled` names are compared demangled, as perf compares
// the names it demangled while loading.
bool prefer_first_shown(const Symbol& a, const Symbol& b, bool mangled) {
  if (!mangled || (!a.name.starts_with("_Z") && !b.name.starts_with("_Z"))) return prefer_first(a, b);
  const std::string a_name = demangle(a.name), b_name = demangle(b.name);
  Symbol a_shown = a, b_shown = b;
  a_shown.name = a_name;
  b_shown.name = b_name;
  return prefer_first(a_shown, b_shown);
}

}  // namespace

std::string_view SymbolNames::keep(std::string_view name) {
  constexpr size_t kBlock = 64 * 1024;
  if (name.empty()) return {};
  if (blocks_.empty() || name.size() > block_size_ - block_used_) {
    block_size_ = std::max(kBlock, name.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
    block_used_ = 0;
  }
  char* at = blocks_.back().get() + block_used_;
  std::copy(name.begin(), name.end(), at);
  block_used_ += name.size();
  return {at, name.size()};
}

SymbolTable SymbolTable::build(std::vector<SymbolSource> sources, SizeInference inference, std::shared_ptr<const SymbolNames> names) {
  std::vector<Symbol> symbols;
  symbols.reserve(sources.size());
  for (const auto& s : sources) {
    uint64_t size = inference == SizeInference::Kallsyms ? 0 : s.size;
    symbols.push_back(Symbol{s.start, s.start + size, s.name, s.binding, s.object});
  }
  return from_symbols(std::move(symbols), std::move(names));
}

SymbolTable SymbolTable::from_symbols(std::vector<Symbol> symbols, std::shared_ptr<const SymbolNames> names, bool mangled) {
  auto by_start = [](const Symbol& a, const Symbol& b) { return a.start < b.start; };
  // kallsyms and most symbol tables come sorted: checking is one pass, sorting a merge sort.
  if (!std::is_sorted(symbols.begin(), symbols.end(), by_start)) std::stable_sort(symbols.begin(), symbols.end(), by_start);

  // Sizes first, as perf does (symbols__fixup_end before symbols__fixup_duplicate): of two
  // zero-sized aliases, the first stays zero-sized and so loses to the second.
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    if (symbols[i].end == symbols[i].start) symbols[i].end = symbols[i + 1].start;
  if (!symbols.empty() && symbols.back().end == symbols.back().start)
    symbols.back().end = round_up_page(symbols.back().start) + kPage;

  // One symbol per start address, compacted in place.
  size_t kept = 0;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (kept > 0 && symbols[kept - 1].start == symbols[i].start) {
      if (!prefer_first_shown(symbols[kept - 1], symbols[i], mangled)) symbols[kept - 1] = symbols[i];
      continue;
    }
    symbols[kept++] = symbols[i];
  }
  symbols.resize(kept);
  // A symbol that was still zero-sized (an alias that lost nothing) would break the invariant.
  std::erase_if(symbols, [](const Symbol& s) { return s.end <= s.start; });
  SymbolTable table;
  table.storage_ = std::make_shared<Storage>();
  table.storage_->count = symbols.size();
  table.storage_->symbols = std::move(symbols);
  table.storage_->mangled = mangled;
  table.storage_->names = std::move(names);
  return table;
}

namespace {

template <class T>
T read_at(const uint8_t* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// Where a packed entry's fields lie (PackedSymbols).
constexpr size_t kEndAt = 8, kNameOffsetAt = 16, kNameLengthAt = 20, kBindingAt = 22;

}  // namespace

std::optional<Symbol> PackedSymbols::symbol(size_t i) const {
  const uint8_t* entry = entries.data() + i * kEntryBytes;
  const auto offset = read_at<uint32_t>(entry + kNameOffsetAt);
  const auto length = read_at<uint16_t>(entry + kNameLengthAt);
  const uint8_t binding = entry[kBindingAt];
  const uint64_t first = start(i), last = end(i);
  if (last <= first || binding > static_cast<uint8_t>(SymbolBinding::Weak)) return std::nullopt;
  if (offset > names.size() || length > names.size() - offset) return std::nullopt;
  return Symbol{first, last, names.substr(offset, length), static_cast<SymbolBinding>(binding)};
}

uint64_t PackedSymbols::start(size_t i) const { return read_at<uint64_t>(entries.data() + i * kEntryBytes); }

uint64_t PackedSymbols::end(size_t i) const { return read_at<uint64_t>(entries.data() + i * kEntryBytes + kEndAt); }

std::string_view PackedSymbols::name(size_t i) const {
  const uint8_t* entry = entries.data() + i * kEntryBytes;
  const auto offset = read_at<uint32_t>(entry + kNameOffsetAt);
  const auto length = read_at<uint16_t>(entry + kNameLengthAt);
  if (offset > names.size() || length > names.size() - offset) return {};
  return names.substr(offset, length);
}

std::optional<SymbolTable> SymbolTable::from_packed(PackedSymbols packed, std::shared_ptr<const SymbolNames> names) {
  if (packed.entries.size() % PackedSymbols::kEntryBytes != 0) return std::nullopt;
  const size_t count = packed.size();
  // The ends only: a pass over every entry mapped all of a kernel's 3 MB of them, a page fault
  // per 4 KB that lookups never reach (a third of a small flame graph's time). Each entry is
  // checked when a lookup reaches it (usable).
  if (count > 0 && (!packed.symbol(0) || !packed.symbol(count - 1) || (count > 1 && packed.start(0) >= packed.start(count - 1))))
    return std::nullopt;
  SymbolTable table;
  if (count == 0) return table;
  table.storage_ = std::make_shared<Storage>();
  table.storage_->count = count;
  table.storage_->packed_table = true;
  table.storage_->packed = packed;
  table.storage_->names = std::move(names);
  return table;
}

uint64_t SymbolTable::start_at(size_t i) const {
  const Storage& s = *storage_;
  return s.packed_table ? s.packed.start(i) : s.symbols[i].start;
}

uint64_t SymbolTable::end_at(size_t i) const {
  const Storage& s = *storage_;
  return s.packed_table ? s.packed.end(i) : s.symbols[i].end;
}

bool SymbolTable::usable(size_t i) const {
  const Storage& s = *storage_;
  if (!s.packed_table) return true;
  // Sorted where this entry lies: the lookups' binary search relies on nothing more.
  return s.packed.symbol(i) && (i == 0 || s.packed.start(i - 1) < s.packed.start(i)) &&
         (i + 1 == s.count || s.packed.start(i) < s.packed.start(i + 1));
}

Symbol SymbolTable::made_symbol(size_t i) const {
  Storage& s = *storage_;
  if (s.packed_table) {
    if (std::optional<Symbol> symbol = s.packed.symbol(i)) return *symbol;
    return Symbol{s.packed.start(i), s.packed.start(i), {}, SymbolBinding::Local};  // a damaged entry
  }
  Symbol symbol = s.symbols[i];
  if (symbol.name.starts_with("_Z")) symbol.name = s.demangled.keep(demangle(symbol.name));
  return symbol;
}

const Symbol& SymbolTable::make(size_t i) const {
  Storage& s = *storage_;
  std::lock_guard lock(s.making);
  auto [it, inserted] = s.made.try_emplace(i);
  if (inserted) it->second = made_symbol(i);
  return it->second;
}

const Symbol& SymbolTable::at(size_t i) const {
  const Storage& s = *storage_;
  if (s.packed_table || (s.mangled && s.symbols[i].name.starts_with("_Z"))) return make(i);
  return s.symbols[i];
}

std::span<const Symbol> SymbolTable::symbols() const {
  if (!storage_) return {};
  Storage& s = *storage_;
  if (!s.packed_table && !s.mangled) return s.symbols;
  std::call_once(s.all_made, [&] {
    s.all.reserve(s.count);
    std::lock_guard lock(s.making);  // made_symbol keeps names in `demangled`
    for (size_t i = 0; i < s.count; ++i)
      if (!s.packed_table || (s.packed.symbol(i) && (s.all.empty() || s.all.back().start < s.packed.start(i))))
        s.all.push_back(made_symbol(i));
  });
  return s.all;
}

const Symbol* SymbolTable::find(uint64_t addr) const {
  // The first symbol starting after addr, then a few back: an enclosing symbol may start before
  // a smaller one that ends early.
  size_t low = 0, high = size();
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (start_at(middle) <= addr) low = middle + 1;
    else high = middle;
  }
  for (size_t i = low, steps = 0; i > 0 && steps < 8; ++steps) {
    --i;
    if (addr >= start_at(i) && addr < end_at(i) && usable(i)) return &at(i);
  }
  return nullptr;
}

const Symbol* SymbolTable::find_by_name(std::string_view name) const {
  for (size_t i = 0; i < size(); ++i)
    if ((storage_->packed_table ? storage_->packed.name(i) : at(i).name) == name && usable(i)) return &at(i);
  return nullptr;
}

}  // namespace vperf::symbols
