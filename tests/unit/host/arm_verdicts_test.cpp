#include "host/arm_verdicts.h"

#include <gtest/gtest.h>

#include <sstream>

#include "host/check_report.h"

namespace vperf::host {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

ArmCpuReport arm_platform(const std::string& hypervisor, ArmPlatformKind kind, uint32_t midr = 0x413fd0c1) {
  ArmCpuReport arm;
  arm.midr_source = "/sys/devices/system/cpu/cpu*/regs/identification/midr_el1";
  arm.cores.push_back({Midr{midr}, {0, 1}});
  arm.platform.kind = kind;
  arm.platform.hypervisor = hypervisor;
  return arm;
}

PerfEventProbe hardware(const std::string& name, int errno_value, uint64_t count = 0) {
  PerfEventProbe p;
  p.name = name;
  p.type = PERF_TYPE_HARDWARE;
  p.outcome.opened = errno_value == 0;
  p.outcome.errno_value = errno_value;
  if (errno_value == 0) p.outcome.count = count;
  return p;
}

SamplingProbe sampling(const std::string& event, uint64_t count, uint64_t samples) {
  SamplingProbe p;
  p.event = event;
  p.period = 100003;
  p.outcome.opened = true;
  p.outcome.count = count;
  p.samples = samples;
  return p;
}

// The arm64 test guest as the probes see it (QEMU TCG, -icount shift=0): cycles and instructions
// count, seven counters, cycles samples follow the period, instructions samples come once a tick.
LiveProbes qemu_icount_guest() {
  LiveProbes live;
  live.privileged = true;
  live.perf.software_control.opened = true;
  live.perf.software_control.count = 1000;
  live.perf.hardware = {hardware("cycles", 0, 1100000), hardware("instructions", 0, 1100000)};
  live.perf.group_capacity = 7;
  live.perf.group_refusal_errno = EINVAL;
  live.perf.sampling = {sampling("cycles", 6401001, 65), sampling("instructions", 6400192, 2)};
  PmuInfo pmu;
  pmu.name = "armv8_pmuv3";
  pmu.kind = classify_pmu(pmu.name);
  pmu.events = {"cpu_cycles", "inst_retired", "stall", "stall_backend", "stall_frontend"};
  live.pmus.push_back(pmu);
  live.kvm.path = "/dev/kvm";
  live.kvm.errno_value = ENOENT;
  return live;
}

LiveProbes no_pmu_guest() {
  LiveProbes live;
  live.perf.software_control.opened = true;
  live.perf.hardware = {hardware("cycles", ENOENT), hardware("instructions", ENOENT)};
  live.perf.sampling.push_back(SamplingProbe{});
  live.perf.sampling.back().event = "cycles";
  live.perf.sampling.back().outcome.errno_value = ENOENT;
  live.kvm.path = "/dev/kvm";
  live.kvm.errno_value = ENOENT;
  return live;
}

const Verdict& find(const std::vector<Verdict>& verdicts, const std::string& name) {
  for (const auto& v : verdicts)
    if (v.name == name) return v;
  throw std::runtime_error("no verdict " + name);
}

TEST(ArmVerdicts, QemuGuestCountsButItsInstructionSamplesDoNotFollowThePeriod) {
  ArmCpuReport arm = arm_platform("QEMU TCG", ArmPlatformKind::VirtualMachine, 0x000f0510);
  auto verdicts = decide_arm_verdicts(arm, qemu_icount_guest());
  const Verdict& ipc = find(verdicts, "ipc");
  EXPECT_TRUE(ipc.available) << ipc.reason;
  const Verdict& s = find(verdicts, "sampling");
  EXPECT_FALSE(s.available);
  EXPECT_TRUE(contains(s.reason, "instructions: 2 samples for 6400192 counted at period 100003 (64.0 expected)"))
      << s.reason;
  EXPECT_TRUE(contains(s.reason, "The samples of instructions do not follow the period")) << s.reason;
  EXPECT_EQ(s.fix, "sample on cycles instead (-e cycles)");
  const Verdict& llc = find(verdicts, "llc");
  EXPECT_FALSE(llc.available);
  EXPECT_TRUE(contains(llc.reason, "armv8_pmuv3 lists no cache events")) << llc.reason;
  EXPECT_TRUE(contains(llc.fix, "QEMU TCG's emulated PMU implements no cache events")) << llc.fix;
  EXPECT_FALSE(find(verdicts, "precise").available);
  EXPECT_TRUE(contains(find(verdicts, "precise").fix, "SPE needs bare metal"));
  EXPECT_EQ(find(verdicts, "turbo").basis, VerdictBasis::Architecture);
  std::vector<std::string> names;
  for (const auto& v : verdicts) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ipc", "turbo", "llc", "precise", "sampling", "kernel_symbols",
                                             "tracepoints", "uprobes", "kprobes", "guest_profiling"}));
}

TEST(ArmVerdicts, QemuWithoutIcountCountsCyclesOnlyAndSaysHowToGetInstructions) {
  ArmCpuReport arm = arm_platform("QEMU TCG", ArmPlatformKind::VirtualMachine, 0x000f0510);
  LiveProbes live = qemu_icount_guest();
  live.perf.hardware[1] = hardware("instructions", ENOENT);
  const Verdict ipc = find(decide_arm_verdicts(arm, live), "ipc");
  EXPECT_FALSE(ipc.available);
  EXPECT_TRUE(contains(ipc.fix, "-icount shift=N")) << ipc.fix;
}

TEST(ArmVerdicts, EveryHardwareVerdictIsNoWithThePlatformsFix) {
  struct Case {
    std::string hypervisor;
    ArmPlatformKind kind;
    std::string fix_words;
  };
  for (const Case& c : {Case{"AWS Nitro (KVM)", ArmPlatformKind::VirtualMachine, "whole-socket sizes and .metal"},
                        Case{"KVM", ArmPlatformKind::VirtualMachine, "-cpu host,pmu=on"},
                        Case{"QEMU TCG", ArmPlatformKind::VirtualMachine, "drop pmu=off"},
                        Case{"Xen", ArmPlatformKind::VirtualMachine, "vpmu = 1"},
                        Case{"", ArmPlatformKind::BareMetal, "CONFIG_ARM_PMU"},
                        Case{"", ArmPlatformKind::VirtualMachine, "run on bare metal"}}) {
    ArmCpuReport arm = arm_platform(c.hypervisor, c.kind);
    auto verdicts = decide_arm_verdicts(arm, no_pmu_guest());
    for (const char* name : {"ipc", "llc", "sampling"}) {
      const Verdict& v = find(verdicts, name);
      EXPECT_FALSE(v.available) << c.hypervisor << " " << name;
      EXPECT_TRUE(contains(v.fix, c.fix_words)) << c.hypervisor << " " << name << ": " << v.fix;
    }
    EXPECT_TRUE(contains(find(verdicts, "ipc").reason, "Software events work")) << find(verdicts, "ipc").reason;
  }
}

TEST(ArmVerdicts, SpeOnBareMetalIsPreciseAndLastLevelCacheEventsCount) {
  ArmCpuReport arm = arm_platform("", ArmPlatformKind::BareMetal);
  LiveProbes live = qemu_icount_guest();
  live.perf.sampling = {sampling("cycles", 6401001, 64), sampling("instructions", 6400192, 63)};
  live.pmus[0].events.push_back("ll_cache_rd");
  live.pmus[0].events.push_back("ll_cache_miss_rd");
  PmuInfo spe;
  spe.name = "arm_spe_0";
  spe.kind = classify_pmu(spe.name);
  live.pmus.push_back(spe);
  auto verdicts = decide_arm_verdicts(arm, live);
  EXPECT_TRUE(find(verdicts, "precise").available);
  EXPECT_TRUE(contains(find(verdicts, "precise").reason, "arm_spe_0//"));
  EXPECT_TRUE(find(verdicts, "llc").available) << find(verdicts, "llc").reason;
  EXPECT_TRUE(find(verdicts, "sampling").available) << find(verdicts, "sampling").reason;
  EXPECT_EQ(live.core_pmu()->name, "armv8_pmuv3") << "SPE is not the CPU's counting PMU";
}

TEST(ArmVerdicts, ReportSaysArm64ThingsAndJsonHasNoCpuid) {
  CheckInputs in;
  in.arm = arm_platform("QEMU TCG", ArmPlatformKind::VirtualMachine, 0x000f0510);
  in.arm->platform.machine = "QEMU virt machine";
  in.arm->platform.evidence = "device tree compatible = linux,dummy-virt";
  in.live = qemu_icount_guest();
  CheckResult r = evaluate_check(std::move(in));
  std::ostringstream out;
  render_check_text(r, out);
  const std::string text = out.str();
  EXPECT_TRUE(contains(text, "vperf check: arm64, MIDR from /sys/devices/system/cpu/cpu*/regs/identification/midr_el1"))
      << text;
  EXPECT_TRUE(contains(text, "Summary: virtual machine under QEMU TCG (QEMU virt machine), QEMU 'max' r0p0 x 2, a "
                             "group holds 7 counters, hardware perf events open."))
      << text;
  EXPECT_TRUE(contains(text, "  MIDR        0x000f0510  QEMU 'max' r0p0 on CPU 0-1\n")) << text;
  EXPECT_TRUE(contains(text, "one group holds: 7 cycles events (member 8: EINVAL")) << text;
  EXPECT_FALSE(contains(text, "\nArchitectural PMU\n"));
  EXPECT_FALSE(contains(text, "MSRs on CPU 0"));
  auto j = check_to_json(r).as_object();
  EXPECT_TRUE(j.at("cpu").is_null());
  EXPECT_EQ(j.at("source").at("cpuid").as_string(), "none");
  EXPECT_EQ(j.at("arm").at("cores").at(0).at("midr").as_string(), "0x000f0510");
  EXPECT_EQ(j.at("arm").at("platform").at("hypervisor").as_string(), "QEMU TCG");
  EXPECT_EQ(j.at("live").at("perf").at("group_capacity").to_number<int>(), 7);
  EXPECT_EQ(j.at("live").at("perf").at("sampling").at(1).at("follows_period").as_bool(), false);
  EXPECT_EQ(j.at("verdicts").at("sampling").at("available").as_bool(), false);
}

}  // namespace
}  // namespace vperf::host
