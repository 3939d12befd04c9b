// `vperf check --cpuid-dump` on every dump of testdata/cpuid: the JSON must carry the values of
// the README's hand-decoded table ("Ground truth: leaf 0xA decoded by hand").
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>

#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const fs::path kDumps = fs::path(VPERF_TESTDATA) / "cpuid";

struct Row {
  std::string file;
  std::string cpu;  // "" = default
  std::string hypervisor;  // "" = null
  unsigned version, gp, width, fixed;
  std::vector<std::string> unavailable;
};

const std::vector<Row> kReadme = {
    {"intel-ivybridge-i7-3770k-baremetal.txt", "", "", 3, 4, 48, 3, {}},
    {"intel-skylake-sp-xeon-silver-4108-baremetal.txt", "", "", 4, 4, 48, 3, {}},
    {"intel-sapphirerapids-xeon-w7-2475x-baremetal.txt", "", "", 5, 8, 48, 4, {}},
    {"intel-alderlake-i9-12900k-hybrid-baremetal.txt", "0", "", 5, 6, 48, 3, {}},
    {"intel-alderlake-i9-12900k-hybrid-baremetal.txt", "16", "", 5, 6, 48, 3, {}},
    {"intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt", "0", "", 6, 8, 48, 3,
     {"topdown-slots", "topdown-bad-speculation"}},
    {"intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt", "4", "", 6, 8, 48, 3,
     {"topdown-slots", "topdown-bad-speculation"}},
    {"amd-zen2-ryzen5-3600x-baremetal.txt", "", "", 0, 0, 0, 0, {}},
    {"amd-zen3-ryzen7-5700x3d-baremetal.txt", "", "", 0, 0, 0, 0, {}},
    {"firecracker-kvm-spr-nopmu.txt", "", "KVM", 0, 0, 0, 0, {}},
    {"firecracker-kvm-milan-t2a-nopmu.txt", "", "KVM", 0, 0, 0, 0, {}},
    {"xen-aws-c3large-ivybridge.txt", "", "Xen", 0, 0, 0, 0, {}},
    {"xen-aws-t2micro-haswell.txt", "", "Xen", 0, 0, 0, 0, {}},
    {"hyperv-guest-haswell-xeon-e5-2680v3.txt", "", "Hyper-V", 0, 0, 0, 0, {}},
    {"hyperv-wsl2-zen2-ryzen9-3950x.txt", "", "Hyper-V", 0, 0, 0, 0, {}},
    {"vmware-sandybridge-i5-2520m-vpmu.txt", "", "VMware", 3, 4, 48, 3, {}},
    {"vmware-skylake-i7-6600u-nopmu.txt", "", "VMware", 1, 4, 48, 0,
     {"core-cycles", "instructions", "ref-cycles", "llc-references", "llc-misses", "branch-instructions",
      "branch-misses"}},
    {"virtualbox-kvm-paravirt-haswell-i7-4980hq.txt", "", "KVM", 0, 0, 0, 0, {}},
};

class CheckDump : public ::testing::TestWithParam<Row> {};

TEST_P(CheckDump, JsonMatchesReadme) {
  const Row& row = GetParam();
  std::vector<std::string> args = {"check", "--json", "--cpuid-dump", (kDumps / row.file).string()};
  if (!row.cpu.empty()) args.insert(args.end(), {"--cpu", row.cpu});
  auto r = test::run_vperf(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::object j = json::parse(r.out).as_object();
  EXPECT_EQ(j.at("source").at("cpuid").as_string(), "dump");
  EXPECT_TRUE(j.at("live").is_null()) << "live probes would describe this machine, not the dump";
  if (row.hypervisor.empty())
    EXPECT_TRUE(j.at("hypervisor").at("vendor").is_null());
  else
    EXPECT_EQ(j.at("hypervisor").at("vendor").as_string(), row.hypervisor);
  const auto& arch = j.at("arch_perfmon").as_object();
  EXPECT_EQ(arch.at("version").to_number<unsigned>(), row.version);
  EXPECT_EQ(arch.at("gp_counters").to_number<unsigned>(), row.gp);
  EXPECT_EQ(arch.at("gp_width").to_number<unsigned>(), row.width);
  EXPECT_EQ(arch.at("fixed_counters").to_number<unsigned>(), row.fixed);
  std::vector<std::string> unavailable;
  for (const auto& e : arch.at("unavailable_events").as_array()) unavailable.emplace_back(e.as_string());
  EXPECT_EQ(unavailable, row.unavailable);
  for (const auto& [name, v] : j.at("verdicts").as_object()) EXPECT_TRUE(v.at("available").is_bool()) << name;
}

INSTANTIATE_TEST_SUITE_P(Readme, CheckDump, ::testing::ValuesIn(kReadme),
                         [](const ::testing::TestParamInfo<Row>& param_info) {
                           std::string name = param_info.param.file.substr(0, param_info.param.file.find('.')) +
                                              (param_info.param.cpu.empty() ? "" : "_cpu" + param_info.param.cpu);
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(CheckDumpCoverage, EveryDumpIsTested) {
  for (const auto& entry : fs::directory_iterator(kDumps)) {
    if (entry.path().extension() != ".txt") continue;
    bool found = false;
    for (const Row& row : kReadme) found |= row.file == entry.path().filename().string();
    EXPECT_TRUE(found) << entry.path();
  }
}

// Exit status: 1 for a file that is missing, unreadable or malformed; 2 for bad arguments.
void expect_one_line_error(const test::ProgramResult& r, const std::string& must_contain) {
  EXPECT_EQ(r.err.rfind("vperf: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("(hint: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_NE(r.err.find(must_contain), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CheckDumpErrors, MalformedDumpNamesFileAndLine) {
  const fs::path bad = fs::temp_directory_path() / "vperf-bad-cpuid-dump.txt";
  std::ofstream(bad) << "CPU:\n   0x00000000 0x00: eax=0x00000020 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
                        "   0x0000000a 0x00: eax=0x0730zz02 ebx=0x00000000 ecx=0x00000000 edx=0x00008603\n";
  auto r = test::run_vperf({"check", "--cpuid-dump", bad.string()});
  expect_one_line_error(r, bad.string() + ":3: bad register value 'eax=0x0730zz02'");
  EXPECT_EQ(r.exit_code, 1);
  fs::remove(bad);
}

TEST(CheckDumpErrors, DumpWithoutLeafOneIsRefusedNotGuessed) {
  const fs::path partial = fs::temp_directory_path() / "vperf-leaf0-only.txt";
  std::ofstream(partial) << "CPU:\n   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n";
  auto r = test::run_vperf({"check", "--cpuid-dump", partial.string()});
  expect_one_line_error(r, "has no leaf 0x1");
  EXPECT_EQ(r.exit_code, 1);
  fs::remove(partial);
}

TEST(CheckDumpErrors, MissingDumpFile) {
  auto r = test::run_vperf({"check", "--cpuid-dump", "/nonexistent/dump.txt"});
  expect_one_line_error(r, "/nonexistent/dump.txt");
  EXPECT_EQ(r.exit_code, 1);
}

TEST(CheckDumpErrors, NotADump) {
  auto r = test::run_vperf({"check", "--cpuid-dump", "/etc/os-release"});
  expect_one_line_error(r, "no CPUID records found");
  EXPECT_EQ(r.exit_code, 1);
}

TEST(CheckDumpErrors, CpuNotInDump) {
  auto r = test::run_vperf(
      {"check", "--cpuid-dump", (kDumps / "intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt").string(), "--cpu", "2"});
  expect_one_line_error(r, "it has CPU 0 or 4");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace vperf
