#include "in_guest/shared_guest.h"

#include <iostream>

#include "core/files.h"
#include "support/capability.h"
#include "support/guest_stall_report.h"
#include "support/run_program.h"

namespace vperf::test {

void SharedGuest::SetUp() {
  if (find_program("qemu-system-x86_64").empty()) {
    boot_error_ = "qemu-system-x86 for the test guest (its kernel has kprobes and the function tracers)";
    return;
  }
  Result<GuestRig> rig = guest_rig();
  if (!rig) {
    boot_error_ = rig.error().describe();
    return;
  }
  rig_ = *rig;
  module_ = guest_test_module(rig_);
  boot();
}

void SharedGuest::boot() {
  guest_.reset();
  stalled_ = false;
  std::vector<std::filesystem::path> files;
  if (module_) files.push_back(*module_);
  const std::string perf = find_program("perf");
  if (!perf.empty()) files.push_back(perf);  // its libraries go in beside vperf's
  scratch_ = std::make_unique<TempTree>();
  Result<std::unique_ptr<RunningGuest>> guest = RunningGuest::boot(rig_, scratch_->root() / "vm", true, files, true);
  if (!guest) {
    boot_error_ = guest.error().describe();
    return;
  }
  guest_ = std::move(guest).value();
  Result<GuestCommandResult> mounted = run_in_guest(*guest_, "mount -t tracefs nodev /sys/kernel/tracing && mount -t debugfs nodev /sys/kernel/debug");
  if (!mounted || mounted->exit_code != 0) {
    boot_error_ = "cannot mount tracefs and debugfs in the guest";
    guest_.reset();
    return;
  }
  if (!perf.empty()) {
    Result<GuestCommandResult> version = run_in_guest(*guest_, "/lib/vperf-test/perf --version");
    has_perf_ = version && version->exit_code == 0;
  }
}

void SharedGuest::discard() {
  guest_.reset();
  discarded_ = true;
}

bool SharedGuest::ready() {
  if (!guest_ && discarded_) {
    discarded_ = false;
    boot();
  }
  if (guest_ && stalled_) {
    // The test that saw the stall failed with the guest's state; this one gets a new guest.
    std::cerr << "[ guest    ] booting the guest again: it gave no result in the test before\n";
    stalled_ = false;
    boot();
  }
  if (!guest_) return false;
  Result<GuestCommandResult> answer = run_in_guest(*guest_, "true", std::chrono::seconds(30));
  if (answer && answer->exit_code == 0) return true;
  // A stall is a failure of this test, never absorbed by the boot: the test before may have
  // passed and left the guest stalled. The guest is booted again so that the tests after this
  // one still run on a guest of their own.
  ADD_FAILURE() << "the guest's agent stopped answering before this test (the one before left it stalled: "
                << (answer ? "true exited " + std::to_string(answer->exit_code) : answer.error().describe())
                << "); booting it again. What the guest was doing:\n"
                << guest_stall_report(*guest_);
  boot();
  return guest_ != nullptr;
}

void SharedGuest::TearDown() {
  guest_.reset();
  scratch_.reset();
}

GuestCommandResult SharedGuest::run(const std::string& command) {
  if (!guest_) {
    ADD_FAILURE() << "no guest: " << boot_error_;
    return {};
  }
  if (stalled_) {
    // Each call would wait out the agent's timeout again, and the state was reported once.
    ADD_FAILURE() << "not run, the guest gave no result earlier in this test: " << command;
    return {};
  }
  Result<GuestCommandResult> r = run_in_guest(*guest_, command);
  if (r) return *r;
  stalled_ = true;
  ADD_FAILURE() << "no result from the guest for: " << command << "\n"
                << r.error().describe() << "\nWhat the guest was doing:\n"
                << guest_stall_report(*guest_);
  return {};
}

}  // namespace vperf::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vperf::test::SharedGuest);
  return RUN_ALL_TESTS();
}
