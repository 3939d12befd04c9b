#include "msr/msr_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "msr/msr_register.h"
#include "support/fake_event_fs.h"

namespace vperf::msr {
namespace {

namespace fs = std::filesystem;

// A fake /dev/cpu tree: <root>/<cpu>/msr is a sparse regular file holding 8-byte values at
// offset = register address, exactly where the driver would answer a pread. Unlike the real
// device, a file holds bytes, so registers closer than 8 apart (MPERF 0xE7, APERF 0xE8) cannot
// both live in one fake.
class FakeMsrDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("vperf-msr-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "0");
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_ / "0" / "msr", fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  void write_register(uint32_t address, uint64_t value) {
    int fd = ::open((root_ / "0" / "msr").c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, &value, sizeof value, address), static_cast<ssize_t>(sizeof value));
    ::close(fd);
  }
  fs::path root_;
};

TEST_F(FakeMsrDevice, ReadsValueAtRegisterOffset) {
  write_register(address::kPlatformInfo, 0x0000080830012200ull);
  write_register(address::kMperf, 0x1122334455667788ull);
  write_register(address::kPerfCapabilities, 0x33c5);
  DevCpuMsrReader reader(root_);
  auto mperf = reader.read(0, address::kMperf);
  ASSERT_TRUE(mperf.ok()) << mperf.error().describe();
  EXPECT_EQ(*mperf, 0x1122334455667788ull);
  EXPECT_EQ(reader.read(0, address::kPlatformInfo).value(), 0x0000080830012200ull);
  EXPECT_EQ(reader.read(0, address::kPerfCapabilities).value(), 0x33c5u);
}

TEST_F(FakeMsrDevice, ReadsAperf) {
  write_register(address::kAperf, 42);
  DevCpuMsrReader reader(root_);
  EXPECT_EQ(reader.read(0, address::kAperf).value(), 42u);
}

TEST_F(FakeMsrDevice, MissingDeviceIsEnoentWithModprobeHint) {
  DevCpuMsrReader reader(root_);
  auto r = reader.read(0, address::kMperf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, ENOENT);
  EXPECT_NE(r.error().message.find((root_ / "0" / "msr").string()), std::string::npos);
  EXPECT_EQ(msr_error_hint(r.error().errno_value), msr_driver_hint());
  EXPECT_EQ(reader.read(7, address::kMperf).error().errno_value, ENOENT);
}

// modprobe where the kernel loads modules; a kernel without /proc/modules (Firecracker's and
// other minimal kernels) cannot, and only one built with the driver has /dev/cpu/N/msr.
TEST(MsrDriverHint, ModprobeOnlyWhereTheKernelLoadsModules) {
  test::TempTree proc;
  EXPECT_EQ(msr_driver_hint(proc.root() / "modules"),
            "this kernel has no msr driver and cannot load modules (no " + (proc.root() / "modules").string() +
                "): boot a kernel built with CONFIG_X86_MSR");
  proc.write("modules", "msr 16384 0 - Live 0x0000000000000000\n");
  EXPECT_EQ(msr_driver_hint(proc.root() / "modules"), "load the msr driver: modprobe msr");
}

TEST_F(FakeMsrDevice, RegisterBeyondTheFileIsEioAndNamed) {
  write_register(address::kMperf, 1);
  DevCpuMsrReader reader(root_);
  auto r = reader.read(0, address::kPerfCapabilities);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  EXPECT_NE(r.error().message.find("IA32_PERF_CAPABILITIES"), std::string::npos) << r.error().message;
  EXPECT_NE(msr_error_hint(EIO).find("hypervisor"), std::string::npos);
}

TEST_F(FakeMsrDevice, UnreadableDeviceIsEacces) {
  write_register(address::kMperf, 1);
  // Only the device file refuses: its directories stay open to everyone.
  const fs::perms open_dir = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(root_, open_dir);
  fs::permissions(root_ / "0", open_dir);
  fs::permissions(root_ / "0" / "msr", fs::perms::none);
  DevCpuMsrReader reader(root_);
  // Root bypasses file permissions, so the read runs in a child that has given root up
  // (uid 65534, nobody); its exit code carries the verdict back.
  EXPECT_EXIT(
      {
        if (::geteuid() == 0 && ::setresuid(65534, 65534, 65534) != 0) std::_Exit(3);
        auto r = reader.read(0, address::kMperf);
        std::_Exit(r.ok() ? 1 : r.error().errno_value == EACCES ? 0 : 2);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(MsrErrorHint, NamesTheKnob) {
  EXPECT_NE(msr_error_hint(EACCES).find("CAP_SYS_RAWIO"), std::string::npos);
  EXPECT_NE(msr_error_hint(EPERM).find("root"), std::string::npos);
  EXPECT_EQ(msr_error_hint(EINVAL), "");
}

TEST(DevCpuMsrReader, RealDeviceAnswersOrExplains) {
  DevCpuMsrReader reader;
  auto r = reader.read(0, address::kMperf);
  if (r.ok()) {
    // MPERF counts at the reference rate while the CPU runs: a second read cannot be smaller.
    auto again = reader.read(0, address::kMperf);
    ASSERT_TRUE(again.ok()) << again.error().describe();
    EXPECT_GE(*again, *r);
  } else {
    // Whatever the machine, the failure must be one the hint table explains.
    EXPECT_FALSE(msr_error_hint(r.error().errno_value).empty()) << r.error().describe();
    EXPECT_EQ(fs::exists("/dev/cpu/0/msr"), r.error().errno_value != ENOENT) << r.error().describe();
  }
}

}  // namespace
}  // namespace vperf::msr
