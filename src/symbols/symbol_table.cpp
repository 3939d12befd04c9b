#include <algorithm>

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

struct Loaded {
  Symbol symbol;
  bool in_module = false;
};

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

SymbolTable SymbolTable::build(std::vector<SymbolSource> sources, SizeInference inference) {
  std::vector<Loaded> loaded;
  loaded.reserve(sources.size());
  for (auto& s : sources) {
    uint64_t size = inference == SizeInference::Kallsyms ? 0 : s.size;
    loaded.push_back(Loaded{Symbol{s.start, s.start + size, std::move(s.name), s.binding}, s.in_module});
  }
  std::stable_sort(loaded.begin(), loaded.end(),
                   [](const Loaded& a, const Loaded& b) { return a.symbol.start < b.symbol.start; });

  // Sizes first, as perf does (symbols__fixup_end before symbols__fixup_duplicate): of two
  // zero-sized aliases, the first stays zero-sized and so loses to the second.
  for (size_t i = 0; i + 1 < loaded.size(); ++i) {
    Symbol& prev = loaded[i].symbol;
    const Loaded& next = loaded[i + 1];
    if (prev.end != prev.start) continue;
    if (inference == SizeInference::Kallsyms && loaded[i].in_module != next.in_module)
      prev.end = round_up_page(prev.end + kPage);
    else
      prev.end = next.symbol.start;
  }
  if (!loaded.empty() && loaded.back().symbol.end == loaded.back().symbol.start)
    loaded.back().symbol.end = round_up_page(loaded.back().symbol.start) + kPage;

  SymbolTable table;
  table.symbols_.reserve(loaded.size());
  for (auto& l : loaded) {
    if (!table.symbols_.empty() && table.symbols_.back().start == l.symbol.start) {
      if (!prefer_first(table.symbols_.back(), l.symbol)) table.symbols_.back() = std::move(l.symbol);
      continue;
    }
    table.symbols_.push_back(std::move(l.symbol));
  }
  // A symbol that was still zero-sized (an alias that lost nothing) would break the invariant.
  std::erase_if(table.symbols_, [](const Symbol& s) { return s.end <= s.start; });
  return table;
}

const Symbol* SymbolTable::find(uint64_t addr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](uint64_t a, const Symbol& s) { return a < s.start; });
  // A few symbols back: an enclosing symbol may start before a smaller one that ends early.
  for (int steps = 0; it != symbols_.begin() && steps < 8; ++steps) {
    --it;
    if (it->contains(addr)) return &*it;
  }
  return nullptr;
}

const Symbol* SymbolTable::find_by_name(std::string_view name) const {
  for (const auto& s : symbols_)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace vperf::symbols
