// `vperf check` on this machine, cross-checked against independent readers: the cpuid(1) tool
// for CPUID, perf(1) for counting, and the tracefs files themselves.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "support/capability.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

json::object check_json() {
  auto r = test::run_vperf({"check", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out).as_object();
}

struct Regs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// `cpuid -1 -r`, read with sscanf: deliberately not vperf's parser.
std::map<std::pair<uint32_t, uint32_t>, Regs> cpuid_tool_leaves() {
  std::map<std::pair<uint32_t, uint32_t>, Regs> leaves;
  auto r = test::run_program({"cpuid", "-1", "-r"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    unsigned leaf, sub;
    Regs g;
    if (std::sscanf(line.c_str(), " 0x%x 0x%x: eax=0x%x ebx=0x%x ecx=0x%x edx=0x%x", &leaf, &sub, &g.eax, &g.ebx, &g.ecx,
                    &g.edx) == 6)
      leaves[{leaf, sub}] = g;
  }
  return leaves;
}

std::string text12(uint32_t a, uint32_t b, uint32_t c) {
  std::string s;
  for (uint32_t r : {a, b, c})
    for (int i = 0; i < 4; ++i) s += static_cast<char>((r >> (8 * i)) & 0xff);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

TEST(CheckLive, JsonHasTheDocumentedKeys) {
  json::object j = check_json();
  for (const char* key : {"vendor", "family", "model"}) EXPECT_TRUE(j.at("cpu").as_object().contains(key)) << key;
  EXPECT_TRUE(j.at("hypervisor").as_object().contains("vendor"));
  for (const char* key : {"version", "gp_counters", "gp_width", "fixed_counters", "unavailable_events"})
    EXPECT_TRUE(j.at("arch_perfmon").as_object().contains(key)) << key;
  for (const char* name : {"ipc", "turbo", "llc", "precise", "kernel_symbols", "tracepoints", "uprobes", "kprobes",
                           "guest_profiling"}) {
    const auto& v = j.at("verdicts").at(name).as_object();
    EXPECT_TRUE(v.at("available").is_bool()) << name;
    EXPECT_TRUE(v.at("reason").is_string()) << name;
    EXPECT_FALSE(v.at("reason").as_string().empty()) << name;
    EXPECT_TRUE(v.at("fix").is_string()) << name;
    if (!v.at("available").as_bool()) {
      EXPECT_FALSE(v.at("fix").as_string().empty()) << name;
    }
  }
}

TEST(CheckLive, HypervisorMatchesCpuidTool) {
  VPERF_REQUIRE(!test::find_program("cpuid").empty(), "the cpuid(1) tool");
  auto leaves = cpuid_tool_leaves();
  ASSERT_TRUE(leaves.count({1, 0}));
  json::object j = check_json();
  const bool hv_bit = (leaves[{1, 0}].ecx >> 31) & 1;
  EXPECT_EQ(j.at("hypervisor").at("cpuid_bit").as_bool(), hv_bit);
  if (!hv_bit) {
    EXPECT_TRUE(j.at("hypervisor").at("vendor").is_null());
    return;
  }
  ASSERT_TRUE(leaves.count({0x40000000, 0}));
  const Regs& base = leaves[{0x40000000, 0}];
  const std::string signature = text12(base.ebx, base.ecx, base.edx);
  EXPECT_EQ(j.at("hypervisor").at("signature").as_string(), signature);
  static const std::map<std::string, std::string> kVendors = {
      {"KVMKVMKVM", "KVM"}, {"XenVMMXenVMM", "Xen"}, {"Microsoft Hv", "Hyper-V"}, {"VMwareVMware", "VMware"}};
  if (kVendors.count(signature)) {
    EXPECT_EQ(j.at("hypervisor").at("vendor").as_string(), kVendors.at(signature));
  }
}

TEST(CheckLive, ArchPerfmonMatchesLeafAFromCpuidTool) {
  VPERF_REQUIRE(!test::find_program("cpuid").empty(), "the cpuid(1) tool");
  auto leaves = cpuid_tool_leaves();
  ASSERT_TRUE(leaves.count({0xA, 0}));
  const Regs a = leaves[{0xA, 0}];
  const unsigned version = a.eax & 0xff;
  json::object j = check_json();
  const auto& arch = j.at("arch_perfmon").as_object();
  EXPECT_EQ(arch.at("version").to_number<unsigned>(), version);
  EXPECT_EQ(arch.at("gp_counters").to_number<unsigned>(), version ? (a.eax >> 8) & 0xff : 0u);
  EXPECT_EQ(arch.at("gp_width").to_number<unsigned>(), version ? (a.eax >> 16) & 0xff : 0u);
  EXPECT_EQ(arch.at("fixed_counters").to_number<unsigned>(), version >= 2 ? a.edx & 0x1f : 0u);
  const unsigned length = version ? (a.eax >> 24) & 0xff : 0;
  unsigned unavailable = 0;
  for (unsigned bit = 0; bit < std::min(length, 13u); ++bit) unavailable += (a.ebx >> bit) & 1;
  EXPECT_EQ(arch.at("unavailable_events").as_array().size(), unavailable);
}

TEST(CheckLive, TracingVerdictsMatchTracefs) {
  json::object j = check_json();
  const auto& v = j.at("verdicts");
  EXPECT_EQ(v.at("tracepoints").at("available").as_bool(), fs::is_directory("/sys/kernel/tracing/events"));
  EXPECT_EQ(v.at("uprobes").at("available").as_bool(), fs::exists("/sys/kernel/tracing/uprobe_events"));
  EXPECT_EQ(v.at("kprobes").at("available").as_bool(), fs::exists("/sys/kernel/tracing/kprobe_events"));
}

TEST(CheckLive, IpcMatchesPerfStat) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf(1)");
  auto perf = test::run_program({"perf", "stat", "-x,", "-e", "instructions:u", "true"});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  // CSV: "<count>,,instructions:u,..." or "<not supported>,,instructions:u,..."
  const std::string first_field = perf.err.substr(0, perf.err.find(','));
  const bool perf_counts = !first_field.empty() && std::isdigit(static_cast<unsigned char>(first_field[0])) &&
                           std::stoull(first_field) > 0;
  json::object j = check_json();
  EXPECT_EQ(j.at("verdicts").at("ipc").at("available").as_bool(), perf_counts) << perf.err;
}

TEST(CheckLive, TextReportHasEverySection) {
  auto r = test::run_vperf({"check"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* section : {"\nCPU\n", "\nHypervisor\n", "\nArchitectural PMU\n", "\nLive probes", "\nPMUs in sysfs\n",
                              "\nKernel settings\n", "\nVerdicts"})
    EXPECT_NE(r.out.find(section), std::string::npos) << section;
}

TEST(CheckLive, CpuWithoutDumpIsAUsageError) {
  auto r = test::run_vperf({"check", "--cpu", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("vperf: error: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace vperf
