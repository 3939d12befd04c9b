#pragma once
// What a sample address resolves to, with the names perf prints.
#include <cstdint>
#include <linux/perf_event.h>

#include <memory>
#include <string>
#include <string_view>

#include "symbols/map.h"

namespace vperf::symbols {

// The privilege level of a sample as perf's "[k]"/"[.]" column shows it (perf's al->level):
// 'k' kernel, '.' user, 'g' guest kernel, 'u' guest user, 'H' hypervisor or unknown.
char level_for_cpumode(uint8_t cpumode);

struct ResolvedAddress {
  uint64_t ip = 0;
  char level = 'H';
  std::shared_ptr<const Map> map;  // nullptr: outside every known map
  const Symbol* symbol = nullptr;  // nullptr: no symbol (valid while `map` keeps its Dso alive)
  uint64_t map_relative = 0;       // perf's al->addr (map_ip): what perf script prints in callchains
  uint64_t symbol_address = 0;     // the Dso's own address: ELF vaddr (objdump), or absolute
  uint64_t symbol_offset = 0;      // symbol_address - symbol->start

  const Dso* dso() const { return map ? map->dso.get() : nullptr; }
  // "[unknown]" when unresolved, as perf prints it.
  std::string_view symbol_name() const;
  // perf script's dso field (the recorded path or [bracket] name); "[unknown]" without a map.
  std::string_view dso_name() const;
  // perf report's Shared Object column (basename).
  std::string dso_short_name() const;
  // "[k]", "[.]", "[g]", "[u]", "[H]"
  std::string level_marker() const { return std::string("[") + level + "]"; }
};

}  // namespace vperf::symbols
