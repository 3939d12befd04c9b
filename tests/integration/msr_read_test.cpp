// vperf msr read on this machine's real /dev/cpu/0/msr, or its real absence.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/capability.h"
#include "support/run_program.h"

namespace vperf {
namespace {

TEST(MsrRead, ReadsOrSaysWhatToDo) {
  auto r = test::run_vperf({"msr", "read", "IA32_NO_SUCH_REGISTER"});
  EXPECT_EQ(r.exit_code, 2) << "an unknown register name is a usage error: " << r.err;

  auto read = test::run_vperf({"msr", "read", "IA32_MPERF", "MSR_PLATFORM_INFO"});
  if (!std::filesystem::exists("/dev/cpu/0/msr")) {
    // No msr driver here: one error line that names the fix, nothing on stdout.
    EXPECT_EQ(read.exit_code, 1);
    EXPECT_EQ(read.err.rfind("vperf: error: cannot read MSRs: open /dev/cpu/0/msr", 0), 0u) << read.err;
    // modprobe where the kernel loads modules, else a kernel with the driver.
    EXPECT_NE(read.err.find(std::filesystem::exists("/proc/modules") ? "modprobe msr" : "CONFIG_X86_MSR"), std::string::npos) << read.err;
    EXPECT_TRUE(read.out.empty()) << read.out;
    return;
  }
  VPERF_REQUIRE(test::running_as_root(), "root to read /dev/cpu/0/msr");
  // A hypervisor may hide a register (EIO, shown in place, exit 1); a readable one is printed.
  EXPECT_TRUE(read.exit_code == 0 || read.exit_code == 1) << read.err;
  EXPECT_NE(read.out.find("CPU 0  IA32_MPERF (0xe7)  "), std::string::npos) << read.out;
}

}  // namespace
}  // namespace vperf
