#pragma once
// Capability-gated tests: a test that needs something this machine may lack (a hardware PMU,
// kprobes, root) skips with the reason, so the skip is counted and shown, never a silent pass.
#include <gtest/gtest.h>

#include <string>

namespace vperf::test {

bool running_as_root();
// perf_event_open of PERF_COUNT_HW_INSTRUCTIONS on this thread succeeds.
bool has_hardware_pmu();
// tracefs is mounted (or mountable) at /sys/kernel/tracing with an events/ directory.
bool has_tracefs();
bool has_kprobes();
bool has_uprobes();
// This process maps a [vdso] (a line of /proc/self/maps says so), so the kernel gives one.
bool maps_vdso();
// /proc/kallsyms exists and shows real addresses (not all zeros under kernel.kptr_restrict):
// decided from its first line, without the product's parser.
bool kallsyms_shows_addresses();
// The FlameGraph scripts (flamegraph.pl, stackcollapse-perf.pl, difffolded.pl): $FLAMEGRAPH_DIR
// when set, else the pinned copy in ../shared/tools/FlameGraph; empty if that holds no
// flamegraph.pl.
std::string flamegraph_dir();
// Path of a program on PATH, or empty.
std::string find_program(const std::string& name);

}  // namespace vperf::test

// Skips the current test with `why` unless `condition` holds.
#define VPERF_REQUIRE(condition, why)                                  \
  do {                                                                 \
    if (!(condition)) GTEST_SKIP() << "needs " << why << " (" #condition ")"; \
  } while (0)
