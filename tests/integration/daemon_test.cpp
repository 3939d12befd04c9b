// vperf daemon as perf 6.1's daemon.sh drives perf daemon: sessions started from the config
// and listed with their files, ping answered by each session's recording through its control
// fifo, SIGUSR2 sent on request (each a --switch-output file perf reads), a second daemon over
// the same base refused with perf's "failed:" line, the config followed when it changes, and
// stop ending every session before the daemon. Readiness is polled (ping, list, /proc), never
// slept on.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/processes.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Daemon : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(!test::find_program("perf").empty(), "needs Linux perf (apt-get install linux-perf) to read the sessions' files");
    base_ = (scratch_.root() / "base").string();
    config_ = (scratch_.root() / "config").string();
    fs::create_directories(base_);
  }
  void TearDown() override {
    // A test that failed half-way must not leave a daemon or its sessions behind.
    if (fs::exists(base_ + "/control")) (void)test::run_vperf({"daemon", "stop", "--config", config_});
  }
  void write_config(const std::vector<std::pair<std::string, std::string>>& sessions) const {
    std::ofstream out(config_);
    out << "[daemon]\nbase=" << base_ << "\n";
    for (const auto& [name, run] : sessions) out << "\n[session-" << name << "]\nrun = " << run << "\n";
  }
  test::ProgramResult daemon(std::vector<std::string> args) const {
    args.insert(args.begin(), "daemon");
    args.insert(args.end(), {"--config", config_});
    return test::run_vperf(args);
  }
  // The -x: list's lines, split into fields.
  std::vector<std::vector<std::string>> list() const {
    std::vector<std::vector<std::string>> lines;
    const std::string out = daemon({"-x:"}).out;
    for (std::string_view line : split(out, '\n'))
      if (!line.empty()) {
        std::vector<std::string> fields;
        for (std::string_view f : split(line, ':')) fields.emplace_back(f);
        lines.push_back(fields);
      }
    return lines;
  }
  bool ping_ok(const std::string& session) const {
    return daemon({"ping", "--session", session}).out == "OK   " + session + "\n";
  }
  size_t switched_files(const std::string& session) const {
    size_t n = 0;
    for (const auto& entry : fs::directory_iterator(base_ + "/session-" + session))
      if (entry.path().filename().string().starts_with("perf.data.")) ++n;
    return n;
  }

  test::TempTree scratch_;
  std::string base_, config_;
};

TEST_F(Daemon, SessionsRunAnswerAndEndAsPerfDaemonsDo) {
  write_config({{"size", "-e cpu-clock -m 1 sleep 30"}, {"time", "-e task-clock -m 1 --switch-output sleep 30"}});
  test::ProgramResult started = daemon({"start"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  ASSERT_TRUE(test::wait_until([&] { return ping_ok("size") && ping_ok("time"); }, 30s)) << daemon({"ping"}).out;

  std::vector<std::vector<std::string>> lines = list();
  ASSERT_EQ(lines.size(), 3u);
  const std::string daemon_pid = lines[0][0];
  EXPECT_EQ(lines[0], (std::vector<std::string>{daemon_pid, "daemon", base_, base_ + "/output", base_ + "/lock", "0"}));
  const std::string dir = base_ + "/session-time";
  EXPECT_EQ(lines[2], (std::vector<std::string>{lines[2][0], "time", "-e task-clock -m 1 --switch-output sleep 30", dir, dir + "/output",
                                                dir + "/control", dir + "/ack", "0"}));
  const pid_t size_pid = std::stoi(lines[1][0]), time_pid = std::stoi(lines[2][0]);
  EXPECT_TRUE(fs::exists("/proc/" + lines[1][0]));
  EXPECT_EQ(daemon({"ping", "--session", "nosuch"}).out, "FAIL nosuch (not found)\n");
  test::ProgramResult verbose = daemon({"-v"});
  EXPECT_NE(verbose.out.find("[" + lines[2][0] + ":time] vperf record -e task-clock -m 1 --switch-output sleep 30\n  base:    " + dir +
                             "\n  output:  " + dir + "/output\n  control: " + dir + "/control\n  ack:     " + dir + "/ack\n  up:      0 minutes\n"),
            std::string::npos)
      << verbose.out;

  // A second daemon over the same base: perf's first word, the owner's pid, nothing changed.
  test::ProgramResult second = daemon({"start"});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_EQ(second.err.substr(0, second.err.find(" (hint")), "failed: another vperf daemon (pid " + daemon_pid + ") owns " + base_) << second.err;

  // SIGUSR2 to the --switch-output session: one file each time, also for two requests in a row
  // (daemon.sh's; the second used to merge with the first when the session took both at once).
  test::ProgramResult signalled = daemon({"signal", "--session", "time"});
  EXPECT_EQ(signalled.out, "signal 12 sent to session 'time [" + lines[2][0] + "]'\n");
  EXPECT_EQ(daemon({"signal"}).out, "signal 12 sent to session 'size [" + lines[1][0] + "]'\nsignal 12 sent to session 'time [" + lines[2][0] + "]'\n");
  ASSERT_TRUE(test::wait_until([&] { return switched_files("time") == 2; }, 10s));

  // The config changes: "size" gets another run line (ended, started again), "time" goes.
  write_config({{"size", "-e cpu-clock -m 2 sleep 30"}});
  ASSERT_TRUE(test::wait_until([&] { return !fs::exists("/proc/" + std::to_string(time_pid)) && !fs::exists("/proc/" + std::to_string(size_pid)); }, 20s));
  ASSERT_TRUE(test::wait_until([&] { return ping_ok("size"); }, 30s));
  lines = list();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1][2], "-e cpu-clock -m 2 sleep 30");
  EXPECT_EQ(daemon({"ping", "--session", "time"}).out, "FAIL time (not found)\n");
  EXPECT_EQ(switched_files("time"), 3u) << "the ended --switch-output session renamed its last file too";

  const pid_t new_size_pid = std::stoi(lines[1][0]);
  test::ProgramResult stopped = daemon({"stop"});
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  ASSERT_TRUE(test::wait_until([&] { return !fs::exists("/proc/" + daemon_pid); }, 20s));
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(new_size_pid))) << "stop ends the sessions before the daemon";
  EXPECT_FALSE(fs::exists(base_ + "/control"));
  test::ProgramResult stats = test::run_program({"perf", "report", "--stats", "-i", base_ + "/session-size/perf.data"});
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(daemon({"ping"}).exit_code, 0) << "no daemon runs any more";
}

TEST_F(Daemon, BadConfigsAndMissingDaemonsAreOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string config_text;
  };
  const std::vector<Case> cases = {
      {{"start"}, "[daemon]\nbase=/nonexistent/vperf-base\n"},
      {{"start"}, "[daemon\n"},
      {{"start"}, "[session-a]\nrun = -e cpu-clock sleep 1\n"},  // no base
      {{"ping"}, "[daemon]\nbase=" + base_ + "\n"},               // no daemon there
      {{"start", "--bogus"}, "[daemon]\nbase=" + base_ + "\n"},
  };
  for (const Case& c : cases) {
    std::ofstream(config_) << c.config_text;
    test::ProgramResult r = daemon(c.args);
    EXPECT_NE(r.exit_code, 0) << c.config_text;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("vperf: error: ")) << r.err;
    EXPECT_FALSE(fs::exists(base_ + "/control")) << c.config_text;
  }
  test::ProgramResult missing = test::run_vperf({"daemon", "--config", (scratch_.root() / "none").string()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
}

}  // namespace
}  // namespace vperf
