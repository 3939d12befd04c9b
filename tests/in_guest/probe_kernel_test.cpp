// vperf probe on kernel functions (kprobes), for real: this machine's kernel has no kprobes, the
// project's test guest (Debian's 6.1 kernel) has them. vperf and vperf-workload go into the
// guest's initramfs (scripts/test-guest.sh add-vperf) and run there through the guest agent, as
// root on the guest's tracefs; one guest serves the program (SharedGuest). Every test starts
// and ends with an empty kprobe_events.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <vector>
#include <string>

#include "in_guest/shared_guest.h"
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
    ASSERT_TRUE(SharedGuest::ready()) << SharedGuest::boot_error();
    ASSERT_EQ(in_guest("cat /sys/kernel/tracing/kprobe_events").out, "") << "the guest starts with kprobes defined";
  }
  void TearDown() override {
    if (!SharedGuest::guest()) return;
    EXPECT_EQ(in_guest("cat /sys/kernel/tracing/kprobe_events").out, "") << "kprobe_events changed";
    // What a failed test left is removed, so that the tests after it in the shared guest start
    // clean (the failure above is the test's own).
    in_guest("echo > /sys/kernel/tracing/kprobe_events; rmmod vperf_probe_module 2>/dev/null; true");
  }

  GuestCommandResult in_guest(const std::string& command) { return SharedGuest::run(command); }

  // `vperf stat -x ,` of `events` over a shell loop that opens /etc/passwd `opens` times (each a
  // redirection: one openat, so one do_sys_openat2); the count of the first event.
  long count_opens(const std::string& events, int opens) {
    GuestCommandResult r = in_guest("/bin/vperf stat -x , " + events + " -- /bin/sh -c 'i=0; while [ $i -lt " + std::to_string(opens) +
                                    " ]; do : </etc/passwd; i=$((i+1)); done'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.err.empty() ? -1 : std::stol(r.err.substr(0, r.err.find(',')));
  }

  const Result<std::filesystem::path>& module_ = SharedGuest::module();  // the test module, at /lib/vperf-test/ in the guest
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

// An offset inside a kernel instruction: the kernel refuses it (x86's can_probe decodes the
// function from its start, EILSEQ), and vperf says what that means and how to find a good one,
// in one line, leaving kprobe_events empty. do_sys_openat2 starts with endbr64 or the 5-byte
// call to __fentry__: byte 1 is inside an instruction either way.
TEST_F(KernelProbe, AnOffsetInsideAnInstructionIsRefusedInOneLine) {
  GuestCommandResult added = in_guest("/bin/vperf probe 'do_sys_openat2+1'");
  EXPECT_NE(added.exit_code, 0);
  EXPECT_EQ(added.out, "");
  EXPECT_EQ(std::count(added.err.begin(), added.err.end(), '\n'), 1) << added.err;
  EXPECT_NE(added.err.find("vperf: error: the kernel refused do_sys_openat2+1: it is not the first byte of an instruction"), std::string::npos)
      << added.err;
  EXPECT_NE(added.err.find("(hint: give the offset of an instruction's first byte"), std::string::npos) << added.err;
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

// A kernel module's functions, lines and variables from its DWARF (-m): the kprobe_events lines
// and -V/-L equal perf probe -m's on this machine (perf reads the .ko offline, without
// kprobes), and in the guest, where the module is loaded, each of 40 calls shows its index, the
// record's member and string and the static's count so far, each return 10 * index.
TEST_F(KernelProbe, ModuleFunctionsLinesAndVariablesComeFromItsDwarf) {
  VPERF_REQUIRE(module_.ok(), "the test module, built against the guest kernel's headers: " + module_.error().describe());
  const std::string ko = module_->string();
  const std::string target = "vperf_probe_module_target";
  if (!find_program("perf").empty()) {
    for (const std::string& definition : std::vector<std::string>{target + " index record->weight record->label:string vperf_probe_module_calls", target + "%return $retval", target + ":2 index",
          "calls_write len buf:ustring", target + " $params", "calls_write;*kstrtoul*", "vperf_probe_module.c:42 i sum", "vperf_probe_module.c:37 n"}) {
      ProgramResult perf = run_program({"perf", "probe", "-m", ko, "-D", definition});
      ProgramResult mine = run_vperf({"probe", "-m", ko, "-D", definition});
      ASSERT_EQ(mine.exit_code, 0) << definition << ": " << mine.err;
      EXPECT_EQ(mine.out, perf.out) << definition << ": " << perf.err;
    }
    for (const std::vector<std::string>& query : std::vector<std::vector<std::string>>{
             {"-V", target}, {"-V", "calls_write", "--externs"}, {"-V", "calls_write", "--range"}, {"-L", "calls_write"}, {"-L", "vperf_probe_module.c:20"}}) {
      std::vector<std::string> perf_argv = {"perf", "probe", "-m", ko}, argv = {"probe", "-m", ko};
      perf_argv.insert(perf_argv.end(), query.begin(), query.end());
      argv.insert(argv.end(), query.begin(), query.end());
      ProgramResult perf = run_program(perf_argv), mine = run_vperf(argv);
      ASSERT_EQ(mine.exit_code, 0) << testing::PrintToString(query) << mine.err;
      EXPECT_EQ(mine.out, perf.out) << testing::PrintToString(query);
    }
  }

  GuestCommandResult loaded = in_guest("insmod /lib/vperf-test/vperf_probe_module.ko");
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  // By name too, as perf finds it: under /lib/modules/RELEASE.
  GuestCommandResult added = in_guest(
      "mkdir -p /lib/modules/$(uname -r)/extra && cp /lib/vperf-test/vperf_probe_module.ko /lib/modules/$(uname -r)/extra/ && "
      "/bin/vperf probe -q -m vperf_probe_module '" + target + " index record->weight record->label:string vperf_probe_module_calls' && "
      "/bin/vperf probe -q -m /lib/vperf-test/vperf_probe_module.ko '" + target + "%return $retval'");
  ASSERT_EQ(added.exit_code, 0) << added.err;
  constexpr int kCalls = 40;
  GuestCommandResult script = in_guest("/bin/vperf record -q -e probe:" + target + " -e probe:" + target + "__return -o /tmp/m.data -- /bin/sh -c 'echo " +
                                       std::to_string(kCalls) + " >/sys/kernel/debug/vperf_probe_module/calls' && /bin/vperf script -i /tmp/m.data");
  ASSERT_EQ(script.exit_code, 0) << script.err;
  std::vector<std::string> calls, returns;
  std::istringstream lines(script.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("probe:" + target + ":") != std::string::npos) calls.push_back(line.substr(line.find(") ") + 2));
    if (line.find("probe:" + target + "__return:") != std::string::npos) returns.push_back(line.substr(line.find(") ") + 2));
  }
  ASSERT_EQ(calls.size(), static_cast<size_t>(kCalls)) << script.out;
  ASSERT_EQ(returns.size(), static_cast<size_t>(kCalls)) << script.out;
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(calls[i], "index=" + std::to_string(i) + " weight=" + std::to_string(7 * i) + " label=\"" + (i % 2 ? "odd" : "even") +
                            "\" vperf_probe_module_calls=" + std::to_string(i));
    std::ostringstream expected;
    expected << "arg1=0x" << std::hex << 10 * i;
    EXPECT_EQ(returns[i], expected.str()) << "call " << i;
  }
  EXPECT_EQ(in_guest("/bin/vperf probe -q -d 'probe:*' && rmmod vperf_probe_module").exit_code, 0);
}

// -F without a file lists the running kernel's functions and a loaded module's, as perf probe
// -F does, less the module's data objects perf adds (kallsyms types b, d, r: no probe takes them).
TEST_F(KernelProbe, KernelFunctionListHasTheLoadedModulesFunctionsAsPerfDoes) {
  VPERF_REQUIRE(SharedGuest::has_perf(), "perf 6.1 in the guest (linux-perf on this machine)");
  VPERF_REQUIRE(module_.ok(), "the test module: " + module_.error().describe());
  ASSERT_EQ(in_guest("insmod /lib/vperf-test/vperf_probe_module.ko").exit_code, 0);
  GuestCommandResult perf = in_guest("/lib/vperf-test/perf probe -F 'vperf_*|vfs_*|calls_*'");
  GuestCommandResult mine = in_guest("/bin/vperf probe -F 'vperf_*|vfs_*|calls_*'");
  GuestCommandResult data = in_guest("awk '$2 ~ /^[bBdDrR]$/ {print $3}' /proc/kallsyms");
  EXPECT_EQ(in_guest("rmmod vperf_probe_module").exit_code, 0);
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  std::set<std::string> data_objects;
  std::istringstream names(data.out);
  for (std::string name; std::getline(names, name);) data_objects.insert(name);
  std::string functions;
  std::istringstream lines(perf.out);
  for (std::string line; std::getline(lines, line);)
    if (!data_objects.count(line)) functions += line + "\n";
  EXPECT_EQ(mine.out, functions);
  EXPECT_NE(mine.out.find("vperf_probe_module_target\n"), std::string::npos) << mine.out;
  EXPECT_NE(mine.out.find("calls_write\n"), std::string::npos) << mine.out;
  EXPECT_NE(mine.out.find("vfs_read\n"), std::string::npos) << mine.out;
}

// The kernel's own functions from the guest kernel's vmlinux DWARF (-k, Debian's -dbg package):
// vperf's kprobe_events lines equal perf probe -k's on this machine; written to the guest's
// kprobe_events (the 600-MB vmlinux stays on the host), the probe on do_sys_openat2 shows each
// of three opens' file name, flags (O_RDONLY with the O_LARGEFILE x86-64 adds) and mode.
TEST_F(KernelProbe, KernelVariablesComeFromTheVmlinuxDwarf) {
  Result<std::filesystem::path> vmlinux = guest_vmlinux(SharedGuest::rig());
  VPERF_REQUIRE(vmlinux.ok(), "the guest kernel's vmlinux with DWARF (linux-image-RELEASE-dbg): " + vmlinux.error().describe());
  const std::string image = vmlinux->string();
  const std::string definition = "do_sys_openat2 dfd filename:ustring how->flags how->mode";
  if (!find_program("perf").empty())
    for (const std::string& d : std::vector<std::string>{definition, "do_sys_openat2%return $retval", "vfs_read file->f_flags count", "do_sys_openat2 $params"}) {
      ProgramResult perf = run_program({"perf", "probe", "-k", image, "-D", d});
      ProgramResult mine = run_vperf({"probe", "-k", image, "-D", d});
      ASSERT_EQ(mine.exit_code, 0) << d << ": " << mine.err;
      EXPECT_EQ(mine.out, perf.out) << d << ": " << perf.err;
    }
  ProgramResult line = run_vperf({"probe", "-k", image, "-D", definition});
  ASSERT_EQ(line.exit_code, 0) << line.err;
  ASSERT_EQ(line.out.find('\''), std::string::npos) << line.out;
  GuestCommandResult added = in_guest("echo '" + line.out.substr(0, line.out.size() - 1) + "' >>/sys/kernel/tracing/kprobe_events");
  ASSERT_EQ(added.exit_code, 0) << added.err << " " << line.out;
  GuestCommandResult script = in_guest(
      "/bin/vperf record -q -e probe:do_sys_openat2 -o /tmp/k.data -- /bin/sh -c ': </etc/passwd; : </etc/passwd; : </etc/passwd' && "
      "/bin/vperf script -i /tmp/k.data");
  ASSERT_EQ(script.exit_code, 0) << script.err;
  size_t opens = 0;
  std::istringstream lines(script.out);
  for (std::string hit; std::getline(lines, hit);)
    if (hit.find("filename_ustring=\"/etc/passwd\"") != std::string::npos) {
      ++opens;
      EXPECT_NE(hit.find("dfd=-100 filename_ustring=\"/etc/passwd\" flags=0x8000 mode=0x0"), std::string::npos) << hit;
    }
  EXPECT_EQ(opens, 3u) << script.out;
  EXPECT_EQ(in_guest("/bin/vperf probe -q -d 'probe:*'").exit_code, 0);
}

}  // namespace
}  // namespace vperf::test
