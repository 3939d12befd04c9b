// vperf turbo on this machine: where APERF/MPERF are hidden (KVM guests without pass-through,
// the development VMs), one error line naming what is missing; where they are readable, a
// real run. The msr PMU's attrs are also opened on the real kernel with the events it has.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/cpu_set.h"
#include "events/sysfs_pmu.h"
#include "msr/activity_counters.h"
#include "msr/msr_register.h"
#include "support/capability.h"
#include "support/processes.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

// Read with pread here, not with vperf's reader: whether the machine lets anyone read the MSRs
// decides between the tests below, so a broken reader cannot turn RealRun into a skip.
bool msr_device_reads_aperf() {
  const int fd = ::open("/dev/cpu/0/msr", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint64_t value = 0;
  const bool readable = ::pread(fd, &value, sizeof value, msr::address::kAperf) == sizeof value &&
                        ::pread(fd, &value, sizeof value, msr::address::kMperf) == sizeof value;
  ::close(fd);
  return readable;
}

bool msr_pmu_has_aperf() {
  const fs::path events = events::kSysfsPmuRoot / "msr" / "events";
  return fs::exists(events / "aperf") && fs::exists(events / "mperf");
}

bool aperf_mperf_readable() { return msr_device_reads_aperf() || msr_pmu_has_aperf(); }

TEST(Turbo, HiddenCountersAreOneErrorLineNamingWhatIsMissing) {
  if (aperf_mperf_readable()) GTEST_SKIP() << "APERF/MPERF are readable here; Turbo.RealRun covers this machine";
  auto r = test::run_vperf({"turbo", "--count", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << "nothing fabricated on stdout: " << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("vperf: error: APERF/MPERF ", 0), 0u) << r.err;
  // Both backends are named with why they failed, and a hint follows.
  EXPECT_NE(r.err.find("/dev/cpu/0/msr"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("msr PMU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" (hint: "), std::string::npos) << r.err;
  if (!fs::exists("/dev/cpu/0/msr")) {
    EXPECT_NE(r.err.find("no /dev/cpu/0/msr (msr module not loaded)"), std::string::npos) << r.err;
  }
  if (fs::exists(events::kSysfsPmuRoot / "msr" / "type")) {
    EXPECT_NE(r.err.find("the msr PMU offers only"), std::string::npos) << r.err;
  }

  auto json = test::run_vperf({"turbo", "--count", "1", "--json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_TRUE(json.out.empty()) << json.out;
  EXPECT_EQ(json.err, r.err) << "--json fails the same way";
}

TEST(Turbo, UsageErrorsExitTwo) {
  EXPECT_EQ(test::run_vperf({"turbo", "-I", "1"}).exit_code, 2);
  EXPECT_EQ(test::run_vperf({"turbo", "--count", "0"}).exit_code, 2);
  EXPECT_EQ(test::run_vperf({"turbo", "-C", "100000"}).exit_code, 2);
}

TEST(Turbo, RealRun) {
  VPERF_REQUIRE(aperf_mperf_readable(),
                "APERF/MPERF readable through /dev/cpu/0/msr or msr/aperf/ and msr/mperf/ (hidden in this VM)");
  VPERF_REQUIRE(test::running_as_root(), "root to read MSRs or count system-wide");
  auto r = test::run_vperf({"turbo", "-C", "0", "-I", "200", "--count", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  boost::json::object o = boost::json::parse(r.out).as_object();
  EXPECT_GT(o.at("base_mhz").to_number<double>(), 0);
  const auto& rows = o.at("intervals").as_array();
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& v : rows) {
    const auto& row = v.as_object();
    EXPECT_NEAR(row.at("seconds").to_number<double>(), 0.2, 0.1);
    EXPECT_GE(row.at("util_percent").to_number<double>(), 0);
    EXPECT_LE(row.at("util_percent").to_number<double>(), 110) << "MPERF runs at about the base clock";
    EXPECT_GT(row.at("tsc").to_number<uint64_t>(), 0u);
    if (row.at("c0_mcyc").to_number<uint64_t>() == 0) {
      EXPECT_TRUE(row.at("ratio_percent").is_null());
    } else {
      EXPECT_GT(row.at("ratio_percent").to_number<double>(), 5);
      EXPECT_LT(row.at("ratio_percent").to_number<double>(), 500);
    }
  }

  // Without --count it runs until SIGINT, then ends cleanly with exit 0.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(VPERF_BINARY, VPERF_BINARY, "turbo", "-I", "100", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Signalled once it waits for an interval to pass (its counters are open by then).
  EXPECT_TRUE(test::wait_until([&] { return test::blocked_in_wait(pid); }, std::chrono::seconds(10)))
      << "vperf turbo never reached its interval wait";
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The attrs MsrPmuCounters opens (system-wide per CPU, one group, no exclude bits) are accepted
// by the real msr PMU. Here the PMU has only tsc and smi, so they stand in for aperf and mperf.
TEST(Turbo, MsrPmuGroupsOpenOnTheRealKernel) {
  // Whether the PMU and its events exist is read from sysfs directly; where they exist, failing
  // to load them is a failure.
  const std::filesystem::path msr_events = events::kSysfsPmuRoot / "msr" / "events";
  VPERF_REQUIRE(std::filesystem::exists(msr_events / "tsc"), "the perf msr PMU in sysfs");
  VPERF_REQUIRE(std::filesystem::exists(msr_events / "mperf") || std::filesystem::exists(msr_events / "smi"),
                "a second msr PMU event (mperf or smi)");
  VPERF_REQUIRE(test::running_as_root(), "root to count system-wide");
  auto pmu = events::load_sysfs_pmu(events::kSysfsPmuRoot, "msr");
  ASSERT_TRUE(pmu.ok()) << pmu.error().describe();
  const events::PmuEventAlias* tsc = pmu->find_event("tsc");
  ASSERT_NE(tsc, nullptr) << "the msr PMU always has tsc";
  const events::PmuEventAlias* second = pmu->find_event("mperf") ? pmu->find_event("mperf") : pmu->find_event("smi");
  ASSERT_NE(second, nullptr) << "sysfs lists mperf or smi";
  // Encode through msr_pmu_encoding with a copy of the PMU whose aperf/mperf are the events it has.
  events::SysfsPmu stand_in = *pmu;
  stand_in.events = {{"aperf", tsc->terms, "", ""}, {"mperf", second->terms, "", ""}, {"tsc", tsc->terms, "", ""}};
  auto encoding = msr::msr_pmu_encoding(stand_in);
  ASSERT_TRUE(encoding.ok()) << encoding.error().describe();
  EXPECT_EQ(encoding->type, pmu->type);

  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok());
  perf::KernelPerfEventOpener opener;
  auto counters = msr::MsrPmuCounters::open(opener, *encoding, *cpus);
  ASSERT_TRUE(counters.ok()) << counters.error().describe();
  auto before = (*counters)->read(cpus->front());
  ASSERT_TRUE(before.ok()) << before.error().describe();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto after = (*counters)->read(cpus->front());
  ASSERT_TRUE(after.ok()) << after.error().describe();
  // The TSC runs at GHz rates: 50 ms is well over a million ticks (and it stood in for APERF too).
  EXPECT_GT(msr::counter_delta(before->tsc, after->tsc), 1'000'000u);
  EXPECT_GT(msr::counter_delta(before->aperf, after->aperf), 1'000'000u);
}

}  // namespace
}  // namespace vperf
