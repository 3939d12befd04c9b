#pragma once
// The subcommands of vperf-workload. Each returns the process exit status (0 on success) and
// prints one "vperf-workload: ..." line on stderr when it fails; with `verbose` it also says
// what it did on stdout. Counts are exact where the kernel allows (see each function).
#include <cstdint>

namespace vperf::workloads {

struct Options {
  bool verbose = false;
  // kvm-pio only: after the n-th `out`, enter the guest once more and require KVM_EXIT_HLT,
  // which proves the guest loop ends where it should; kvm_userspace_exit is then n + 1.
  bool run_to_hlt = false;
};

// Exactly `n` getppid system calls through syscall(2), so libc cannot cache or elide them:
// syscalls:sys_enter_getppid counts exactly n for the process.
int run_getppid(uint64_t n, const Options& options);

// Writes one byte to each of `n` fresh pages of an anonymous private mapping (transparent huge
// pages disabled for it): exactly n minor page faults in the loop. The process as a whole adds
// a fixed start-up cost (loader, libc), measured in tests/integration/workloads_test.cpp.
int run_page_faults(uint64_t n, const Options& options);

// The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID): what spin and inline
// burn, so a busy machine stretches only their wall time.
uint64_t thread_cpu_ns();

// Burns `ms` milliseconds of CPU time (its own, so a busy machine stretches only the wall
// time) in a fixed call chain of non-inlined functions:
//   run_spin -> spin_phase_outer -> { spin_phase_hash (2/3 of the rounds) -> spin_leaf_hash,
//                                     spin_phase_math (1/3)               -> spin_leaf_math }
int run_spin(uint64_t ms, const Options& options);
// spin's two leaves, which spin-deep calls too.
extern "C" uint64_t spin_leaf_hash(uint64_t seed);
extern "C" uint64_t spin_leaf_math(uint64_t seed);

// The same CPU time under a deep call chain (spin_deep.cpp): 20 frames of one recursive
// function above two leaves that split the time 2:1 as spin's do, so a frame-pointer callchain
// has about 25 frames:
//   run_spin_deep -> deep_recurse (20 levels) -> { spin_leaf_hash (2/3), spin_leaf_math (1/3) }
int run_spin_deep(uint64_t ms, const Options& options);

// Burns `ms` milliseconds of CPU time almost all inside two levels of inlined functions:
//   run_inline -> inline_outer [-> inline_middle -> inline_inner, both inlined]
// Both builds inline them (always_inline); vperf-workload-dwarf (-O2 -g) describes the inline
// chain in DWARF, which is what DWARF call graphs expand into inlined frames.
int run_inline(uint64_t ms, const Options& options);

// Burns `ms` milliseconds of CPU time in inline_shared_leaf (inline_shared.c, C), reached three
// ways of about equal time, each through inlined code:
//   vperf_workload_inline_shared -> inline_shared_a [-> inline_shared_step] -> leaf
//                                -> inline_shared_b_entry, an alias of inline_shared_b
//                                   [-> inline_shared_step] -> leaf
//                                -> inline_shared_rec_top [-> inline_shared_rec, inlined into
//                                   itself] -> leaf (three times a round)
extern "C" int vperf_workload_inline_shared(uint64_t ms, int verbose);

// Burns `ms` milliseconds of CPU time in machine code copied into a memfd and mapped
// executable, as a JIT runs its code: the mapping is "/memfd:vperf-jit (deleted)", with no
// symbols (memfd_jit.cpp).
int run_memfd_jit(uint64_t ms, const Options& options);

// Burns `ms` milliseconds of CPU time in two functions of JIT code in anonymous executable
// memory, jit_hot three rounds for each of jit_cold, named in ./jit-PID.dump as perf's jitdump
// agents name theirs (jitdump_jit.cpp); record with -k mono, then inject --jit.
int run_jitdump(uint64_t ms, const Options& options);

// Exactly `n` calls of probe_target(index, index * 3, label, &record) for index 0..n-1, with
// label "even" or "odd", record {index, index * 7, label, {index % 3, index & 0xff},
// {1, 2, index, 4}}; each returns index * scale + (flag ? weight : 0) + label[0] + index
// (probe_calls.cpp): the ground truth of vperf probe's argument and $retval tests. Before each
// call the global probe_calls_made becomes index + 1 and the static probe_last_record a copy of
// the record (fetched at fixed addresses).
int run_probe_calls(uint64_t n, const Options& options);

// Throws and catches exactly `n` C++ exceptions (std::runtime_error through a non-inlined
// function): libstdc++'s libstdcxx:throw and libstdcxx:catch USDT markers fire n times each.
int run_throws(uint64_t n, const Options& options);

// Exactly 2n user instructions in counted_loop, a two-instruction count-down loop in assembly
// (dec/jnz on x86-64, subs/b.ne on arm64): what instructions:u and, under QEMU's -icount,
// cycles:u of the hardware-counter tests are checked against (loop.cpp).
extern "C" void counted_loop(uint64_t n);
int run_loop(uint64_t n, const Options& options);

// The address watched-writes writes to: a page mapped there, fixed (below 2^38, which every
// x86-64 and arm64 user address space has) so that a hardware breakpoint can name it before the
// program starts, as `-e mem:0x3e00000000:w`.
inline constexpr uint64_t kWatchedAddress = 0x3e00000000;

// Writes the 8-byte word at kWatchedAddress exactly `n` times (and reads it never): a write
// breakpoint on it counts exactly n. Nothing else of the program touches that page.
int run_watched_writes(uint64_t n, const Options& options);

// Sleeps `ms` milliseconds (nanosleep, resumed after interruptions).
int run_sleep(uint64_t ms, const Options& options);

// A minimal KVM VMM: one vCPU in 16-bit real mode runs
//     mov ecx, n ; test ecx, ecx ; jz done ; l: out 0x10, al ; dec ecx ; jnz l ; done: hlt
// and the VMM handles each KVM_EXIT_IO. It stops after the n-th `out` exit without entering
// the guest again, so the process makes exactly n KVM_RUN calls: kvm:kvm_pio and
// kvm:kvm_userspace_exit both count exactly n (running on into the final hlt would add one
// more userspace exit, KVM_EXIT_HLT: see Options::run_to_hlt). Exits non-zero if any exit
// is not the expected `out`, or the guest halts early.
int run_kvm_pio(uint64_t n, const Options& options);

}  // namespace vperf::workloads
