// vperf kvm record --qmp: guest profiling without a host PMU, on a real guest (the test guest
// of scripts/test-guest.sh, booted by QEMU under TCG here, as under KVM elsewhere). The
// ground truth is the workload: busybox dd reading /dev/zero spends its kernel time in
// read_zero's clear_user (arch/x86/lib: clear_user_rep_good, _erms or _original, chosen by CPU
// features), and the guest's other vCPU idles in native_safe_halt.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "guest/guest_agent.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/guest_rig.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class KvmMonitor : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(!test::find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the real guest");
    Result<test::GuestRig> rig = test::guest_rig();
    ASSERT_TRUE(rig.ok()) << rig.error().describe();
    Result<std::unique_ptr<test::RunningGuest>> guest = test::RunningGuest::boot(*rig, scratch_.root() / "vm");
    ASSERT_TRUE(guest.ok()) << guest.error().describe();
    guest_ = std::move(guest).value();
  }

  // Starts `command` in the guest (through its agent) and returns at once.
  void run_in_guest(const std::string& command) {
    Result<std::unique_ptr<guest::QgaSocketAgent>> agent = guest::QgaSocketAgent::connect(guest_->qga());
    ASSERT_TRUE(agent.ok()) << agent.error().describe();
    Result<boost::json::value> started =
        (*agent)->command("guest-exec", {{"path", "/bin/sh"}, {"arg", boost::json::array{"-c", command + " &"}}});
    ASSERT_TRUE(started.ok()) << started.error().describe();
  }

  test::TempTree scratch_;
  std::unique_ptr<test::RunningGuest> guest_;
};

TEST_F(KvmMonitor, SamplesTheGuestsKernelThroughQmpWithSymbolsFromTheAgent) {
  run_in_guest("dd if=/dev/zero of=/dev/null bs=65536 count=2000000 2>/dev/null");
  const std::string data = (scratch_.root() / "perf.data.guest").string();
  const std::map<std::string, std::string> cache = {{"XDG_CACHE_HOME", (scratch_.root() / "cache").string()}};
  test::ProgramResult rec = test::run_vperf({"kvm", "record", "--qmp", guest_->qmp().string(), "--qga", guest_->qga().string(),
                                             "-F", "500", "--duration", "3", "-o", data},
                                            cache);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  std::cout << rec.err;
  EXPECT_NE(rec.err.find("2 vCPUs sampled through QEMU's monitor"), std::string::npos) << rec.err;
  EXPECT_EQ(rec.err.find("cached"), std::string::npos) << rec.err;

  // The symbols fetched through the agent are the guest's: the same text its init wrote to the
  // serial port at boot.
  const fs::path kept = fs::path(data + ".guestmount") / std::to_string(guest_->qemu_pid()) / "proc";
  EXPECT_EQ(read_text(kept / "kallsyms"), read_text(guest_->kallsyms()));
  EXPECT_EQ(read_text(kept / "modules"), read_text(guest_->modules()));

  // A second recording of the same boot takes them from the cache (same boot id, same
  // modules), and keeps the same files.
  const std::string again = (scratch_.root() / "again.data").string();
  test::ProgramResult rec2 = test::run_vperf({"kvm", "record", "--qmp", guest_->qmp().string(), "--qga", guest_->qga().string(),
                                              "-F", "100", "--duration", "1", "-o", again},
                                             cache);
  ASSERT_EQ(rec2.exit_code, 0) << rec2.err;
  EXPECT_NE(rec2.err.find("(cached for this guest boot)"), std::string::npos) << rec2.err;
  EXPECT_EQ(read_text(fs::path(again + ".guestmount") / std::to_string(guest_->qemu_pid()) / "proc/kallsyms"),
            read_text(guest_->kallsyms()));

  // vperf kvm report finds them beside the file.
  test::ProgramResult rep = test::run_vperf({"kvm", "report", "--stdio", "--sort", "sym", "-i", data});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  std::map<std::string, double> shares = test::guest_symbol_shares(rep.out);
  const double clear_user = test::clear_user_share(shares);
  EXPECT_GT(clear_user, 20.0) << rep.out;          // the busy vCPU: about 40% of all samples here
  EXPECT_GT(shares["native_safe_halt"], 20.0) << rep.out;  // the idle one
  EXPECT_GT(shares["read_zero"] + clear_user, shares["native_safe_halt"] / 3) << rep.out;

  // The samples carry the vCPU threads (comm from the host) and the guest's privilege levels.
  test::ProgramResult comms = test::run_vperf({"kvm", "report", "--stdio", "--sort", "comm", "-i", data});
  EXPECT_NE(comms.out.find("CPU 0/"), std::string::npos) << comms.out;
  EXPECT_NE(comms.out.find("CPU 1/"), std::string::npos) << comms.out;

  // perf reads the file: with the kept symbols, perf kvm report names the same hot function.
  if (!test::find_program("perf").empty()) {
    fs::create_directories(scratch_.root() / "home");
    test::ProgramResult perf = test::run_program(
        {"perf", "kvm", "--guestkallsyms", (kept / "kallsyms").string(), "--guestmodules", (kept / "modules").string(), "report",
         "--stdio", "--sort", "sym", "-i", data},
        {{"HOME", (scratch_.root() / "home").string()}});
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    std::map<std::string, double> theirs = test::guest_symbol_shares(perf.out);
    for (const auto& [name, share] : shares) {
      if (share >= 1.0) {
        EXPECT_NEAR(theirs[name], share, 0.011) << name << "\n" << perf.out;
      }
    }
  }
}

TEST_F(KvmMonitor, SamplingEndsWithTheCommandAndKeepsItsExitStatus) {
  const std::string data = (scratch_.root() / "cmd.data").string();
  test::ProgramResult rec = test::run_vperf({"kvm", "record", "--qmp", guest_->qmp().string(), "-F", "200", "-o", data,
                                             "--", VPERF_WORKLOAD, "exit", "3"});
  EXPECT_EQ(rec.exit_code, 3) << rec.err;
  EXPECT_NE(rec.err.find("no guest symbols"), std::string::npos) << rec.err;
  test::ProgramResult rep = test::run_vperf({"kvm", "report", "--stdio", "-i", data});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;  // a short, unresolved, but readable recording
}

// Without a monitor: one error line with the fix, nothing written.
TEST(KvmMonitorErrors, NoMonitorSocketIsOneLineAndNoFile) {
  test::TempTree scratch;
  const std::string data = (scratch.root() / "never.data").string();
  test::ProgramResult r = test::run_vperf({"kvm", "record", "--qmp", (scratch.root() / "no.sock").string(), "-o", data});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("hint: start QEMU with -qmp unix:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(data));
  test::ProgramResult usage = test::run_vperf({"kvm", "record", "--qga", "x.sock", "-o", data, "--", "true"});
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  test::ProgramResult both = test::run_vperf({"kvm", "record", "--qmp", "a.sock", "--domain", "d", "-o", data});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  // libvirt's test driver has domains but no QEMU monitor: said in one line, nothing written.
  test::ProgramResult no_monitor =
      test::run_vperf({"kvm", "record", "--domain", "test", "--connect", "test:///default", "--duration", "1", "-o", data});
  EXPECT_EQ(no_monitor.exit_code, 1);
  EXPECT_EQ(std::count(no_monitor.err.begin(), no_monitor.err.end(), '\n'), 1) << no_monitor.err;
  EXPECT_NE(no_monitor.err.find("not supported"), std::string::npos) << no_monitor.err;
  test::ProgramResult no_domain =
      test::run_vperf({"kvm", "record", "--domain", "nope", "--connect", "test:///default", "-o", data});
  EXPECT_EQ(no_domain.exit_code, 1);
  EXPECT_NE(no_domain.err.find("hint: vperf kvm list"), std::string::npos) << no_domain.err;
  EXPECT_FALSE(fs::exists(data));
}

}  // namespace
}  // namespace vperf
