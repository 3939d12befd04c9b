#include "report/trace_symbols.h"

#include <linux/perf_event.h>

namespace vperf::report {

tracing::KernelSymbolResolver host_kernel_symbols(symbols::Machine& host) {
  return [&host](uint64_t address) -> std::optional<tracing::KernelSymbol> {
    symbols::ResolvedAddress at = host.resolve(-1, -1, PERF_RECORD_MISC_KERNEL, address);
    if (!at.symbol) return std::nullopt;
    tracing::KernelSymbol symbol{std::string(at.symbol_name()), address - at.symbol_offset, {}};
    if (at.dso() && at.dso()->kind() == symbols::DsoKind::Module) symbol.module = at.dso()->name();
    return symbol;
  };
}

}  // namespace vperf::report
