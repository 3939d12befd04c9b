// vperf ftrace start --dump-on-oops, for real: the test guest's 6.1 kernel lets root set
// kernel.ftrace_dump_on_oops (this machine refuses it: ftrace_test.cpp checks the one-line
// refusal) and dumps only the top-level buffer. The last test panics its guest, whose console
// must then hold the dump; it runs last in the program (tests/CMakeLists.txt), so no test after
// it pays for a new boot.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "core/files.h"
#include "in_guest/shared_guest.h"
#include "support/capability.h"
#include "support/processes.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

class FtraceOopsDump : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(!find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the test guest (it lets root set ftrace_dump_on_oops)");
    ASSERT_TRUE(SharedGuest::ready()) << SharedGuest::boot_error();
  }
  GuestCommandResult in_guest(const std::string& command) { return SharedGuest::run(command); }
  std::string oops_dump() { return in_guest("cat /proc/sys/kernel/ftrace_dump_on_oops").out; }
};

// Only when asked, and only where 6.1 can dump: a start without the option leaves the sysctl,
// one in an instance is refused before anything changes, each mode is set and reset gives back
// the value before.
TEST_F(FtraceOopsDump, SetOnlyWhenAskedAndGivenBackByReset) {
  ASSERT_EQ(oops_dump(), "0\n");
  GuestCommandResult plain = in_guest("/bin/vperf ftrace start --instance '' -e syscalls:sys_enter_getppid");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(oops_dump(), "0\n");
  ASSERT_EQ(in_guest("/bin/vperf ftrace reset --instance ''").exit_code, 0);

  GuestCommandResult instance = in_guest("/bin/vperf ftrace start --instance oops --dump-on-oops -e syscalls:sys_enter_getppid");
  EXPECT_EQ(instance.exit_code, 1);
  EXPECT_NE(instance.err.find("dumps only the top-level buffer on an oops; instances need Linux 6.10"), std::string::npos) << instance.err;
  EXPECT_NE(instance.err.find("--instance ''"), std::string::npos) << instance.err;
  EXPECT_EQ(in_guest("ls /sys/kernel/tracing/instances").out, "");
  EXPECT_EQ(oops_dump(), "0\n");

  for (const auto& [mode, value] : {std::pair{"", "1\n"}, std::pair{"=all", "1\n"}, std::pair{"=orig_cpu", "2\n"}}) {
    SCOPED_TRACE(mode);
    GuestCommandResult started = in_guest(std::string("/bin/vperf ftrace start --instance '' --dump-on-oops") + mode + " -e syscalls:sys_enter_getppid");
    ASSERT_EQ(started.exit_code, 0) << started.err;
    EXPECT_EQ(oops_dump(), value);
    GuestCommandResult reset = in_guest("/bin/vperf ftrace reset --instance ''");
    ASSERT_EQ(reset.exit_code, 0) << reset.err;
    EXPECT_EQ(oops_dump(), "0\n");
    EXPECT_EQ(in_guest("cat /sys/kernel/tracing/events/syscalls/sys_enter_getppid/enable").out, "0\n");
  }
}

// The kernel's own dump is the ground truth: the workload's N getppid calls, traced in the top
// level with --dump-on-oops, are each on the console after a panic (sysrq c), between the
// kernel's "Dumping ftrace buffer:" and its closing rule.
TEST_F(FtraceOopsDump, APanicDumpsEveryEventOfTheTopLevelBuffer) {
  // The comm filter leaves out the getppid of the shell that execs the workload (the dump
  // would show it under the workload's name: same pid, comm now).
  GuestCommandResult started = in_guest(
      "/bin/vperf ftrace start --instance '' --dump-on-oops -e syscalls:sys_enter_getppid --filter 'comm == \"vperf-workload\"'");
  ASSERT_EQ(started.exit_code, 0) << started.err;
  GuestCommandResult workload = in_guest("sh -c 'echo $$; exec /bin/vperf-workload getppid 30'");
  ASSERT_EQ(workload.exit_code, 0) << workload.err;
  const std::string pid = workload.out.substr(0, workload.out.find('\n'));
  RunningGuest& guest = *SharedGuest::guest();
  const pid_t qemu = guest.qemu_pid();
  ASSERT_GT(qemu, 0);
  // The agent may never answer this one (the kernel stops first), so its reply is not checked:
  // QEMU's end is. The guest boots with panic=-1 and QEMU with -no-reboot, so the panic ends
  // QEMU once the dump is out.
  (void)run_in_guest(guest, "echo c > /proc/sysrq-trigger", std::chrono::seconds(30));
  ASSERT_TRUE(wait_until([&] { return ::kill(qemu, 0) != 0; }, std::chrono::seconds(120))) << "the guest did not end after its panic";
  const std::string console = read_file(guest.dir() / "serial.log", size_t{64} << 20).value_or("");
  SharedGuest::discard();
  const size_t begin = console.find("Dumping ftrace buffer:");
  ASSERT_NE(begin, std::string::npos) << console.substr(console.size() > 4000 ? console.size() - 4000 : 0);
  const std::string dump = console.substr(begin);
  // The dump is in the latency format, whose comm is cut to 8 characters.
  EXPECT_EQ(count_lines_with(dump, "vperf-wo-" + pid + " "), 30u) << dump;
  EXPECT_EQ(count_lines_with(dump, "sys_getppid()"), 30u) << dump;
}

}  // namespace
}  // namespace vperf::test
