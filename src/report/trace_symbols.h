#pragma once
// The kernel symbols tracepoint print fmts show (%pS, ksym fields) in report and script: perf's
// machine__resolve_kernel_addr, over the host machine's kernel and module maps.
#include "symbols/machines.h"
#include "tracing/tracepoint_decoder.h"

namespace vperf::report {

// Resolves through `host`, which must outlive the resolver.
tracing::KernelSymbolResolver host_kernel_symbols(symbols::Machine& host);

}  // namespace vperf::report
