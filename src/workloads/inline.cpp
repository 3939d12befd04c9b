// CPU time spent inside functions the compiler inlines: the ground truth for inlined frames in
// DWARF call graphs. inline_outer is a real (out-of-line) function; inline_middle is inlined
// into it and inline_inner into inline_middle, so nearly every sample lands at an address whose
// DWARF inline chain is inline_inner -> inline_middle -> inline_outer. extern "C" keeps the
// names free of mangling, so DWARF, the symbol table and addr2line all spell them the same.
#include <cinttypes>
#include <cstdio>

#include "workloads.h"

namespace vperf::workloads {

volatile uint64_t inline_sink = 0;

extern "C" {

static inline __attribute__((always_inline)) uint64_t inline_inner(uint64_t h, uint64_t seed) {
  for (int round = 0; round < 4000; ++round) {
    h ^= seed + static_cast<uint64_t>(round);
    h *= 0x100000001b3ULL;
  }
  return h;
}

static inline __attribute__((always_inline)) uint64_t inline_middle(uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int pass = 0; pass < 4; ++pass) h = inline_inner(h, seed + static_cast<uint64_t>(pass));
  return h;
}

__attribute__((noinline, noclone, used)) uint64_t inline_outer(uint64_t seed) { return inline_middle(seed) + 1; }

}  // extern "C"

// The loop is run_spin's, written again on purpose: a shared helper would be inlined here and
// show up as one more inlined frame in the very call graphs this workload is the truth for.
int run_inline(uint64_t ms, const Options& options) {
  const uint64_t end = thread_cpu_ns() + ms * 1000000ULL;
  uint64_t rounds = 0;
  uint64_t seed = 1;
  do {
    seed = inline_outer(seed);
    ++rounds;
  } while (thread_cpu_ns() < end);
  inline_sink = seed;
  if (options.verbose) std::printf("inline: %" PRIu64 " rounds in %" PRIu64 " ms\n", rounds, ms);
  return 0;
}

}  // namespace vperf::workloads
