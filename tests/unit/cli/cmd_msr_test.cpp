// vperf msr read against a fake /dev/cpu tree: <root>/<cpu>/msr files holding 8-byte values at
// offset = register address, which is what the msr driver's pread() returns.
#include "cli/cmd_msr.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <sstream>

#include "core/error.h"

namespace vperf::cli {
namespace {

namespace fs = std::filesystem;

class FakeDevCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("vperf-cmd-msr-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write_register(int cpu, uint32_t address, uint64_t value) {
    fs::create_directories(root_ / std::to_string(cpu));
    int fd = ::open((root_ / std::to_string(cpu) / "msr").c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, &value, sizeof value, address), static_cast<ssize_t>(sizeof value));
    ::close(fd);
  }

  fs::path root_;
};

TEST_F(FakeDevCpu, ReadsAndDecodesOnEachCpu) {
  write_register(0, 0xCE, 0x0000080830012200ull);  // max non-turbo ratio 0x22 = 34
  write_register(1, 0xCE, 0x0000080830011c00ull);  // 0x1c = 28
  msr::DevCpuMsrReader reader(root_);
  std::ostringstream out;
  EXPECT_EQ(run_msr_read({"0-1", false, {"msr_platform_info"}}, reader, out), 0);
  const std::string text = out.str();
  EXPECT_NE(text.find("CPU 0  MSR_PLATFORM_INFO (0xce)  0x0000080830012200"), std::string::npos) << text;
  EXPECT_NE(text.find("max_non_turbo_ratio"), std::string::npos) << text;
  EXPECT_NE(text.find("max_non_turbo_ratio             [15:8]   34"), std::string::npos) << text;
  EXPECT_NE(text.find("max_non_turbo_ratio             [15:8]   28"), std::string::npos) << text;

  std::ostringstream json_out;
  EXPECT_EQ(run_msr_read({"1", true, {"0xce"}}, reader, json_out), 0);
  boost::json::value v = boost::json::parse(json_out.str());
  const auto& first = v.as_array().at(0).as_object();
  EXPECT_EQ(first.at("cpu").as_int64(), 1);
  EXPECT_EQ(first.at("register").as_string(), "MSR_PLATFORM_INFO");
  EXPECT_EQ(first.at("fields").as_object().at("max_non_turbo_ratio").to_number<uint64_t>(), 28u);
}

TEST_F(FakeDevCpu, UnknownAddressIsPrintedRaw) {
  write_register(0, 0x11, 0x1234);
  msr::DevCpuMsrReader reader(root_);
  std::ostringstream out;
  EXPECT_EQ(run_msr_read({"", false, {"0x11"}}, reader, out), 0);
  EXPECT_EQ(out.str(), "CPU 0  0x11 (0x11)  0x0000000000001234\n");
}

TEST_F(FakeDevCpu, NoDeviceIsOneErrorNamingTheFix) {
  msr::DevCpuMsrReader reader(root_);
  std::ostringstream out;
  try {
    run_msr_read({"0-1", false, {"IA32_APERF", "IA32_MPERF"}}, reader, out);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 1);
    EXPECT_EQ(e.hint(), msr::msr_driver_hint()) << "modprobe, or a kernel with the driver where modules cannot load";
  }
  EXPECT_TRUE(out.str().empty());
}

TEST_F(FakeDevCpu, ReadPastTheEndFailsInPlaceAndSetsTheExitStatus) {
  write_register(0, 0xE7, 5);  // the file ends at 0xE7 + 8: 0x345 reads nothing
  msr::DevCpuMsrReader reader(root_);
  std::ostringstream out;
  EXPECT_EQ(run_msr_read({"", false, {"IA32_MPERF", "IA32_PERF_CAPABILITIES"}}, reader, out), 1);
  EXPECT_NE(out.str().find("IA32_MPERF (0xe7)  0x0000000000000005"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("IA32_PERF_CAPABILITIES (0x345)  unreadable"), std::string::npos) << out.str();
}

TEST(MsrReadArguments, UnknownNamesAndBadCpuListsAreUsageErrors) {
  msr::DevCpuMsrReader reader("/nonexistent");
  std::ostringstream out;
  for (const MsrReadOptions& bad : {MsrReadOptions{"", false, {"IA32_APERX"}}, MsrReadOptions{"3-1", false, {"IA32_APERF"}},
                                    MsrReadOptions{"", false, {"0x1ffffffff"}}}) {
    try {
      run_msr_read(bad, reader, out);
      FAIL() << "no error";
    } catch (const UserError& e) {
      EXPECT_EQ(e.exit_code(), 2) << e.what();
    }
  }
}

}  // namespace
}  // namespace vperf::cli
