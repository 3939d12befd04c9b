#pragma once
// One booted test guest for the whole vperf_in_guest_tests program (a GoogleTest environment):
// the tests that run vperf inside Debian's 6.1 kernel (kprobes, the function tracers) share it,
// so the program boots once (about 20 s under TCG) instead of once per test. Inside: vperf and
// vperf-workload at /bin, and at /lib/vperf-test/ the test kernel module and perf 6.1 when this
// machine can provide them. tracefs is mounted at /sys/kernel/tracing. Each test leaves the
// guest as it found it (no probes, no instances, the nop tracer, the module unloaded).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "support/guest_rig.h"
#include "support/scratch_tmpdir.h"

namespace vperf::test {

class SharedGuest : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;

  // The running guest; nullptr when it could not boot (why: boot_error()) or QEMU is missing.
  static RunningGuest* guest() { return guest_.get(); }
  static const std::string& boot_error() { return boot_error_; }
  static const GuestRig& rig() { return rig_; }
  // The test module on this machine (at /lib/vperf-test/vperf_probe_module.ko in the guest), or
  // why it could not be built.
  static const Result<std::filesystem::path>& module() { return module_; }
  // Whether perf 6.1 is in the guest, at /lib/vperf-test/perf.
  static bool has_perf() { return has_perf_; }

  // A shell command in the guest, as root. A failure to reach the agent fails the test with
  // the guest's state (guest_stall_report.h) and marks the guest stalled: the test's later
  // calls fail at once, and the next test's ready() boots a new guest.
  static GuestCommandResult run(const std::string& command);

  // Called by each test's SetUp: a guest whose agent no longer answers (a test before this one
  // left it stalled) fails the calling test, with what the guest was doing, and is booted again
  // for the tests after it; one that a run() of the test before found stalled is booted again
  // without a second failure. False when there is no guest to
  // use (boot_error() says why).
  static bool ready();
  // Lets go of a guest a test has ended on purpose (it panicked it): the next test's ready()
  // boots another, and a last test costs no boot.
  static void discard();

 private:
  static inline std::unique_ptr<TempTree> scratch_;
  static inline std::unique_ptr<RunningGuest> guest_;
  static inline std::string boot_error_;
  static inline GuestRig rig_;
  static inline Result<std::filesystem::path> module_ = Error{"the guest was not set up"};
  static inline bool has_perf_ = false;
  static inline bool discarded_ = false;
  static inline bool stalled_ = false;  // run() saw the agent fail and reported it
  static void boot();
};

}  // namespace vperf::test
