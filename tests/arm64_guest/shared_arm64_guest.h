#pragma once
// One booted arm64 guest for the whole vperf_arm64_guest_tests program (a GoogleTest
// environment): Debian's arm64 6.1 kernel under qemu-system-aarch64 -M virt -cpu max with
// -icount shift=N (the program's VPERF_ARM64_ICOUNT_SHIFT: 0 for vperf_arm64_guest_tests, 1 for
// vperf_arm64_guest_shift1_tests), so its emulated PMUv3 (armv8_pmuv3, 7 counters) counts one
// instruction per 2^N cycles, exactly. Inside: vperf and vperf-workload built
// for arm64 at /bin, perf 6.1 for arm64 (Debian's linux-perf) at /lib/vperf-test/perf as the
// oracle, and /lib/vperf-test/vperf-workload-dwarf (no frame pointers, DWARF kept). Booting takes about 15 s.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/guest_rig.h"
#include "support/scratch_tmpdir.h"

namespace vperf::test {

class SharedArm64Guest : public ::testing::Environment {
 public:
  static constexpr unsigned kIcountShift = VPERF_ARM64_ICOUNT_SHIFT;
  // VPERF_ARM64_PMU 0 boots -cpu max,pmu=off: a guest whose hypervisor gives it no PMU.
  static constexpr bool kPmu = VPERF_ARM64_PMU;

  void SetUp() override;
  void TearDown() override { guest_.reset(); }

  // A shell command in the guest, as root; a failure to reach the agent fails the test.
  static GuestCommandResult run(const std::string& command);
  // Fails the calling test (never skips it) when the guest did not boot: every part of this rig
  // comes from Debian's archive and this tree, so a missing part is a failure to fix.
  static bool ready();

 private:
  static inline std::unique_ptr<TempTree> scratch_;
  static inline std::unique_ptr<RunningGuest> guest_;
  static inline std::string boot_error_;
};

}  // namespace vperf::test
