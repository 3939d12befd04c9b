#include "arm64_guest/shared_arm64_guest.h"

#include "support/capability.h"

namespace vperf::test {

namespace {

// perf for arm64, and the workload built without frame pointers and not stripped, for DWARF
// call graphs (/lib/vperf-test/vperf-workload-dwarf).
std::vector<std::filesystem::path> guest_files(const std::filesystem::path& perf) {
  std::vector<std::filesystem::path> files{perf};
#if defined(VPERF_ARM64_WORKLOAD_DWARF)
  files.emplace_back(VPERF_ARM64_WORKLOAD_DWARF);
#endif
  return files;
}

}  // namespace

void SharedArm64Guest::SetUp() {
  if (find_program("qemu-system-aarch64").empty()) {
    boot_error_ = "no qemu-system-aarch64 (scripts/install-deps.sh installs qemu-system-arm)";
    return;
  }
  Result<GuestRig> rig = guest_rig(GuestArch::Arm64);
  if (!rig) {
    boot_error_ = rig.error().describe();
    return;
  }
  Result<std::filesystem::path> perf = guest_perf(*rig);
  if (!perf) {
    boot_error_ = perf.error().describe();
    return;
  }
  scratch_ = std::make_unique<TempTree>();
  Result<std::unique_ptr<RunningGuest>> guest = RunningGuest::boot(*rig, scratch_->root() / "vm", true, guest_files(*perf), false,
                                                                   Arm64GuestCpu{kIcountShift, kPmu});
  if (!guest) {
    boot_error_ = guest.error().describe();
    return;
  }
  guest_ = std::move(guest).value();
}

bool SharedArm64Guest::ready() {
  if (guest_) return true;
  ADD_FAILURE() << "the arm64 guest did not boot: " << boot_error_;
  return false;
}

GuestCommandResult SharedArm64Guest::run(const std::string& command) {
  Result<GuestCommandResult> result = run_in_guest(*guest_, command);
  if (!result) {
    ADD_FAILURE() << "the guest's agent gave no result for: " << command << ": " << result.error().describe();
    return {};
  }
  return *result;
}

}  // namespace vperf::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vperf::test::SharedArm64Guest);
  return RUN_ALL_TESTS();
}
