// vperf check on arm64, in the guest with QEMU's emulated PMUv3 (-cpu max, -icount shift=0):
// each fact check reports is held against a source that is not vperf's — the guest kernel's own
// /proc/cpuinfo for the MIDR, its boot log for the number of counters, the PMU's sysfs events
// for the cache verdict, and perf 6.1's own recordings for whether samples follow the period.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <regex>
#include <string>

#include "arm64_guest/shared_arm64_guest.h"

namespace vperf::test {
namespace {

constexpr const char* kPerf = "/lib/vperf-test/perf";

class Arm64Check : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!SharedArm64Guest::ready()) return;
    text_ = SharedArm64Guest::run("vperf check 2>&1").out;
    const GuestCommandResult json = SharedArm64Guest::run("vperf check --json");
    json_exit_ = json.exit_code;
    boost::system::error_code ec;
    json_ = boost::json::parse(json.out, ec);
    if (ec) json_ = nullptr;
  }
  void SetUp() override {
    if (!SharedArm64Guest::ready()) GTEST_FAIL() << "no arm64 guest";
    ASSERT_EQ(json_exit_, 0);
    ASSERT_TRUE(json_.is_object()) << "vperf check --json printed no JSON";
  }
  static const boost::json::object& verdict(const char* name) {
    return json_.at("verdicts").at(name).as_object();
  }
  static inline std::string text_;
  static inline boost::json::value json_;
  static inline int json_exit_ = -1;
};

// The guest kernel's /proc/cpuinfo names the same core as vperf's MIDR decoding: QEMU's own
// `-cpu max` (implementer 0, part 0x051), which says the platform is QEMU under TCG.
TEST_F(Arm64Check, MidrAndPlatformAreTheGuestKernels) {
  const std::string cpuinfo = SharedArm64Guest::run("cat /proc/cpuinfo").out;
  std::smatch part, implementer;
  ASSERT_TRUE(std::regex_search(cpuinfo, part, std::regex("CPU part\\s*: (0x[0-9a-f]+)"))) << cpuinfo;
  ASSERT_TRUE(std::regex_search(cpuinfo, implementer, std::regex("CPU implementer\\s*: (0x[0-9a-f]+)")));
  const auto& core = json_.at("arm").at("cores").at(0).as_object();
  EXPECT_EQ(std::stoul(core.at("part").as_string().c_str(), nullptr, 16), std::stoul(part[1], nullptr, 16));
  EXPECT_EQ(std::stoul(core.at("implementer").as_string().c_str(), nullptr, 16), std::stoul(implementer[1], nullptr, 16));
  EXPECT_EQ(core.at("midr").as_string(), "0x000f0510");
  EXPECT_EQ(core.at("cpus").as_array().size(), 2u) << "-smp 2";
  EXPECT_EQ(json_.at("arm").at("platform").at("hypervisor").as_string(), "QEMU TCG");
  EXPECT_EQ(json_.at("arm").at("platform").at("machine").as_string(), "QEMU virt machine");
  EXPECT_NE(text_.find("Summary: virtual machine under QEMU TCG (QEMU virt machine), QEMU 'max' r0p0 x 2, a group "
                       "holds 7 counters, hardware perf events open."),
            std::string::npos)
      << text_;
}

// The kernel's boot log says how many counters the PMU driver found; check's group probe finds
// the same number without reading it.
TEST_F(Arm64Check, GroupCapacityIsTheCountersTheDriverFound) {
  const std::string dmesg = SharedArm64Guest::run("dmesg").out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dmesg, m, std::regex("armv8_pmuv3 PMU driver, (\\d+) counters available"))) << dmesg;
  EXPECT_EQ(json_.at("live").at("perf").at("group_capacity").to_number<int>(), std::stoi(m[1]));
  EXPECT_FALSE(json_.at("live").at("perf").at("group_capacity_limited").as_bool());
  EXPECT_TRUE(verdict("ipc").at("available").as_bool()) << verdict("ipc").at("reason").as_string();
}

// perf 6.1 records the same loop with the same period: cycles gives a sample per period,
// instructions about one per timer tick. check's sampling verdict says so, and names cycles.
TEST_F(Arm64Check, SamplingVerdictAgreesWithPerfsOwnRecordings) {
  auto samples_per_period = [](const std::string& event) {
    const GuestCommandResult count = SharedArm64Guest::run(std::string(kPerf) + " stat -x, -e " + event +
                                                           ":u /bin/vperf-workload loop 5000000 2>&1 >/dev/null");
    const GuestCommandResult rec = SharedArm64Guest::run(
        std::string(kPerf) + " record -q -e " + event + ":u -c 100003 -o /tmp/check-" + event +
        ".data /bin/vperf-workload loop 5000000 >/dev/null 2>&1 && " + kPerf + " script -i /tmp/check-" + event +
        ".data 2>/dev/null | wc -l");
    EXPECT_EQ(rec.exit_code, 0) << rec.out << rec.err;
    const double counted = std::stod(count.out.substr(0, count.out.find(',')));
    return std::stod(rec.out) / (counted / 100003);
  };
  const double cycles = samples_per_period("cycles"), instructions = samples_per_period("instructions");
  ASSERT_GT(cycles, 0.9) << "perf: cycles samples follow the period";
  ASSERT_LT(instructions, 0.5) << "perf: instructions samples do not (QEMU's defect this test is about)";

  const auto& sampling = json_.at("live").at("perf").at("sampling").as_array();
  ASSERT_EQ(sampling.size(), 2u);
  EXPECT_EQ(sampling.at(0).at("event").as_string(), "cycles");
  EXPECT_TRUE(sampling.at(0).at("follows_period").as_bool()) << boost::json::serialize(sampling.at(0));
  EXPECT_EQ(sampling.at(1).at("event").as_string(), "instructions");
  EXPECT_FALSE(sampling.at(1).at("follows_period").as_bool()) << boost::json::serialize(sampling.at(1));
  EXPECT_FALSE(verdict("sampling").at("available").as_bool());
  EXPECT_EQ(verdict("sampling").at("fix").as_string(), "sample on cycles instead (-e cycles)");
}

// The cache verdict follows what the PMU lists in sysfs (the kernel shows the common events
// PMCEID says are implemented); QEMU implements no SPE, and arm64 has no APERF/MPERF.
TEST_F(Arm64Check, CacheSpeAndTurboVerdictsFollowTheGuestsPmu) {
  const std::string events = SharedArm64Guest::run("ls /sys/bus/event_source/devices/armv8_pmuv3/events").out;
  const bool ll = events.find("ll_cache_rd") != std::string::npos && events.find("ll_cache_miss_rd") != std::string::npos;
  EXPECT_EQ(verdict("llc").at("available").as_bool(), ll) << verdict("llc").at("reason").as_string() << "\n" << events;
  const std::string devices = SharedArm64Guest::run("ls /sys/bus/event_source/devices").out;
  EXPECT_EQ(devices.find("arm_spe"), std::string::npos) << devices;
  EXPECT_FALSE(verdict("precise").at("available").as_bool());
  EXPECT_NE(std::string(verdict("precise").at("fix").as_string()).find("SPE needs bare metal"), std::string::npos);
  EXPECT_FALSE(verdict("turbo").at("available").as_bool());
  EXPECT_EQ(verdict("turbo").at("basis").as_string(), "architecture");
  EXPECT_EQ(json_.at("live").at("msr").as_array().size(), 0u) << "no MSRs are probed on arm64";
}

}  // namespace
}  // namespace vperf::test
