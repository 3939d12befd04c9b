#pragma once
// Which instructions the samples of a perf.data hit, per symbol, as perf annotate counts them:
// each sample's ip, resolved to a symbol, adds its period (1 when the file has no periods) and
// one sample to that symbol's address; one histogram per (event, DSO, symbol).
//
// Symbols are ordered as perf annotate prints them: events in the file's order, and within an
// event the hottest first (period, then samples, then DSO and symbol name to be stable).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "symbols/machines.h"

namespace vperf::report {

struct AddressHits {
  uint64_t samples = 0;
  uint64_t period = 0;
  bool operator==(const AddressHits&) const = default;
};

struct SymbolHits {
  std::string event;
  std::shared_ptr<const symbols::Map> map;  // keeps the Dso, and so `symbol`, alive
  const symbols::Symbol* symbol = nullptr;
  // By the address the symbol table uses (ELF vaddr for user DSOs, the kernel address otherwise).
  std::map<uint64_t, AddressHits> by_address;
  uint64_t samples = 0;
  uint64_t period = 0;

  const symbols::Dso& dso() const { return *map->dso; }
};

struct AnnotateHits {
  std::vector<SymbolHits> symbols;  // in perf annotate's order (see the top of this file)
  uint64_t samples = 0;             // every sample read
  uint64_t without_symbol = 0;      // samples whose ip resolved to no symbol
  std::vector<std::string> warnings;  // the reader's
};

Result<AnnotateHits> collect_annotate_hits(data::PerfDataReader& reader, symbols::Machines& machines);

// Orders `symbols` as perf annotate does; `event_order` lists the event names in file order.
void sort_hottest_first(std::vector<SymbolHits>& symbols, const std::vector<std::string>& event_order);

}  // namespace vperf::report
