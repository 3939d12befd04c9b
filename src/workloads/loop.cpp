// Exactly 2N user-space instructions in one place: a two-instruction count-down loop written in
// assembly, so no compiler can unroll, vectorise or remove it. The ground truth of the
// hardware-counter tests: instructions:u of `vperf-workload loop N` is 2N plus a start-up that
// does not depend on N (the loader, libc, argument parsing), so two runs with different N
// differ by exactly 2 * (N2 - N1); and the loop's address is where cycle samples land.
#include <cstdio>

#include "workloads.h"

namespace vperf::workloads {

extern "C" __attribute__((noinline)) void counted_loop(uint64_t n) {
  if (n == 0) return;
#if defined(__x86_64__)
  asm volatile(
      "1: dec %0\n"
      "   jnz 1b\n"
      : "+r"(n)
      :
      : "cc");
#elif defined(__aarch64__)
  asm volatile(
      "1: subs %0, %0, #1\n"
      "   b.ne 1b\n"
      : "+r"(n)
      :
      : "cc");
#else
#error "the counted loop is written for x86-64 and arm64"
#endif
}

int run_loop(uint64_t n, const Options& options) {
  counted_loop(n);
  if (options.verbose) std::printf("loop: %llu iterations, %llu instructions\n", static_cast<unsigned long long>(n),
                                   static_cast<unsigned long long>(2 * n));
  return 0;
}

}  // namespace vperf::workloads
