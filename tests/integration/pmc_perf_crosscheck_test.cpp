// The real vperf binary against the real perf: what `vperf encode` prints must be accepted by
// `perf stat -e`. On a machine without a core PMU perf reports "<not supported>" and exits 0;
// a syntax error (exit != 0, "event syntax error") is what this test catches.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "support/capability.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

const std::string kPerfmonRoot = std::string(VPERF_TESTDATA) + "/perfmon";

boost::json::array encode_json(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"encode", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProgramResult r = run_vperf(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(r.out, ec);
  EXPECT_FALSE(ec) << "not JSON: " << r.out;
  if (ec || !v.is_array()) return {};
  return v.as_array();
}

void expect_perf_accepts(const std::string& event) {
  ProgramResult perf = run_program({"perf", "stat", "-x,", "-e", event, "true"});
  EXPECT_EQ(perf.exit_code, 0) << "perf stat -e " << event << " failed:\n" << perf.err;
  EXPECT_EQ(perf.err.find("event syntax error"), std::string::npos) << perf.err;
}

TEST(PmcPerfCrossCheck, EncodeJsonIsParseableAndComplete) {
  boost::json::array events = encode_json({"--model", "skx", "INST_RETIRED.ANY_P", "MEM_LOAD_RETIRED.L3_MISS:precise=2"});
  ASSERT_EQ(events.size(), 2u);
  const boost::json::object& first = events[0].as_object();
  EXPECT_EQ(first.at("raw").as_string(), "rc0");
  EXPECT_EQ(first.at("perf").as_string(), "cpu/event=0xc0,umask=0x00/");
  const boost::json::object& attr = first.at("perf_event_attr").as_object();
  EXPECT_EQ(attr.at("type").to_number<int>(), 4);
  EXPECT_EQ(attr.at("config").to_number<uint64_t>(), 0xc0u);
  EXPECT_EQ(events[1].as_object().at("perf_event_attr").as_object().at("precise_ip").to_number<int>(), 2);
}

TEST(PmcPerfCrossCheck, PerfStatAcceptsRawSyntaxForEveryModel) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf on PATH");
  struct Case {
    std::string model;
    std::vector<std::string> events;
  };
  std::vector<Case> cases = {
      {"ivb", {"INST_RETIRED:ANY_P", "L2_STORE_LOCK_RQSTS.HIT_M", "UOPS_ISSUED:ANY:c=1:i", "CPU_CLK_UNHALTED:REF_P:u"}},
      {"skx", {"INST_RETIRED.ANY_P", "OFFCORE_RESPONSE_0:DMND_DATA_RD:L3_MISS", "MEM_LOAD_RETIRED:L3_MISS:precise=2"}},
      {"spr", {"UNHALTED_REFERENCE_CYCLES", "TOPDOWN:SLOTS", "INST_RETIRED:ANY_P:k"}},
      {"zen3", {"RETIRED_INSTRUCTIONS", "CYCLES_NOT_IN_HALT"}},
  };
  size_t checked = 0;
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--model", c.model};
    args.insert(args.end(), c.events.begin(), c.events.end());
    for (const boost::json::value& v : encode_json(args)) {
      const boost::json::object& o = v.as_object();
      SCOPED_TRACE(c.model + " " + std::string(o.at("input").as_string()));
      if (o.at("perf_event_attr").as_object().at("config1").to_number<uint64_t>() != 0) {
        // rNNN cannot carry an offcore/ldlat MSR value: vperf must not offer one.
        EXPECT_TRUE(o.at("raw").is_null()) << o.at("raw");
      } else {
        expect_perf_accepts(std::string(o.at("raw").as_string()));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12u);
}

TEST(PmcPerfCrossCheck, PerfStatAcceptsPerfmonEncodings) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf on PATH");
  boost::json::array events = encode_json({"--model", "ivb", "--perfmon", kPerfmonRoot,
                                           "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE", "CPU_CLK_UNHALTED.REF_TSC",
                                           "UOPS_ISSUED.STALL_CYCLES"});
  ASSERT_EQ(events.size(), 3u);
  for (const boost::json::value& v : events)
    if (!v.as_object().at("raw").is_null()) expect_perf_accepts(std::string(v.as_object().at("raw").as_string()));
}

TEST(PmcPerfCrossCheck, PerfStatAcceptsCpuPmuSyntax) {
  VPERF_REQUIRE(std::filesystem::exists("/sys/bus/event_source/devices/cpu"),
                "a 'cpu' PMU in sysfs: perf resolves cpu/event=..,umask=../ through its format/ files");
  VPERF_REQUIRE(!find_program("perf").empty(), "perf on PATH");
  boost::json::array events = encode_json({"INST_RETIRED:ANY_P", "UNHALTED_REFERENCE_CYCLES"});
  for (const boost::json::value& v : events) expect_perf_accepts(std::string(v.as_object().at("perf").as_string()));
}

TEST(PmcPerfCrossCheck, DecodeFindsBothNamesOfR13cOnIvyBridge) {
  ProgramResult r = run_vperf({"decode", "--model", "ivb", "--perfmon", kPerfmonRoot, "r13c"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ivb::CPU_CLK_UNHALTED:REF_P"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CPU_CLK_THREAD_UNHALTED.REF_XCLK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100 MHz"), std::string::npos) << r.out;
}

TEST(PmcPerfCrossCheck, BadInputExitsWithUsageError) {
  ProgramResult model = run_vperf({"encode", "--model", "ivybrige", "INST_RETIRED:ANY_P"});
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("vperf: error: unknown CPU model 'ivybrige'"), std::string::npos) << model.err;
  EXPECT_NE(model.err.find("ivybridge"), std::string::npos) << model.err;
  ProgramResult raw = run_vperf({"decode", "--model", "ivb", "r13c", "cpu/event=zz/"});
  EXPECT_EQ(raw.exit_code, 2);
  EXPECT_NE(raw.err.find("cpu/event=zz/"), std::string::npos) << raw.err;
  ProgramResult event = run_vperf({"encode", "--model", "skx", "NO_SUCH_EVENT"});
  EXPECT_EQ(event.exit_code, 2);
  EXPECT_NE(event.err.find("NO_SUCH_EVENT"), std::string::npos) << event.err;
}

}  // namespace
}  // namespace vperf::test
