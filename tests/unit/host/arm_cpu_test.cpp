#include "host/arm_cpu.h"

#include <gtest/gtest.h>

#include "fake_host.h"

namespace vperf::host {
namespace {

// /proc/cpuinfo of an EC2 c6g (Graviton2, Neoverse N1 r3p1) as arm64's cpuinfo.c prints it.
constexpr std::string_view kGraviton2Cpuinfo =
    "processor\t: 0\n"
    "BogoMIPS\t: 243.75\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x3\n"
    "CPU part\t: 0xd0c\n"
    "CPU revision\t: 1\n"
    "\n"
    "processor\t: 1\n"
    "BogoMIPS\t: 243.75\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x3\n"
    "CPU part\t: 0xd0c\n"
    "CPU revision\t: 1\n"
    "\n";

HostPaths paths_in(const test::TempTree& tree) {
  HostPaths paths;
  paths.proc = tree.root() / "proc";
  paths.sys = tree.root() / "sys";
  return paths;
}

void write_midr(const test::TempTree& tree, unsigned cpu, const std::string& text) {
  tree.write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/regs/identification/midr_el1", text);
}

TEST(ArmCpu, MidrFieldsAndNames) {
  // The MIDRs of perf's arm64 mapfile.csv and the kernel's cputype.h, with a stepping.
  Midr n1{0x413fd0c1};
  EXPECT_EQ(n1.implementer(), 0x41u);
  EXPECT_EQ(n1.variant(), 3u);
  EXPECT_EQ(n1.architecture(), 0xfu);
  EXPECT_EQ(n1.part(), 0xd0cu);
  EXPECT_EQ(n1.revision(), 1u);
  EXPECT_EQ(describe_midr(n1), "Neoverse N1 r3p1");
  EXPECT_EQ(describe_midr(Midr{0x411fd401}), "Neoverse V1 r1p1");
  EXPECT_EQ(describe_midr(Midr{0x410fd493}), "Neoverse N2 r0p3");
  EXPECT_EQ(describe_midr(Midr{0x410fd4f1}), "Neoverse V2 r0p1");
  EXPECT_EQ(describe_midr(Midr{0x461f0010}), "A64FX r1p0");
  EXPECT_EQ(describe_midr(Midr{0xc00fac30}), "AmpereOne r0p0");
  EXPECT_EQ(describe_midr(Midr{0x410fd034}), "Cortex-A53 r0p4");
  EXPECT_TRUE(find_arm_core(Midr{0x413fd0c1})->where.find("Graviton2") != std::string_view::npos);
  // QEMU's -cpu max under TCG: implementer 0 ("reserved for software use"), part 'Q'.
  EXPECT_TRUE(is_qemu_max_cpu(Midr{0x000f0510}));
  EXPECT_FALSE(is_qemu_max_cpu(n1));
  // A core the table does not know is said as such, with what is known of it.
  EXPECT_EQ(describe_midr(Midr{0x410fd991}), "unknown core (implementer 0x41 Arm, part 0xd99) r0p1");
  EXPECT_EQ(describe_midr(Midr{0x7a0f0010}), "unknown core (implementer 0x7a, part 0x1) r0p0");
}

TEST(ArmCpu, CpuinfoGivesTheSameMidrAsSysfs) {
  auto midrs = parse_cpuinfo_midrs(kGraviton2Cpuinfo);
  ASSERT_EQ(midrs.size(), 2u);
  EXPECT_EQ(midrs[0].first, 0u);
  EXPECT_EQ(midrs[1].first, 1u);
  EXPECT_EQ(midrs[0].second.value, 0x413fd0c1u);
}

TEST(ArmCpu, CpuinfoWithoutOrWithBrokenFieldsGivesNothing) {
  EXPECT_TRUE(parse_cpuinfo_midrs("").empty());
  // x86's cpuinfo.
  EXPECT_TRUE(parse_cpuinfo_midrs("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\n").empty());
  // A part number wider than its 12 bits, a missing revision: that CPU is left out.
  EXPECT_TRUE(parse_cpuinfo_midrs("processor : 0\nCPU implementer : 0x41\nCPU variant : 0x3\nCPU part : 0x1d0c\n"
                                  "CPU revision : 1\n")
                  .empty());
  EXPECT_TRUE(parse_cpuinfo_midrs("processor : 0\nCPU implementer : 0x41\nCPU variant : 0x3\nCPU part : 0xd0c\n").empty());
}

TEST(ArmCpu, Graviton2InstanceIsAGuestOfNitro) {
  test::TempTree tree("arm-graviton2");
  for (unsigned cpu = 0; cpu < 2; ++cpu) write_midr(tree, cpu, "0x00000000413fd0c1\n");
  tree.write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
  tree.write("sys/class/dmi/id/product_name", "c6g.large\n");
  ArmCpuReport r = read_arm_cpu(paths_in(tree));
  ASSERT_EQ(r.cores.size(), 1u);
  EXPECT_EQ(r.cores[0].cpus, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(r.summary(), "Neoverse N1 r3p1 x 2");
  EXPECT_TRUE(r.midr_source.find("midr_el1") != std::string::npos);
  EXPECT_EQ(r.platform.kind, ArmPlatformKind::VirtualMachine);
  EXPECT_EQ(r.platform.hypervisor, "AWS Nitro (KVM)");
  EXPECT_EQ(r.platform.machine, "AWS EC2 c6g.large");
  EXPECT_TRUE(r.is_guest());
}

TEST(ArmCpu, MetalInstanceIsBareMetal) {
  test::TempTree tree("arm-metal");
  write_midr(tree, 0, "0x00000000411fd401\n");
  tree.write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
  tree.write("sys/class/dmi/id/product_name", "c7g.metal\n");
  ArmCpuReport r = read_arm_cpu(paths_in(tree));
  EXPECT_EQ(r.summary(), "Neoverse V1 r1p1 x 1");
  EXPECT_EQ(r.platform.kind, ArmPlatformKind::BareMetal);
  EXPECT_TRUE(r.platform.hypervisor.empty());
}

TEST(ArmCpu, QemuVirtMachineUnderTcg) {
  // What the arm64 test guest shows: no DMI (no firmware), the virt machine's device tree.
  test::TempTree tree("arm-qemu");
  write_midr(tree, 0, "0x00000000000f0510\n");
  tree.write("sys/firmware/devicetree/base/compatible", std::string("linux,dummy-virt\0", 17));
  ArmCpuReport r = read_arm_cpu(paths_in(tree));
  EXPECT_EQ(r.summary(), "QEMU 'max' r0p0 x 1");
  EXPECT_EQ(r.platform.kind, ArmPlatformKind::VirtualMachine);
  EXPECT_EQ(r.platform.hypervisor, "QEMU TCG");
  EXPECT_EQ(r.platform.machine, "QEMU virt machine");
  EXPECT_EQ(r.platform.dt_compatible, "linux,dummy-virt");
}

TEST(ArmCpu, PlatformTable) {
  auto classify = [](std::string vendor, std::string product, std::string dt = "", std::string dt_hv = "",
                     std::string sys_hv = "") {
    ArmPlatform p;
    p.dmi_vendor = std::move(vendor);
    p.dmi_product = std::move(product);
    p.dt_compatible = std::move(dt);
    p.dt_hypervisor = std::move(dt_hv);
    p.sys_hypervisor_type = std::move(sys_hv);
    classify_arm_platform(p, Midr{0x413fd0c1});
    return p;
  };
  EXPECT_EQ(classify("QEMU", "KVM Virtual Machine").hypervisor, "KVM");
  EXPECT_EQ(classify("QEMU", "QEMU Virtual Machine").hypervisor, "QEMU TCG");
  EXPECT_EQ(classify("Microsoft Corporation", "Virtual Machine").hypervisor, "Hyper-V");
  EXPECT_EQ(classify("Google", "Google Compute Engine").hypervisor, "KVM");
  EXPECT_EQ(classify("", "", "", "xen,xen-4.17\0xen,xen").hypervisor, "Xen");
  EXPECT_EQ(classify("", "", "", "", "xen").hypervisor, "Xen");
  // The virt machine with a host's MIDR is KVM passing the host's CPU through (or a named TCG CPU).
  EXPECT_EQ(classify("", "", "linux,dummy-virt").hypervisor, "KVM (or QEMU TCG with a named -cpu)");
  ArmPlatform board = classify("", "", "raspberrypi,4-model-b");
  EXPECT_EQ(board.kind, ArmPlatformKind::Unknown);
  EXPECT_TRUE(board.hypervisor.empty());
  EXPECT_EQ(classify("Ampere(R)", "Mt.Collins").kind, ArmPlatformKind::Unknown);
}

TEST(ArmCpu, BigLittleGroupsCpusByCore) {
  test::TempTree tree("arm-biglittle");
  for (unsigned cpu = 0; cpu < 4; ++cpu) write_midr(tree, cpu, "0x00000000412fd050\n");
  for (unsigned cpu = 4; cpu < 6; ++cpu) write_midr(tree, cpu, "0x00000000414fd0b0\n");
  tree.mkdir("sys/devices/system/cpu/cpufreq");  // not a CPU
  ArmCpuReport r = read_arm_cpu(paths_in(tree));
  ASSERT_EQ(r.cores.size(), 2u);
  EXPECT_EQ(r.summary(), "Cortex-A55 r2p0 x 4 + Cortex-A76 r4p0 x 2");
  EXPECT_EQ(r.cores[1].cpus, (std::vector<unsigned>{4, 5}));
}

TEST(ArmCpu, FallsBackToCpuinfoAndSaysWhenThereIsNothing) {
  test::TempTree tree("arm-cpuinfo");
  tree.write("proc/cpuinfo", std::string(kGraviton2Cpuinfo));
  write_midr(tree, 0, "not a number\n");  // a junk sysfs value is not trusted
  ArmCpuReport r = read_arm_cpu(paths_in(tree));
  EXPECT_EQ(r.summary(), "Neoverse N1 r3p1 x 2");
  EXPECT_TRUE(r.midr_source.ends_with("cpuinfo"));

  test::TempTree empty("arm-nothing");
  ArmCpuReport none = read_arm_cpu(paths_in(empty));
  EXPECT_TRUE(none.cores.empty());
  EXPECT_FALSE(none.midr_error.empty());
  EXPECT_EQ(none.summary(), "no MIDR readable");
  EXPECT_EQ(none.platform.kind, ArmPlatformKind::Unknown);
}

}  // namespace
}  // namespace vperf::host
