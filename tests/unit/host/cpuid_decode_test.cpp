// Every dump in testdata/cpuid decoded and checked against the hand-decoded table in its
// README ("Ground truth: leaf 0xA decoded by hand"). Family/model/stepping were decoded by hand
// from leaf 1 EAX with the extended-family/model rules.
#include "host/cpuid_decode.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "host/cpuid_dump.h"

namespace vperf::host {
namespace {

const std::filesystem::path kDumps = std::filesystem::path(VPERF_TESTDATA) / "cpuid";

struct AmdTruth {
  bool ext_core, ext_nb, ext_llc;
  bool leaf_80000022;
  bool perfmon_v2;
};

struct Truth {
  std::string file;
  std::optional<int> cpu;  // --cpu for hybrids
  std::string vendor;
  unsigned family, model, stepping;
  std::string hypervisor;  // "" = bare metal
  uint32_t hv_max_leaf;
  unsigned version, gp, width, ebx_length;
  std::vector<std::string> unavailable;
  unsigned fixed, fixed_width;
  uint32_t fixed_mask;
  bool anythread_deprecated;
  std::optional<AmdTruth> amd;
};

const std::vector<Truth> kTruth = {
    {"intel-ivybridge-i7-3770k-baremetal.txt", {}, "GenuineIntel", 6, 0x3A, 9, "", 0,
     3, 4, 48, 7, {}, 3, 48, 0x7, false, {}},
    {"intel-skylake-sp-xeon-silver-4108-baremetal.txt", {}, "GenuineIntel", 6, 0x55, 4, "", 0,
     4, 4, 48, 7, {}, 3, 48, 0x7, false, {}},
    {"intel-sapphirerapids-xeon-w7-2475x-baremetal.txt", {}, "GenuineIntel", 6, 0x8F, 8, "", 0,
     5, 8, 48, 8, {}, 4, 48, 0xF, true, {}},
    {"intel-alderlake-i9-12900k-hybrid-baremetal.txt", 0, "GenuineIntel", 6, 0x97, 2, "", 0,
     5, 6, 48, 7, {}, 3, 48, 0x7, true, {}},
    {"intel-alderlake-i9-12900k-hybrid-baremetal.txt", 16, "GenuineIntel", 6, 0x97, 2, "", 0,
     5, 6, 48, 7, {}, 3, 48, 0x7, true, {}},
    {"intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt", 0, "GenuineIntel", 6, 0xBD, 1, "", 0,
     6, 8, 48, 13, {"topdown-slots", "topdown-bad-speculation"}, 3, 48, 0x7, true, {}},
    {"intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt", 4, "GenuineIntel", 6, 0xBD, 1, "", 0,
     6, 8, 48, 13, {"topdown-slots", "topdown-bad-speculation"}, 3, 48, 0x7, true, {}},
    {"amd-zen2-ryzen5-3600x-baremetal.txt", {}, "AuthenticAMD", 0x17, 0x71, 0, "", 0,
     0, 0, 0, 0, {}, 0, 0, 0, false, AmdTruth{true, true, true, false, false}},
    {"amd-zen3-ryzen7-5700x3d-baremetal.txt", {}, "AuthenticAMD", 0x19, 0x21, 2, "", 0,
     0, 0, 0, 0, {}, 0, 0, 0, false, AmdTruth{true, true, true, true, false}},
    {"firecracker-kvm-spr-nopmu.txt", {}, "GenuineIntel", 6, 0x8F, 8, "KVM", 0x40000001,
     0, 0, 0, 0, {}, 0, 0, 0, false, {}},
    // The T2A template masks leaf 1 to a Haswell-like 0x306f2 signature.
    {"firecracker-kvm-milan-t2a-nopmu.txt", {}, "AuthenticAMD", 6, 0x3F, 2, "KVM", 0x40000001,
     0, 0, 0, 0, {}, 0, 0, 0, false, AmdTruth{true, false, false, false, false}},
    {"xen-aws-c3large-ivybridge.txt", {}, "GenuineIntel", 6, 0x3E, 4, "Xen", 0x40000005,
     0, 0, 0, 0, {}, 0, 0, 0, false, {}},
    {"xen-aws-t2micro-haswell.txt", {}, "GenuineIntel", 6, 0x3F, 2, "Xen", 0x40000005,
     0, 0, 0, 0, {}, 0, 0, 0, false, {}},
    {"hyperv-guest-haswell-xeon-e5-2680v3.txt", {}, "GenuineIntel", 6, 0x3F, 2, "Hyper-V", 0x40000006,
     0, 0, 0, 0, {}, 0, 0, 0, false, {}},
    {"hyperv-wsl2-zen2-ryzen9-3950x.txt", {}, "AuthenticAMD", 0x17, 0x71, 0, "Hyper-V", 0x4000000B,
     0, 0, 0, 0, {}, 0, 0, 0, false, AmdTruth{false, false, false, false, false}},
    {"vmware-sandybridge-i5-2520m-vpmu.txt", {}, "GenuineIntel", 6, 0x2A, 7, "VMware", 0x40000010,
     3, 4, 48, 7, {}, 3, 48, 0x7, false, {}},
    {"vmware-skylake-i7-6600u-nopmu.txt", {}, "GenuineIntel", 6, 0x4E, 3, "VMware", 0x40000010,
     1, 4, 48, 7,
     {"core-cycles", "instructions", "ref-cycles", "llc-references", "llc-misses", "branch-instructions",
      "branch-misses"},
     0, 0, 0, false, {}},
    {"virtualbox-kvm-paravirt-haswell-i7-4980hq.txt", {}, "GenuineIntel", 6, 0x46, 1, "KVM", 0x40000001,
     0, 0, 0, 0, {}, 0, 0, 0, false, {}},
};

CpuidReport decode_file(const std::string& file, std::optional<int> cpu) {
  auto dump = load_cpuid_dump(kDumps / file);
  EXPECT_TRUE(dump.ok()) << (dump.ok() ? "" : dump.error().message);
  if (!dump.ok()) return {};
  auto index = select_dump_cpu(*dump, cpu);
  EXPECT_TRUE(index.ok());
  if (!index.ok()) return {};
  DumpCpuidSource source(*dump, *index);
  return decode_cpuid(source);
}

class ReadmeGroundTruth : public ::testing::TestWithParam<Truth> {};

TEST_P(ReadmeGroundTruth, MatchesHandDecodedTable) {
  const Truth& t = GetParam();
  CpuidReport r = decode_file(t.file, t.cpu);
  EXPECT_EQ(r.cpu.vendor, t.vendor);
  EXPECT_EQ(r.cpu.family, t.family);
  EXPECT_EQ(r.cpu.model, t.model);
  EXPECT_EQ(r.cpu.stepping, t.stepping);

  // README: "For the VMs with 0xA all 0, the hypervisor bit is set. For bare metal it is clear."
  EXPECT_EQ(r.cpu.hypervisor_bit, !t.hypervisor.empty());
  const HypervisorSignature* hv = r.hypervisor.primary_signature();
  if (t.hypervisor.empty()) {
    EXPECT_EQ(hv, nullptr);
  } else {
    ASSERT_NE(hv, nullptr);
    EXPECT_EQ(hv->vendor, t.hypervisor);
    EXPECT_EQ(hv->base, 0x40000000u);
    EXPECT_EQ(hv->max_leaf, t.hv_max_leaf);
  }

  EXPECT_EQ(r.arch.version, t.version);
  EXPECT_EQ(r.arch.gp_counters, t.gp);
  EXPECT_EQ(r.arch.gp_width, t.width);
  EXPECT_EQ(r.arch.ebx_length, t.ebx_length);
  EXPECT_EQ(r.arch.unavailable_events, t.unavailable);
  EXPECT_EQ(r.arch.available_events.size() + r.arch.unavailable_events.size(), t.ebx_length);
  EXPECT_EQ(r.arch.fixed_counters, t.fixed);
  EXPECT_EQ(r.arch.fixed_width, t.fixed_width);
  EXPECT_EQ(r.arch.fixed_counter_mask, t.fixed_mask);
  EXPECT_EQ(r.arch.anythread_deprecated, t.anythread_deprecated);

  ASSERT_EQ(r.amd.has_value(), t.amd.has_value());
  if (t.amd) {
    EXPECT_EQ(r.amd->perf_ctr_ext_core, t.amd->ext_core);
    EXPECT_EQ(r.amd->perf_ctr_ext_nb, t.amd->ext_nb);
    EXPECT_EQ(r.amd->perf_ctr_ext_llc, t.amd->ext_llc);
    EXPECT_EQ(r.amd->leaf_80000022_present, t.amd->leaf_80000022);
    EXPECT_EQ(r.amd->perfmon_v2, t.amd->perfmon_v2);
    EXPECT_EQ(r.amd->core_counters(), t.amd->ext_core ? 6u : 4u);
  }
}

INSTANTIATE_TEST_SUITE_P(Dumps, ReadmeGroundTruth, ::testing::ValuesIn(kTruth),
                         [](const ::testing::TestParamInfo<Truth>& param_info) {
                           std::string name = param_info.param.file.substr(0, param_info.param.file.find('.'));
                           if (param_info.param.cpu) name += "_cpu" + std::to_string(*param_info.param.cpu);
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(ReadmeGroundTruthCoverage, EveryDumpInTheDirectoryHasARow) {
  for (const auto& entry : std::filesystem::directory_iterator(kDumps)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string name = entry.path().filename().string();
    bool found = false;
    for (const Truth& t : kTruth) found |= t.file == name;
    EXPECT_TRUE(found) << name << " has no ground-truth row";
  }
}

TEST(CpuidDecode, Pdcm) {
  EXPECT_TRUE(decode_file("intel-ivybridge-i7-3770k-baremetal.txt", {}).cpu.pdcm);
  EXPECT_FALSE(decode_file("firecracker-kvm-spr-nopmu.txt", {}).cpu.pdcm);
  EXPECT_TRUE(decode_file("intel-ivybridge-i7-3770k-baremetal.txt", {}).cpu.ds);
}

TEST(CpuidDecode, HybridCoreTypes) {
  EXPECT_EQ(decode_file("intel-alderlake-i9-12900k-hybrid-baremetal.txt", 0).cpu.hybrid_core_type, 0x40);
  EXPECT_EQ(decode_file("intel-alderlake-i9-12900k-hybrid-baremetal.txt", 16).cpu.hybrid_core_type, 0x20);
  EXPECT_EQ(decode_file("intel-sapphirerapids-xeon-w7-2475x-baremetal.txt", {}).cpu.hybrid_core_type, std::nullopt);
}

TEST(CpuidDecode, LunarLakeLeaf23PCore) {
  auto r = decode_file("intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt", 0);
  ASSERT_TRUE(r.arch_ext.has_value());
  EXPECT_EQ(r.arch_ext->subleaf_mask, 0xBu);
  EXPECT_EQ(r.arch_ext->gp_counter_bitmap, 0x3FFu);
  EXPECT_EQ(r.arch_ext->fixed_counter_bitmap, 0xFu);
  EXPECT_FALSE(r.arch_ext->auto_counter_reload.has_value());
  EXPECT_EQ(r.arch_ext->arch_events_bitmap, 0x1DFFu);
  EXPECT_EQ(r.arch_ext->unavailable_events, std::vector<std::string>{"topdown-bad-speculation"});
  EXPECT_EQ(r.arch_ext->available_events.size(), 12u);
}

TEST(CpuidDecode, LunarLakeLeaf23ECore) {
  auto r = decode_file("intel-lunarlake-core-ultra-9-288v-hybrid-baremetal.txt", 4);
  ASSERT_TRUE(r.arch_ext.has_value());
  EXPECT_EQ(r.arch_ext->subleaf_mask, 0xFu);
  EXPECT_EQ(r.arch_ext->gp_counter_bitmap, 0xFFu);
  EXPECT_EQ(r.arch_ext->fixed_counter_bitmap, 0x77u);
  ASSERT_TRUE(r.arch_ext->auto_counter_reload.has_value());
  EXPECT_EQ(r.arch_ext->auto_counter_reload->eax, 0xFCu);
  EXPECT_EQ(r.arch_ext->arch_events_bitmap, 0x1F7Fu);
  EXPECT_EQ(r.arch_ext->unavailable_events, std::vector<std::string>{"topdown-slots"});
}

TEST(CpuidDecode, Leaf23OnlyWhereMaxLeafReachesIt) {
  EXPECT_FALSE(decode_file("intel-sapphirerapids-xeon-w7-2475x-baremetal.txt", {}).arch_ext.has_value());
  EXPECT_FALSE(decode_file("firecracker-kvm-spr-nopmu.txt", {}).arch_ext.has_value());
}

TEST(CpuidDecode, HypervisorInterfaceIds) {
  auto vmware = decode_file("vmware-skylake-i7-6600u-nopmu.txt", {});
  ASSERT_NE(vmware.hypervisor.primary_signature(), nullptr);
  EXPECT_EQ(vmware.hypervisor.primary_signature()->signature, "VMwareVMware");
  EXPECT_EQ(vmware.hypervisor.primary_signature()->interface_id, "Hv#1");

  auto fc = decode_file("firecracker-kvm-spr-nopmu.txt", {});
  ASSERT_EQ(fc.hypervisor.signatures.size(), 1u);  // 0x40000100 is all zero
  EXPECT_EQ(fc.hypervisor.signatures[0].signature, "KVMKVMKVM");
  EXPECT_EQ(fc.hypervisor.signatures[0].interface_eax, 0x01007EFBu);
  EXPECT_EQ(fc.hypervisor.signatures[0].interface_id, "");

  auto vbox = decode_file("virtualbox-kvm-paravirt-haswell-i7-4980hq.txt", {});
  EXPECT_EQ(vbox.hypervisor.primary_signature()->interface_eax, 0x01000089u);

  auto xen = decode_file("xen-aws-c3large-ivybridge.txt", {});
  EXPECT_EQ(xen.hypervisor.primary_signature()->interface_eax, 0x0004000Bu);

  EXPECT_EQ(decode_file("hyperv-guest-haswell-xeon-e5-2680v3.txt", {}).hypervisor.primary_signature()->interface_id,
            "Hv#1");
}

TEST(CpuidDecode, BrandString) {
  EXPECT_EQ(decode_file("intel-ivybridge-i7-3770k-baremetal.txt", {}).cpu.brand, "Intel(R) Core(TM) i7-3770K CPU @ 3.50GHz");
  EXPECT_EQ(decode_file("amd-zen2-ryzen5-3600x-baremetal.txt", {}).cpu.brand, "AMD Ryzen 5 3600X 6-Core Processor");
}

TEST(CpuidDecode, AperfMperfFromLeaf6) {
  EXPECT_TRUE(decode_file("intel-ivybridge-i7-3770k-baremetal.txt", {}).cpu.aperf_mperf);
  EXPECT_FALSE(decode_file("firecracker-kvm-spr-nopmu.txt", {}).cpu.aperf_mperf);
}

// A fake source for the hypervisor scan's corner cases.
class MapCpuid : public CpuidSource {
 public:
  std::map<std::pair<uint32_t, uint32_t>, CpuidRegs> leaves;
  std::optional<CpuidRegs> query(uint32_t leaf, uint32_t subleaf) const override {
    auto it = leaves.find({leaf, subleaf});
    return it == leaves.end() ? std::nullopt : std::optional(it->second);
  }
  std::string describe() const override { return "map"; }
};

uint32_t text4(const char* s) {
  return static_cast<uint32_t>(static_cast<unsigned char>(s[0])) | static_cast<uint32_t>(static_cast<unsigned char>(s[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[2])) << 16 | static_cast<uint32_t>(static_cast<unsigned char>(s[3])) << 24;
}

MapCpuid guest_with_hypervisor_bit() {
  MapCpuid m;
  m.leaves[{0, 0}] = {1, text4("Genu"), text4("ntel"), text4("ineI")};
  m.leaves[{1, 0}] = {0x000306f2, 0, 1u << 31, 0};
  return m;
}

TEST(CpuidDecode, HyperVEmulationAtBaseDefersToTheRealHypervisorAbove) {
  MapCpuid m = guest_with_hypervisor_bit();
  m.leaves[{0x40000000, 0}] = {0x40000006, text4("Micr"), text4("osof"), text4("t Hv")};
  m.leaves[{0x40000001, 0}] = {text4("Hv#1"), 0, 0, 0};
  m.leaves[{0x40000100, 0}] = {0x40000101, text4("KVMK"), text4("VMKV"), text4("M\0\0\0")};
  auto r = decode_cpuid(m);
  ASSERT_EQ(r.hypervisor.signatures.size(), 2u);
  EXPECT_EQ(r.hypervisor.signatures[0].vendor, "Hyper-V");
  EXPECT_EQ(r.hypervisor.primary_signature()->vendor, "KVM");
  EXPECT_EQ(r.hypervisor.primary_signature()->base, 0x40000100u);
}

TEST(CpuidDecode, UnknownSignatureIsKeptOnlyIfPlausible) {
  MapCpuid m = guest_with_hypervisor_bit();
  m.leaves[{0x40000000, 0}] = {0x40000002, text4("NewH"), text4("yper"), text4("visr")};
  m.leaves[{0x40000200, 0}] = {0x00000d00, 0x12345678, 0x9abcdef0, 0x0};  // garbage, not a signature
  auto r = decode_cpuid(m);
  ASSERT_EQ(r.hypervisor.signatures.size(), 1u);
  EXPECT_EQ(r.hypervisor.signatures[0].signature, "NewHypervisr");
  EXPECT_EQ(r.hypervisor.signatures[0].vendor, "");
}

TEST(CpuidDecode, NoScanWithoutTheHypervisorBit) {
  MapCpuid m = guest_with_hypervisor_bit();
  m.leaves[{1, 0}].ecx = 0;
  m.leaves[{0x40000000, 0}] = {0x40000001, text4("KVMK"), text4("VMKV"), text4("M\0\0\0")};
  auto r = decode_cpuid(m);
  EXPECT_TRUE(r.hypervisor.signatures.empty());
  EXPECT_EQ(r.hypervisor.primary_signature(), nullptr);
}

TEST(CpuidDecode, LeavesAboveTheMaximumAreIgnored) {
  MapCpuid m = guest_with_hypervisor_bit();  // max basic leaf 1
  m.leaves[{0xA, 0}] = {0x07300403, 0, 0, 0x603};
  auto r = decode_cpuid(m);
  EXPECT_FALSE(r.arch.leaf_present);
  EXPECT_EQ(r.arch.version, 0u);
}

TEST(CpuidDecode, KnownSignatures) {
  EXPECT_EQ(hypervisor_vendor_for_signature("TCGTCGTCGTCG"), "QEMU TCG");
  EXPECT_EQ(hypervisor_vendor_for_signature("bhyve bhyve "), "bhyve");
  EXPECT_EQ(hypervisor_vendor_for_signature("VBoxVBoxVBox"), "VirtualBox");
  EXPECT_EQ(hypervisor_vendor_for_signature(" lrpepyh  vr"), "Parallels");
  EXPECT_EQ(hypervisor_vendor_for_signature("ACRNACRNACRN"), "ACRN");
  EXPECT_EQ(hypervisor_vendor_for_signature("QNXQVMBSQG"), "QNX");
  EXPECT_EQ(hypervisor_vendor_for_signature("nothing"), "");
}

TEST(CpuidDecode, ArchitecturalEventTableIsIndexedByBit) {
  auto events = architectural_events();
  ASSERT_EQ(events.size(), 13u);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].bit, static_cast<int>(i));
  EXPECT_EQ(events[1].event, 0xc0);
  EXPECT_EQ(events[4].umask, 0x41);
}

// The live instruction against the kernel's own decoding in /proc/cpuinfo.
TEST(LiveCpuid, AgreesWithProcCpuinfo) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::map<std::string, std::string> fields;
  std::string line;
  while (std::getline(cpuinfo, line) && !line.empty()) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    fields[key] = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  if (!fields.count("vendor_id")) GTEST_SKIP() << "/proc/cpuinfo has no vendor_id (not x86)";
  LiveCpuid live;
  CpuidReport r = decode_cpuid(live);
  EXPECT_EQ(r.cpu.vendor, fields["vendor_id"]);
  EXPECT_EQ(std::to_string(r.cpu.family), fields["cpu family"]);
  EXPECT_EQ(std::to_string(r.cpu.model), fields["model"]);
  EXPECT_EQ(std::to_string(r.cpu.stepping), fields["stepping"]);
  EXPECT_EQ(r.cpu.hypervisor_bit, fields["flags"].find(" hypervisor") != std::string::npos);
  EXPECT_EQ(r.cpu.pdcm, (" " + fields["flags"] + " ").find(" pdcm ") != std::string::npos);
  // The kernel reads the brand once, at boot; a VM live-migrated since then (these test
  // machines have been, mid-session) answers CPUID with its new host's string. The cpuid(1)
  // tool reads it live, as vperf does: with it, that is the ground truth.
  std::string live_brand = fields["model name"];
  if (FILE* tool = ::popen("cpuid -1 2>/dev/null", "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, tool)) {
      std::string l(buf);
      size_t at = l.find("brand = \"");
      if (at == std::string::npos) continue;
      std::string b = l.substr(at + 9, l.rfind('"') - at - 9);
      live_brand = b.substr(0, b.find_last_not_of(' ') + 1);
      break;
    }
    ::pclose(tool);
  }
  EXPECT_EQ(r.cpu.brand, live_brand);
}

}  // namespace
}  // namespace vperf::host
