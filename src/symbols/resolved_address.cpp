#include "symbols/resolved_address.h"

namespace vperf::symbols {

char level_for_cpumode(uint8_t cpumode) {
  switch (cpumode & PERF_RECORD_MISC_CPUMODE_MASK) {
    case PERF_RECORD_MISC_KERNEL: return 'k';
    case PERF_RECORD_MISC_USER: return '.';
    case PERF_RECORD_MISC_GUEST_KERNEL: return 'g';
    case PERF_RECORD_MISC_GUEST_USER: return 'u';
    default: return 'H';
  }
}

std::string_view ResolvedAddress::symbol_name() const { return symbol ? std::string_view(symbol->name) : "[unknown]"; }

std::string_view ResolvedAddress::dso_name() const { return map ? std::string_view(map->dso->name()) : "[unknown]"; }

std::string ResolvedAddress::dso_short_name() const { return map ? map->dso->short_name() : "[unknown]"; }

}  // namespace vperf::symbols
