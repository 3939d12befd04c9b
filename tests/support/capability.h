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
// Path of a program on PATH, or empty.
std::string find_program(const std::string& name);

}  // namespace vperf::test

// Skips the current test with `why` unless `condition` holds.
#define VPERF_REQUIRE(condition, why)                                  \
  do {                                                                 \
    if (!(condition)) GTEST_SKIP() << "needs " << why << " (" #condition ")"; \
  } while (0)
