// The arm64 PMC catalog against its two independent sources, in the arm64 guest: perf 6.1 for
// arm64 (Debian's linux-perf) lists a model's JSON events when PERF_CPUID names the model (its
// tables are compiled into the binary from Linux 6.1's tree; vperf bundles Linux 6.12's), and
// libpfm4's arm64 build has its own tables (arm_n1, arm_v1 ...), which vperf lists beside
// perf's. Every event name the sources share must have the same code; the names that differ
// are exactly the changes between Linux 6.1's tables and 6.12's.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "arm64_guest/shared_arm64_guest.h"

namespace vperf::test {
namespace {

constexpr const char* kPerf = "/lib/vperf-test/perf";

using Codes = std::map<std::string, uint32_t>;  // lower-case name -> event code

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// `perf list --details pmu`: a name line ("  inst_retired"), its description, then its
// encoding ("armv8_pmuv3/event=0x8/"; perf prints zero as "event=0").
Codes perf_codes(const std::string& midr) {
  const GuestCommandResult r = SharedArm64Guest::run("PERF_CPUID=" + midr + " " + kPerf + " list --details pmu 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  static const std::regex name_line("^  ([a-z0-9_]+)\\s*$");
  static const std::regex encoding("/event=(0x[0-9a-f]+|0)/");
  Codes codes;
  std::string name;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, name_line)) {
      name = m[1];
    } else if (!name.empty() && std::regex_search(line, m, encoding)) {
      codes[name] = static_cast<uint32_t>(std::stoul(m[1], nullptr, 0));
      name.clear();
    }
  }
  return codes;
}

struct VperfCatalog {
  Codes perf_json;  // the bundled perf tables
  Codes libpfm;     // libpfm4's core PMU table
};

VperfCatalog vperf_codes(const std::string& model) {
  const GuestCommandResult r = SharedArm64Guest::run("vperf list --pmc --model " + model + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  boost::system::error_code ec;
  boost::json::value j = boost::json::parse(r.out, ec);
  VperfCatalog out;
  if (ec) {
    ADD_FAILURE() << "vperf list --pmc --json printed no JSON: " << r.out.substr(0, 400);
    return out;
  }
  for (const auto& file : j.at("perfmon").as_array())
    for (const auto& e : file.at("events").as_array())
      out.perf_json[lower(std::string(e.at("name").as_string()))] =
          static_cast<uint32_t>(std::stoul(std::string(e.at("event_codes").at(0).as_string()), nullptr, 0));
  for (const auto& pmu : j.at("pmus").as_array())
    if (pmu.at("kind").as_string() == "core")
      for (const auto& e : pmu.at("events").as_array())
        out.libpfm[lower(std::string(e.at("name").as_string()))] =
            static_cast<uint32_t>(std::stoul(std::string(e.at("code").as_string()), nullptr, 0));
  return out;
}

std::set<std::string> only_in(const Codes& a, const Codes& b) {
  std::set<std::string> out;
  for (const auto& [name, code] : a)
    if (!b.count(name)) out.insert(name);
  return out;
}

size_t shared_with_same_code(const Codes& a, const Codes& b) {
  size_t n = 0;
  for (const auto& [name, code] : a) {
    auto it = b.find(name);
    if (it == b.end()) continue;
    EXPECT_EQ(it->second, code) << name;
    ++n;
  }
  return n;
}

class Arm64Catalog : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedArm64Guest::ready()) GTEST_FAIL() << "no arm64 guest";
  }
};

// Linux 6.12 added the four SPE sample_* events to N1 and V1 and dropped N1's ldst_spec; N2 and
// A64FX did not change. Anything else differing is a reading error of vperf's.
TEST_F(Arm64Catalog, PerfJsonTablesMatchPerf61ForItsModels) {
  const std::set<std::string> spe = {"sample_collision", "sample_feed", "sample_filtrate", "sample_pop"};
  struct Case {
    std::string model, midr;
    size_t perf_events;
    std::set<std::string> only_perf61, only_vperf;
  };
  for (const Case& c : {Case{"neoverse-n1", "0x00000000410fd0c0", 106, {"ldst_spec"}, spe},
                        Case{"neoverse-v1", "0x00000000410fd400", 127, {}, spe},
                        Case{"neoverse-n2", "0x00000000410fd490", 154, {}, {}},
                        Case{"a64fx", "0x00000000460f0010", 183, {}, {}}}) {
    SCOPED_TRACE(c.model);
    const Codes perf = perf_codes(c.midr);
    const VperfCatalog vperf = vperf_codes(c.model);
    EXPECT_EQ(perf.size(), c.perf_events);
    EXPECT_EQ(only_in(perf, vperf.perf_json), c.only_perf61);
    EXPECT_EQ(only_in(vperf.perf_json, perf), c.only_vperf);
    EXPECT_EQ(shared_with_same_code(perf, vperf.perf_json), c.perf_events - c.only_perf61.size());
  }
}

// libpfm4's own arm tables, which vperf lists beside perf's: the same codes for the names they
// share (they spell a few events differently, L1I_CACHE_ACCESS for L1I_CACHE, and keep aliases).
TEST_F(Arm64Catalog, LibpfmTablesAgreeWithPerfsForTwoModels) {
  for (const auto& [model, libpfm_events, at_least_shared] :
       {std::tuple<std::string, size_t, size_t>{"neoverse-n1", 114, 100}, {"neoverse-v1", 132, 120}}) {
    SCOPED_TRACE(model);
    const VperfCatalog vperf = vperf_codes(model);
    EXPECT_EQ(vperf.libpfm.size(), libpfm_events);
    EXPECT_GE(shared_with_same_code(vperf.libpfm, vperf.perf_json), at_least_shared);
  }
}

// Encode and decode both ways on the guest's own PMU: INST_RETIRED by name is r8, and what the
// guest's kernel counts for r8 is what it counts for instructions (equal under -icount).
TEST_F(Arm64Catalog, EncodedNamesCountWhatTheKernelsEventsCount) {
  const GuestCommandResult enc = SharedArm64Guest::run("vperf encode --model neoverse-n1 INST_RETIRED CPU_CYCLES");
  ASSERT_EQ(enc.exit_code, 0) << enc.out << enc.err;
  EXPECT_NE(enc.out.find("perf raw        r8\n"), std::string::npos) << enc.out;
  EXPECT_NE(enc.out.find("perf pmu        armv8_pmuv3_0/event=0x11/"), std::string::npos) << enc.out;
  const GuestCommandResult dec = SharedArm64Guest::run("vperf decode --model neoverse-n1 armv8_pmuv3/event=0x8/ r11");
  ASSERT_EQ(dec.exit_code, 0) << dec.out << dec.err;
  EXPECT_NE(dec.out.find("perfmon INST_RETIRED"), std::string::npos) << dec.out;
  EXPECT_NE(dec.out.find("perfmon CPU_CYCLES"), std::string::npos) << dec.out;
  const GuestCommandResult stat = SharedArm64Guest::run(
      "vperf stat -x, -e r8:u,instructions:u,armv8_pmuv3/event=0x11/u /bin/vperf-workload loop 1000000 2>&1 >/dev/null");
  ASSERT_EQ(stat.exit_code, 0) << stat.out;
  std::istringstream in(stat.out);
  std::vector<double> counts;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) counts.push_back(std::stod(line));
  ASSERT_EQ(counts.size(), 3u) << stat.out;
  EXPECT_EQ(counts[0], counts[1]) << "r8 is the kernel's instructions";
  EXPECT_EQ(counts[0], counts[2]) << "cycles = instructions under -icount shift=0";
}

// This guest's CPU is QEMU's own: no table names it, and list --pmc says so in one line.
TEST_F(Arm64Catalog, UnknownArmCoreIsOneClearLine) {
  const GuestCommandResult r = SharedArm64Guest::run("vperf list --pmc 2>&1; echo exit=$?");
  EXPECT_NE(r.out.find("no PMC tables for this arm64 CPU (MIDR 0x000f0510)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--model neoverse-n1"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  EXPECT_EQ(r.out.find("exit=0"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace vperf::test
