// Exactly n C++ exceptions thrown and caught: libstdc++'s USDT markers libstdcxx:throw and
// libstdcxx:catch fire once each per exception (vperf probe's USDT tests count them).
#include <cinttypes>
#include <cstdio>
#include <stdexcept>

#include "workloads.h"

namespace vperf::workloads {

namespace {

// Not inlined, so the throw is a real __cxa_throw the compiler cannot turn into a jump.
__attribute__((noinline)) void throw_one(uint64_t i) { throw std::runtime_error(i % 2 ? "odd" : "even"); }

}  // namespace

int run_throws(uint64_t n, const Options& options) {
  uint64_t caught = 0;
  for (uint64_t i = 0; i < n; ++i) {
    try {
      throw_one(i);
    } catch (const std::runtime_error&) {
      ++caught;
    }
  }
  if (options.verbose) std::printf("throws: %" PRIu64 " exceptions thrown and caught\n", caught);
  return caught == n ? 0 : 1;
}

}  // namespace vperf::workloads
