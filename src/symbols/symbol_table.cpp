#include <algorithm>
#include <memory>

#include "symbols/symbol.h"

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

}  // namespace

const std::vector<Symbol> SymbolTable::kNoSymbols;

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
    symbols.push_back(Symbol{s.start, s.start + size, s.name, s.binding});
  }
  return from_symbols(std::move(symbols), std::move(names));
}

SymbolTable SymbolTable::from_symbols(std::vector<Symbol> symbols, std::shared_ptr<const SymbolNames> names) {
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
      if (!prefer_first(symbols[kept - 1], symbols[i])) symbols[kept - 1] = symbols[i];
      continue;
    }
    symbols[kept++] = symbols[i];
  }
  symbols.resize(kept);
  // A symbol that was still zero-sized (an alias that lost nothing) would break the invariant.
  std::erase_if(symbols, [](const Symbol& s) { return s.end <= s.start; });
  SymbolTable table;
  table.storage_ = std::make_shared<const Storage>(Storage{std::move(symbols), std::move(names)});
  return table;
}

const Symbol* SymbolTable::find(uint64_t addr) const {
  const std::vector<Symbol>& all = symbols();
  auto it = std::upper_bound(all.begin(), all.end(), addr, [](uint64_t a, const Symbol& s) { return a < s.start; });
  // A few symbols back: an enclosing symbol may start before a smaller one that ends early.
  for (int steps = 0; it != all.begin() && steps < 8; ++steps) {
    --it;
    if (it->contains(addr)) return &*it;
  }
  return nullptr;
}

const Symbol* SymbolTable::find_by_name(std::string_view name) const {
  for (const auto& s : symbols())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace vperf::symbols
