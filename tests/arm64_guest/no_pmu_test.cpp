// An arm64 VM whose hypervisor gives it no PMU: the guest booted with -cpu max,pmu=off (the
// case of most small cloud instances and of KVM guests without pmu=on). The kernel registers no
// PMU; check says NO to every hardware question with the fix, and stat and record say what
// perf 6.1 says in the same guest, never a fabricated count.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <string>

#include "arm64_guest/shared_arm64_guest.h"
#include "support/stat_output.h"

namespace vperf::test {
namespace {

constexpr const char* kPerf = "/lib/vperf-test/perf";

class Arm64NoPmu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedArm64Guest::ready()) GTEST_FAIL() << "no arm64 guest";
  }
};

TEST_F(Arm64NoPmu, CheckSaysNoToEveryHardwareQuestionWithTheFix) {
  const std::string devices = SharedArm64Guest::run("ls /sys/bus/event_source/devices").out;
  ASSERT_EQ(devices.find("armv8"), std::string::npos) << "pmu=off still registered a PMU:\n" << devices;
  const GuestCommandResult r = SharedArm64Guest::run("vperf check --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  boost::system::error_code ec;
  boost::json::value j = boost::json::parse(r.out, ec);
  ASSERT_FALSE(ec) << r.out;
  for (const char* name : {"ipc", "llc", "precise", "sampling", "turbo"}) {
    const auto& v = j.at("verdicts").at(name).as_object();
    EXPECT_FALSE(v.at("available").as_bool()) << name;
    EXPECT_FALSE(v.at("fix").as_string().empty()) << name;
  }
  EXPECT_NE(std::string(j.at("verdicts").at("ipc").at("fix").as_string()).find("drop pmu=off"), std::string::npos)
      << j.at("verdicts").at("ipc");
  EXPECT_NE(std::string(j.at("verdicts").at("ipc").at("reason").as_string()).find("Software events work"),
            std::string::npos);
  EXPECT_TRUE(j.at("live").at("perf").at("group_capacity").is_null());
  const std::string text = SharedArm64Guest::run("vperf check 2>&1").out;
  EXPECT_NE(text.find("no core PMU (cpu, cpu_core, armv8_*)"), std::string::npos) << text;
}

// Counting: each tool prints the same rows; the hardware events <not supported>, task-clock
// counted. Nothing is made up for the missing counters.
TEST_F(Arm64NoPmu, StatPrintsWhatPerfPrints) {
  const std::string command = " stat -x, -e task-clock,cycles,instructions /bin/vperf-workload loop 1000 2>&1 >/dev/null";
  const GuestCommandResult v = SharedArm64Guest::run("vperf" + command);
  const GuestCommandResult p = SharedArm64Guest::run(std::string(kPerf) + command);
  EXPECT_EQ(v.exit_code, p.exit_code) << v.out << "\n" << p.out;
  const std::vector<CsvLine> vl = parse_csv(v.out), pl = parse_csv(p.out);
  ASSERT_EQ(vl.size(), 3u) << v.out;
  ASSERT_EQ(pl.size(), 3u) << p.out;
  for (size_t i = 1; i < 3; ++i) EXPECT_EQ(vl[i].line, pl[i].line);
  EXPECT_EQ(vl[1].fields[0], "<not supported>");
  EXPECT_TRUE(parse_number(vl[0].fields[0])) << vl[0].line;
}

// Sampling without a PMU. cycles: perf 6.1 falls back to cpu-clock with a warning, and so
// does vperf: both files hold cpu-clock samples, which each tool's script names alike.
// instructions: no fallback; one line saying what to do, a non-zero exit as perf's, and no
// perf.data left behind.
TEST_F(Arm64NoPmu, RecordFallsBackOnCyclesAndRefusesInstructionsInOneLine) {
  const std::string loop = " /bin/vperf-workload loop 20000000 >/dev/null 2>&1; echo exit=$?";
  const GuestCommandResult vc = SharedArm64Guest::run("vperf record -q -e cycles -o /tmp/v-cycles.data" + loop);
  const GuestCommandResult pc = SharedArm64Guest::run(std::string(kPerf) + " record -q -e cycles -o /tmp/p-cycles.data" + loop);
  ASSERT_NE(pc.out.find("exit=0"), std::string::npos) << "perf 6.1 falls back to cpu-clock: " << pc.out;
  ASSERT_NE(vc.out.find("exit=0"), std::string::npos) << vc.out;
  const std::string events = " -F event 2>/dev/null | sort | uniq -c | sed 's/^ *[0-9]* //'";
  const std::string by_perf_of_v = SharedArm64Guest::run(std::string(kPerf) + " script -i /tmp/v-cycles.data" + events).out;
  const std::string by_perf_of_p = SharedArm64Guest::run(std::string(kPerf) + " script -i /tmp/p-cycles.data" + events).out;
  EXPECT_EQ(by_perf_of_v, by_perf_of_p);
  EXPECT_NE(by_perf_of_v.find("cpu-clock"), std::string::npos) << by_perf_of_v;

  const GuestCommandResult v = SharedArm64Guest::run(
      "cd /tmp && vperf record -e instructions -o /tmp/nopmu.data /bin/vperf-workload loop 1000 2>&1 >/dev/null; "
      "echo exit=$?; ls /tmp/nopmu.data 2>&1");
  const GuestCommandResult p = SharedArm64Guest::run(std::string(kPerf) + " record -e instructions -o /tmp/nopmu-perf.data "
                                                     "/bin/vperf-workload loop 1000 >/dev/null 2>&1; echo exit=$?");
  EXPECT_EQ(p.out.find("exit=0"), std::string::npos) << "perf records instructions without a PMU?\n" << p.out;
  EXPECT_EQ(v.out.find("exit=0"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("No such file or directory"), std::string::npos) << "the data file was left behind:\n" << v.out;
  const std::string message = v.out.substr(0, v.out.find("exit="));
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << "one line:\n" << message;
}

}  // namespace
}  // namespace vperf::test
