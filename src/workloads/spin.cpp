// CPU burners with a fixed, recognisable call chain for profiles and flame graphs. The
// functions have external linkage, are never inlined and never cloned, so their symbols and
// the chain run_spin -> spin_phase_outer -> spin_phase_{hash,math} -> spin_leaf_{hash,math}
// appear as written. GCC 12 gives a leaf function that needs no stack no frame pointer even
// with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer, and a frame-pointer unwinder then
// loses the leaf's caller; the volatile local in each leaf gives it a stack frame.
#include <sys/syscall.h>
#include <unistd.h>

#include <time.h>

#include <cinttypes>
#include <cstdio>

#include "workloads.h"

#define VPERF_WORKLOAD_FRAME __attribute__((noinline, noclone, used))

namespace vperf::workloads {

volatile uint64_t spin_sink = 0;  // results go here so nothing is optimised away

extern "C" {

VPERF_WORKLOAD_FRAME uint64_t spin_leaf_hash(uint64_t seed) {
  volatile uint64_t frame_anchor = 0;  // see the top of the file
  uint64_t h = seed ^ 0xcbf29ce484222325ULL;  // FNV-1a over the seed's bytes, repeated
  for (int round = 0; round < 2000; ++round) {
    for (int b = 0; b < 8; ++b) {
      h ^= (seed >> (8 * b)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
  frame_anchor = h;
  return frame_anchor;
}

VPERF_WORKLOAD_FRAME uint64_t spin_leaf_math(uint64_t seed) {
  volatile uint64_t frame_anchor = 0;  // see the top of the file
  double x = static_cast<double>(seed % 1000) + 1.5;
  for (int i = 0; i < 4000; ++i) x = x * 0.999 + 1.0 / x;
  frame_anchor = static_cast<uint64_t>(x * 1000.0);
  return frame_anchor;
}

VPERF_WORKLOAD_FRAME uint64_t spin_phase_hash(uint64_t seed) { return spin_leaf_hash(seed) + 1; }
VPERF_WORKLOAD_FRAME uint64_t spin_phase_math(uint64_t seed) { return spin_leaf_math(seed) + 1; }

// Two hash rounds for each math round: a 2:1 split a flame graph test can check roughly.
VPERF_WORKLOAD_FRAME uint64_t spin_phase_outer(uint64_t seed) {
  uint64_t r = spin_phase_hash(seed);
  r += spin_phase_hash(r);
  r += spin_phase_math(r);
  return r;
}

}  // extern "C"

// CPU time, not wall time: `spin 200` is 200 ms on the CPU however busy the machine is, so
// task-clock and the number of samples in a profile are predictable. (A system call, about
// one per 20-50 us of spinning.)
//
// The system call itself, not libc's clock_gettime: for a CPU-time clock the vDSO only falls back
// to it, and a sample landing in that [vdso] code made DWARF profiles differ between tools (perf
// unwinds the vdso only with the copy its build-id cache holds; docs/call-graphs.md).
uint64_t thread_cpu_ns() {
  timespec t{};
  ::syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ULL + static_cast<uint64_t>(t.tv_nsec);
}

VPERF_WORKLOAD_FRAME int run_spin(uint64_t ms, const Options& options) {
  const uint64_t end = thread_cpu_ns() + ms * 1000000ULL;
  uint64_t rounds = 0;
  uint64_t seed = 1;
  do {
    seed = spin_phase_outer(seed);
    ++rounds;
  } while (thread_cpu_ns() < end);
  spin_sink = seed;
  if (options.verbose) std::printf("spin: %" PRIu64 " rounds in %" PRIu64 " ms\n", rounds, ms);
  return 0;
}

}  // namespace vperf::workloads
