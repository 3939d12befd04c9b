#pragma once

#include <cstddef>

namespace vperf::core {

// For one-shot commands that build large in-memory structures from a perf.data (report,
// script, flamegraph, annotate): grows the heap once by `reserve` bytes, asks the kernel to back
// that range with transparent huge pages (MADV_HUGEPAGE; where THP is "madvise", the default on
// Debian, nothing else would), and stops glibc from giving freed memory back (blocks up to 32 MB
// come from the heap and are used again once freed, where each would otherwise be a mapping of
// its own, faulted in page by page and unmapped when freed). On these VMs a 4 KB page fault costs several microseconds, and a
// 18k-sample flame graph took 2,600 of them (a third of its CPU time); with huge pages it takes
// about 700. The reserve is what small and medium profiles fill: beyond it memory comes in
// 4 KB pages as before, so that the slack of a large profile's structures (vector capacity,
// space reserved ahead) is not made resident 2 MB at a time (with 64 MB, a 230k-sample
// system-wide flame graph peaked above perf script's memory). Idempotent; does nothing (and
// costs nothing) where the heap cannot grow or THP is off. Not for long-running commands:
// freed memory is kept until exit.
void back_heap_with_huge_pages(size_t reserve = size_t{16} << 20);

}  // namespace vperf::core
