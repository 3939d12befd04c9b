// vperf probe on kernel functions (kprobes), for real: this machine's kernel has no kprobes, the
// project's test guest (Debian's 6.1 kernel) has them. vperf and vperf-workload go into the
// guest's initramfs (scripts/test-guest.sh add-vperf) and run there through the guest agent, as
// root on the guest's tracefs. Every test starts and ends with an empty kprobe_events.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/capability.h"
#include "support/guest_rig.h"
#include "support/run_program.h"
#include "support/scratch_tmpdir.h"

namespace vperf::test {
namespace {

class KernelProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(!find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the test guest (its kernel has kprobes)");
    Result<GuestRig> rig = guest_rig();
    ASSERT_TRUE(rig.ok()) << rig.error().describe();
    Result<std::unique_ptr<RunningGuest>> guest = RunningGuest::boot(*rig, scratch_.root() / "vm", true);
    ASSERT_TRUE(guest.ok()) << guest.error().describe();
    guest_ = std::move(guest).value();
    GuestCommandResult mounted = in_guest("mount -t tracefs nodev /sys/kernel/tracing && cat /sys/kernel/tracing/kprobe_events");
    ASSERT_EQ(mounted.exit_code, 0) << mounted.err;
    ASSERT_EQ(mounted.out, "") << "the guest starts with kprobes defined";
  }
  void TearDown() override {
    if (guest_) {
      EXPECT_EQ(in_guest("cat /sys/kernel/tracing/kprobe_events").out, "") << "kprobe_events changed";
    }
  }

  GuestCommandResult in_guest(const std::string& command) {
    Result<GuestCommandResult> r = run_in_guest(*guest_, command);
    EXPECT_TRUE(r.ok()) << r.error().describe();
    return r ? *r : GuestCommandResult{};
  }

  // `vperf stat -x ,` of `events` over a shell loop that opens /etc/passwd `opens` times (each a
  // redirection: one openat, so one do_sys_openat2); the count of the first event.
  long count_opens(const std::string& events, int opens) {
    GuestCommandResult r = in_guest("/bin/vperf stat -x , " + events + " -- /bin/sh -c 'i=0; while [ $i -lt " + std::to_string(opens) +
                                    " ]; do : </etc/passwd; i=$((i+1)); done'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.err.empty() ? -1 : std::stol(r.err.substr(0, r.err.find(',')));
  }

  TempTree scratch_;
  std::unique_ptr<RunningGuest> guest_;
};

// A kprobe with register arguments: the shell's own start-up opens are the same in both runs,
// so 300 opens count exactly 200 more than 100; each hit of a 3-open recording shows the file
// name fetched from user memory; the return probe counts the same; -l and -d as perf's.
TEST_F(KernelProbe, OpensCountExactlyWithTheirArgumentsAndAreDeleted) {
  GuestCommandResult added = in_guest("/bin/vperf probe 'do_sys_openat2 dfd=%di:s32 filename=+0(%si):ustring'");
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_NE(added.out.find("probe:do_sys_openat2 (on do_sys_openat2 with dfd=%di:s32 filename=+0(%si):ustring)"), std::string::npos) << added.out;
  EXPECT_EQ(in_guest("cat /sys/kernel/tracing/kprobe_events").out,
            "p:probe/do_sys_openat2 do_sys_openat2 dfd=%di:s32 filename=+0(%si):ustring\n");  // the kernel's spelling of +0
  ASSERT_EQ(in_guest("/bin/vperf probe -q 'do_sys_openat2%return $retval'").exit_code, 0);

  const long few = count_opens("-e probe:do_sys_openat2", 100), many = count_opens("-e probe:do_sys_openat2", 300);
  EXPECT_GE(few, 100);
  EXPECT_EQ(many - few, 200);
  const long returns_few = count_opens("-e probe:do_sys_openat2__return", 100), returns_many = count_opens("-e probe:do_sys_openat2__return", 300);
  EXPECT_EQ(returns_many - returns_few, 200);

  GuestCommandResult script = in_guest(
      "/bin/vperf record -q -e probe:do_sys_openat2 -o /tmp/k.data -- /bin/sh -c ': </etc/passwd; : </etc/passwd; : </etc/passwd' && "
      "/bin/vperf script -i /tmp/k.data | grep -c 'filename=\"/etc/passwd\"'");
  EXPECT_EQ(script.out, "3\n") << script.err;

  GuestCommandResult listed = in_guest("/bin/vperf probe -l");
  EXPECT_NE(listed.out.find("  probe:do_sys_openat2 (on do_sys_openat2 with dfd filename)"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("  probe:do_sys_openat2__return (on do_sys_openat2%return with arg1)"), std::string::npos) << listed.out;
  GuestCommandResult deleted = in_guest("/bin/vperf probe -d 'probe:*'");
  EXPECT_EQ(deleted.out, "Removed event: probe:do_sys_openat2\nRemoved event: probe:do_sys_openat2__return\n") << deleted.err;
}

// kprobe:FUNC and kretprobe:FUNC in -e live as long as the command: exact counts, and nothing in
// kprobe_events afterwards (TearDown), also when the command fails.
TEST_F(KernelProbe, InlineKernelProbesCountAndLeaveNothing) {
  const long few = count_opens("-e kprobe:do_sys_openat2 -e kretprobe:do_sys_openat2", 100);
  const long many = count_opens("-e kprobe:do_sys_openat2 -e kretprobe:do_sys_openat2", 300);
  EXPECT_EQ(many - few, 200);
  GuestCommandResult failed = in_guest("/bin/vperf stat -e kprobe:do_sys_openat2 -e no_such_event -- /bin/true");
  EXPECT_NE(failed.exit_code, 0);
  GuestCommandResult unknown = in_guest("/bin/vperf stat -e kprobe:no_such_kernel_function_here -- /bin/true");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1) << unknown.err;
}

}  // namespace
}  // namespace vperf::test
