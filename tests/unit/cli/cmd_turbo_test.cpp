// vperf turbo in-process, with a fake MSR device, a fake msr PMU (sysfs tree + pipes as
// perf_event_open fds) and a fake clock whose sleeps advance the counters.
#include "cli/cmd_turbo.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <boost/json.hpp>
#include <cerrno>
#include <deque>
#include <functional>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "msr/msr_register.h"
#include "support/fake_event_fs.h"
#include "support/processes.h"

namespace vperf::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
namespace address = msr::address;

class FakeMsrs final : public msr::MsrReader {
 public:
  std::map<std::pair<int, uint32_t>, uint64_t> values;
  Result<uint64_t> read(int cpu, uint32_t reg) const override {
    auto it = values.find({cpu, reg});
    if (it == values.end())
      return Error{"read MSR " + hex(reg) + " from /fake/cpu/" + std::to_string(cpu) + "/msr", EIO};
    return it->second;
  }
  std::string device_name(int cpu) const override { return "/fake/cpu/" + std::to_string(cpu) + "/msr"; }
  void add(int cpu, uint64_t aperf, uint64_t mperf, uint64_t tsc) {
    values[{cpu, address::kAperf}] += aperf;
    values[{cpu, address::kMperf}] += mperf;
    values[{cpu, address::kTimeStampCounter}] += tsc;
  }
};

// Leaders' pipes answer group reads from a script: the first record is written at open, the
// next one by next_reading() (called from the fake clock's sleep).
class ScriptedPmuOpener final : public perf::PerfEventOpener {
 public:
  std::map<int, std::deque<std::array<uint64_t, 3>>> script;  // cpu -> {aperf, mperf, tsc} per read
  mutable std::map<int, int> leader_write_fd;
  mutable int opens = 0;

  ~ScriptedPmuOpener() override {
    for (auto [cpu, fd] : leader_write_fd) ::close(fd);
  }
  Result<perf::EventFd> open(const perf_event_attr&, const perf::OpenTarget& target) const override {
    ++opens;
    int fds[2];
    if (::pipe(fds) != 0) return Error::from_errno("pipe");
    if (target.group_fd == -1) {
      leader_write_fd[target.cpu] = fds[1];
      write_next(target.cpu);
    } else {
      ::close(fds[1]);
    }
    return perf::EventFd(ScopedFd(fds[0]));
  }
  void next_reading() const {
    for (auto [cpu, fd] : leader_write_fd) write_next(cpu);
  }

 private:
  void write_next(int cpu) const {
    auto& queue = const_cast<std::deque<std::array<uint64_t, 3>>&>(script.at(cpu));
    if (queue.empty()) return;
    const auto [a, m, t] = queue.front();
    queue.pop_front();
    const uint64_t words[] = {3, 1000, 1000, a, m, t};
    if (::write(leader_write_fd.at(cpu), words, sizeof words) != static_cast<ssize_t>(sizeof words)) std::abort();
  }
};

// A RunLoop clock whose waits return at once: time jumps by the wait's timeout (a "sleep"),
// except at `interrupt_at`, where the stop fd becomes readable instead, as SIGINT makes it.
class FakeClock final : public session::RunClock {
 public:
  nanoseconds time{std::chrono::seconds(1000)};
  std::chrono::system_clock::time_point wall_time = std::chrono::system_clock::from_time_t(12 * 3600);
  std::function<void(int)> on_sleep;  // called with the sleep's number, 1-based
  int sleeps = 0;
  int interrupt_at = -1;  // this wait reports the stop fd readable
  int stop_fd = -1;
  std::vector<nanoseconds> asked;

  nanoseconds now() const override { return time; }
  std::chrono::system_clock::time_point wall() const override { return wall_time; }
  Result<int> wait(std::span<pollfd> fds, std::optional<nanoseconds> timeout) override {
    if (!timeout) return Error{"run_turbo waited with no timeout"};
    asked.push_back(*timeout);
    if (++sleeps == interrupt_at)
      for (pollfd& p : fds)
        if (p.fd == stop_fd) {
          p.revents = POLLIN;
          return 1;
        }
    time += *timeout;
    wall_time += std::chrono::duration_cast<std::chrono::system_clock::duration>(*timeout);
    if (on_sleep) on_sleep(sleeps);
    return 0;
  }
};

class TurboCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = ::getenv("TZ");
    if (tz) saved_tz_ = tz;
    had_tz_ = tz != nullptr;
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    sys_.write("devices/system/cpu/online", "0-1\n");
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    stop_read_ = ScopedFd(fds[0]);
    stop_write_ = ScopedFd(fds[1]);
    clock_.stop_fd = stop_read_.get();
  }
  void TearDown() override {
    if (had_tz_)
      ::setenv("TZ", saved_tz_.c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }
  TurboMachine machine(const msr::MsrReader& device, const perf::PerfEventOpener& opener) {
    TurboMachine m{device, opener, clock_};
    m.stop_fd = clock_.stop_fd;
    m.pmu_root = pmus_.root();
    m.sysfs = sys_.root();
    return m;
  }
  void add_msr_pmu(std::vector<std::pair<std::string, std::string>> events) {
    test::add_fake_pmu(pmus_, {"msr", 14, {{"event", "config:0-63"}}, std::move(events), {}, ""});
  }

  test::TempTree sys_;
  test::TempTree pmus_;
  FakeClock clock_;
  ScopedFd stop_read_, stop_write_;  // never written: the fake clock reports the stop
  std::string saved_tz_;
  bool had_tz_ = false;
};

// An i7-2600K's registers (recorded by turbostat): base ratio 34, turbo 38/37/36/35.
void sandy_bridge(FakeMsrs& device) {
  for (int cpu : {0, 1}) {
    device.values[{cpu, address::kPlatformInfo}] = 0x100070012200ull;
    device.values[{cpu, address::kTurboRatioLimit}] = 0x23242526;
    device.add(cpu, 1'000'000, 900'000, 5'000'000);
  }
}

TEST_F(TurboCommand, DeviceTableSumsCpusAndShowsIdleAsDash) {
  FakeMsrs device;
  sandy_bridge(device);
  ScriptedPmuOpener opener;
  clock_.on_sleep = [&](int n) {
    if (n == 1) {
      device.add(0, 3'800'000'000, 3'400'000'000, 3'400'000'000);  // CPU 0 busy at 3.8 GHz
      device.add(1, 850'000'000, 850'000'000, 3'400'000'000);      // CPU 1 a quarter busy at base
    } else {
      device.add(0, 0, 0, 3'400'000'000);  // both idle
      device.add(1, 0, 0, 3'400'000'000);
    }
  };
  TurboMachine m = machine(device, opener);
  std::ostringstream out;
  EXPECT_EQ(run_turbo({"", 1000, 2, false}, m, out), 0);
  EXPECT_EQ(out.str(),
            "Base MHz : 3400 (MSR_PLATFORM_INFO[15:8] = 34 x 100 MHz)\n"
            "Turbo    : 1 active core: 38 -> 3800 MHz\n"
            "           2 active cores: 37 -> 3700 MHz\n"
            "           3 active cores: 36 -> 3600 MHz\n"
            "           4 active cores: 35 -> 3500 MHz\n"
            "CPUs     : 0-1, summed (counters: /dev/cpu/N/msr, every 1000 ms)\n"
            "\n"
            "TIME            C0_MCYC        C0_ACYC   UTIL  RATIO    MHz\n"
            "12:00:01     4250000000     4650000000    63%   109%   3720\n"
            "12:00:02              0              0     0%      -      -\n");
  EXPECT_EQ(opener.opens, 0) << "the device works, so the PMU stays closed";
  ASSERT_EQ(clock_.asked.size(), 2u);
  EXPECT_EQ(clock_.asked[0], nanoseconds(milliseconds(1000)));
}

TEST_F(TurboCommand, OneCpuAsJson) {
  FakeMsrs device;
  sandy_bridge(device);
  ScriptedPmuOpener opener;
  clock_.on_sleep = [&](int) {
    device.add(1, 2'900'000'000, 2'500'000'000, 3'400'000'000);
    device.add(0, 1, 1, 1);  // not selected: must not count
  };
  TurboMachine m = machine(device, opener);
  std::ostringstream out;
  EXPECT_EQ(run_turbo({"1", 500, 1, true}, m, out), 0);
  boost::json::object o = boost::json::parse(out.str()).as_object();
  EXPECT_EQ(o.at("base_mhz").to_number<double>(), 3400.0);
  EXPECT_EQ(o.at("base_source").as_string(), "msr_platform_info");
  EXPECT_EQ(o.at("counters").as_string(), "/dev/cpu/N/msr");
  EXPECT_EQ(o.at("cpus").as_string(), "1");
  EXPECT_EQ(o.at("interval_ms").as_int64(), 500);
  ASSERT_EQ(o.at("turbo_steps").as_array().size(), 4u);
  EXPECT_EQ(o.at("turbo_steps").as_array()[0].as_object().at("mhz").to_number<double>(), 3800.0);
  EXPECT_TRUE(o.at("turbo_steps_error").is_null());
  const auto& rows = o.at("intervals").as_array();
  ASSERT_EQ(rows.size(), 1u);
  const auto& row = rows[0].as_object();
  EXPECT_EQ(row.at("time").as_string(), "12:00:00");  // 12:00:00.5
  EXPECT_DOUBLE_EQ(row.at("seconds").to_number<double>(), 0.5);
  EXPECT_EQ(row.at("c0_mcyc").to_number<uint64_t>(), 2'500'000'000u);
  EXPECT_EQ(row.at("c0_acyc").to_number<uint64_t>(), 2'900'000'000u);
  EXPECT_EQ(row.at("tsc").to_number<uint64_t>(), 3'400'000'000u);
  // 2.5e9 MPERF ticks in 0.5 s is more than a 3.4 GHz base clock allows (2.5e9 / 1.7e9 = 147%).
  // The fake is inconsistent on purpose: vperf shows what the counters say and clamps nothing.
  EXPECT_NEAR(row.at("util_percent").to_number<double>(), 147.06, 0.01);
  EXPECT_DOUBLE_EQ(row.at("ratio_percent").to_number<double>(), 116.0);
  EXPECT_DOUBLE_EQ(row.at("mhz").to_number<double>(), 3944.0);
}

TEST_F(TurboCommand, PmuBackendWithCpuidBaseAndNoRatioLimits) {
  FakeMsrs device;  // no registers at all: every read faults, as in a guest with the driver
  add_msr_pmu({{"aperf", "event=0x01"}, {"mperf", "event=0x02"}, {"smi", "event=0x04"}, {"tsc", "event=0x00"}});
  ScriptedPmuOpener opener;
  opener.script[0] = {
      {0, 0, 0}, {2'900'000'000, 2'500'000'000, 2'500'000'000}, {2'900'000'000, 2'500'000'000, 5'000'000'000}};
  opener.script[1] = {
      {0, 0, 0}, {1'250'000'000, 1'250'000'000, 2'500'000'000}, {2'250'000'000, 2'500'000'000, 5'000'000'000}};
  clock_.on_sleep = [&](int) { opener.next_reading(); };
  TurboMachine m = machine(device, opener);
  m.cpuid_16_eax = 2500;
  m.cpuinfo_mhz = 2000.0;
  std::ostringstream out;
  EXPECT_EQ(run_turbo({"", 1000, 2, false}, m, out), 0);
  EXPECT_EQ(out.str(),
            "Base MHz : 2500 (CPUID.16H:EAX)\n"
            "Turbo    : turbo ratio limits unreadable: read MSR 0x1ad from /fake/cpu/0/msr: Input/output error "
            "(the perf msr PMU has no event for it; it needs /dev/cpu/N/msr)\n"
            "CPUs     : 0-1, summed (counters: perf msr PMU (msr/aperf/, msr/mperf/, msr/tsc/), every 1000 ms)\n"
            "\n"
            "TIME            C0_MCYC        C0_ACYC   UTIL  RATIO    MHz\n"
            // CPU 0 fully busy at 2.9 GHz, CPU 1 half busy at base: util 75%, ratio 4.15/3.75.
            "12:00:01     3750000000     4150000000    75%   111%   2767\n"
            // CPU 0 idle, CPU 1 half busy at 2.0 GHz.
            "12:00:02     1250000000     1000000000    25%    80%   2000\n");
  EXPECT_EQ(opener.opens, 6);
}

TEST_F(TurboCommand, HiddenCountersAreOneErrorAndNoOutput) {
  test::TempTree dev_cpu;
  msr::DevCpuMsrReader device(dev_cpu.root());
  add_msr_pmu({{"smi", "event=0x04"}, {"tsc", "event=0x00"}});
  ScriptedPmuOpener opener;
  TurboMachine m = machine(device, opener);
  m.cpuid = {true, false};
  m.cpuinfo_mhz = 2000.0;
  std::ostringstream out;
  try {
    run_turbo({"", 1000, 1, false}, m, out);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 1);
    EXPECT_EQ(std::string(e.what()), "APERF/MPERF are hidden here: no " + (dev_cpu.root() / "0" / "msr").string() +
                                         " (msr module not loaded) and the msr PMU offers only smi, tsc");
    EXPECT_NE(e.hint().find("measure turbo on the host"), std::string::npos) << e.hint();
  }
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(clock_.sleeps, 0);
}

TEST_F(TurboCommand, SigintEndsCleanlyAfterTheLastWholeInterval) {
  FakeMsrs device;
  sandy_bridge(device);
  ScriptedPmuOpener opener;
  clock_.on_sleep = [&](int) {
    device.add(0, 3'400'000'000, 3'400'000'000, 3'400'000'000);
    device.add(1, 3'400'000'000, 3'400'000'000, 3'400'000'000);
  };
  clock_.interrupt_at = 3;
  TurboMachine m = machine(device, opener);
  std::ostringstream out;
  EXPECT_EQ(run_turbo({"0", 1000, std::nullopt, false}, m, out), 0);
  EXPECT_NE(out.str().find("12:00:01     3400000000     3400000000   100%   100%   3400\n"
                           "12:00:02     3400000000     3400000000   100%   100%   3400\n"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("12:00:03"), std::string::npos) << out.str();

  std::ostringstream json_out;
  clock_.sleeps = 0;
  TurboMachine m2 = machine(device, opener);
  EXPECT_EQ(run_turbo({"0", 1000, std::nullopt, true}, m2, json_out), 0);
  EXPECT_EQ(boost::json::parse(json_out.str()).as_object().at("intervals").as_array().size(), 2u);
}

TEST_F(TurboCommand, BadOptionsAreUsageErrors) {
  FakeMsrs device;
  sandy_bridge(device);
  ScriptedPmuOpener opener;
  TurboMachine m = machine(device, opener);
  std::ostringstream out;
  for (const TurboOptions& bad : {TurboOptions{"", 5, 1, false}, TurboOptions{"", 1000, 0, false},
                                  TurboOptions{"2", 1000, 1, false}, TurboOptions{"1-0", 1000, 1, false}}) {
    try {
      run_turbo(bad, m, out);
      ADD_FAILURE() << "no error for -C '" << bad.cpus << "' -I " << bad.interval_ms;
    } catch (const UserError& e) {
      EXPECT_EQ(e.exit_code(), 2) << e.what();
    }
  }
  try {
    run_turbo({"2", 1000, 1, false}, m, out);
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "CPU 2 is not online");
    EXPECT_EQ(e.hint(), "online CPUs: 0-1");
  }
  EXPECT_EQ(out.str(), "");
}

TEST_F(TurboCommand, NoBaseFrequencyAnywhereIsAnError) {
  FakeMsrs device;
  sandy_bridge(device);
  device.values.erase({0, address::kPlatformInfo});
  ScriptedPmuOpener opener;
  TurboMachine m = machine(device, opener);
  std::ostringstream out;
  try {
    run_turbo({"", 1000, 1, false}, m, out);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("MSR_PLATFORM_INFO unreadable, no CPUID leaf 0x16"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(out.str(), "");
}

TEST_F(TurboCommand, ACounterThatStopsReadingEndsTheRunWithAnError) {
  FakeMsrs device;
  sandy_bridge(device);
  ScriptedPmuOpener opener;
  clock_.on_sleep = [&](int) { device.values.erase({1, address::kAperf}); };
  TurboMachine m = machine(device, opener);
  std::ostringstream out;
  try {
    run_turbo({"", 1000, 3, false}, m, out);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot read APERF/MPERF of CPU 1: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(out.str().find("12:00:01"), std::string::npos) << "no row from a partial reading";
}

}  // namespace
}  // namespace vperf::cli
