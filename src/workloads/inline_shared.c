// CPU time under inlined functions shaped as real C programs have them, for DWARF call graphs
// against perf 6.1: perf names inlined frames through binutils' addr2line, which names them
// right in C compile units (in C++ ones it often gives the out-of-line function's name), so
// this one is C. Three shapes, each a rule of perf's inline frames:
//   - inline_shared_step, inlined into both inline_shared_a and inline_shared_b: perf's call
//     graph matches inlined entries by name alone, so the two copies are one branch;
//   - inline_shared_b is static and known to the symbol table by its global alias
//     inline_shared_b_entry (the symbol perf picks): its DWARF name differs, so perf calls
//     its out-of-line frame "inline_shared_b (inlined)", as glibc's __libc_start_main_impl;
//   - inline_shared_rec is recursive and inlined into itself: each inlined copy has the
//     symbol's own name, so perf shows it as the symbol, not "(inlined)".
// All three end in inline_shared_leaf, out of line, where the time goes.
#include <stdint.h>
#include <stdio.h>
#include <time.h>

volatile uint64_t inline_shared_sink;

__attribute__((noinline, noclone, used)) uint64_t inline_shared_leaf(uint64_t h) {
  for (int round = 0; round < 4000; ++round) h = (h ^ (uint64_t)round) * 0x100000001b3ULL;
  return h;
}

static inline __attribute__((always_inline)) uint64_t inline_shared_step(uint64_t h) { return inline_shared_leaf(h + 1) + 1; }

__attribute__((noinline, noclone, used)) uint64_t inline_shared_a(uint64_t h) { return inline_shared_step(h) * 3; }

__attribute__((noinline, noclone, used)) static uint64_t inline_shared_b(uint64_t h) { return inline_shared_step(h) * 5; }
uint64_t inline_shared_b_entry(uint64_t h) __attribute__((alias("inline_shared_b")));

// Two recursive calls keep gcc from turning the recursion into a loop; -O2 inlines it into
// itself a few levels deep instead.
static inline uint64_t inline_shared_rec(uint64_t h, int depth) {
  if (depth <= 0) return inline_shared_leaf(h);
  return inline_shared_rec(h * 3, depth - 1) ^ inline_shared_rec(h * 7, depth - 2);
}

// A depth the compiler cannot see keeps an out-of-line copy of the recursion on the path.
volatile int inline_shared_depth = 5;

__attribute__((noinline, noclone, used)) uint64_t inline_shared_rec_top(uint64_t h) { return inline_shared_rec(h, inline_shared_depth); }

static uint64_t thread_cpu_ns_c(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int vperf_workload_inline_shared(uint64_t ms, int verbose) {
  const uint64_t end = thread_cpu_ns_c() + ms * 1000000ULL;
  uint64_t rounds = 0;
  uint64_t seed = 1;
  do {
    for (int i = 0; i < 8; ++i) {  // inline_shared_rec_top calls the leaf 8 times too
      seed = inline_shared_a(seed);
      seed = inline_shared_b_entry(seed);
    }
    seed = inline_shared_rec_top(seed);
    ++rounds;
  } while (thread_cpu_ns_c() < end);
  inline_shared_sink = seed;
  if (verbose) printf("inline-shared: %llu rounds in %llu ms\n", (unsigned long long)rounds, (unsigned long long)ms);
  return 0;
}
