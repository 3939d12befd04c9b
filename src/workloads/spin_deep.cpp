// A CPU burner with a deep, fixed call chain: the shallow stacks of spin.cpp under 20 more
// frames, so benchmarks (bench/speed.sh) and tests see what call-graph readers do per frame.
// One recursive function, deep_recurse, is each of the 20 levels; below it spin.cpp's two
// leaves (spin_leaf_hash, spin_leaf_math) split the time 2:1 as they do under spin. The same rules as spin.cpp keep every frame visible to a
// frame-pointer unwinder:
//   - external linkage, never inlined and never cloned (noinline also stops GCC from inlining
//     the recursion into itself, noclone from specialising it for depth 20), so the symbols
//     appear as written;
//   - a volatile local in each function, so even a leaf keeps a stack frame (see spin.cpp);
//   - the recursive call's result goes through that volatile local before deep_recurse
//     returns, so the call is not in tail position: GCC's tail-recursion pass would otherwise
//     turn the recursion into a loop (it does so even for `return f(n - 1) + 1`, keeping the
//     sum in an accumulator) and the 20 frames would be one.
#include <cinttypes>
#include <cstdio>

#include "workloads.h"

#define VPERF_WORKLOAD_FRAME __attribute__((noinline, noclone, used))

namespace vperf::workloads {

volatile uint64_t spin_deep_sink = 0;  // results go here so nothing is optimised away

extern "C" {

// `depth` more levels of itself, then the leaves: two hash rounds for each math round.
VPERF_WORKLOAD_FRAME uint64_t deep_recurse(uint64_t depth, uint64_t seed) {
  volatile uint64_t frame_anchor = 0;  // see the top of the file
  if (depth > 1) {
    frame_anchor = deep_recurse(depth - 1, seed);
  } else {
    uint64_t r = spin_leaf_hash(seed);
    r += spin_leaf_hash(r);
    r += spin_leaf_math(r);
    frame_anchor = r;
  }
  return frame_anchor + 1;
}

}  // extern "C"

// 20 deep_recurse frames: with run_spin_deep, main and libc's start-up, a sample in a leaf has
// about 25 frames.
constexpr uint64_t kSpinDeepLevels = 20;

// The loop is run_spin's, written again on purpose (see inline.cpp): a shared helper taking the
// round as a function would add a frame of its own to the chain.
VPERF_WORKLOAD_FRAME int run_spin_deep(uint64_t ms, const Options& options) {
  const uint64_t end = thread_cpu_ns() + ms * 1000000ULL;
  uint64_t rounds = 0;
  uint64_t seed = 1;
  do {
    seed = deep_recurse(kSpinDeepLevels, seed);
    ++rounds;
  } while (thread_cpu_ns() < end);
  spin_deep_sink = seed;
  if (options.verbose) std::printf("spin-deep: %" PRIu64 " rounds in %" PRIu64 " ms\n", rounds, ms);
  return 0;
}

}  // namespace vperf::workloads
