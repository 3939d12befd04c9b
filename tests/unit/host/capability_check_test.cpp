#include "host/capability_check.h"

#include <gtest/gtest.h>

#include "fake_host.h"
#include "host/check_report.h"
#include "host/cpuid_dump.h"
#include "host/verdicts.h"
#include "msr/msr_register.h"

namespace vperf::host {
namespace {

const std::filesystem::path kDumps = std::filesystem::path(VPERF_TESTDATA) / "cpuid";

CpuidReport cpuid_of(const std::string& file) {
  auto dump = load_cpuid_dump(kDumps / file);
  EXPECT_TRUE(dump.ok());
  DumpCpuidSource source(*dump, 0);
  return decode_cpuid(source);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A fake machine: a temp /proc + sysfs + tracefs tree and fakes for the device boundaries.
struct FakeMachine {
  test::TempTree tree{"check-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())};
  test::FakePerfEventOpener opener;
  test::FakeMsrReader msrs;
  test::FakeKvm kvm;
  bool privileged = true;

  // This project's development VM: no PMU, tracefs with events and uprobes, no kprobes, /dev/kvm.
  FakeMachine() {
    opener.errno_for = test::no_pmu_kernel;
    kvm.version = kKvmStableApiVersion;
    const std::string tracing = (tree.root() / "tracing").string();
    tree.write("proc/sys/kernel/perf_event_paranoid", "2\n");
    tree.write("proc/sys/kernel/kptr_restrict", "0\n");
    tree.write("proc/kallsyms", "ffffffff81000000 T _stext\n");
    tree.write("proc/mounts", "nodev " + tracing + " tracefs rw 0 0\n");
    tree.mkdir("tracing/events/sched");
    tree.write("tracing/uprobe_events", "");
    tree.write("tracing/available_tracers", "blk function nop\n");
    tree.write("pmus/software/type", "1\n");
    tree.write("pmus/uprobe/type", "8\n");
    tree.write("pmus/msr/type", "10\n");
    tree.write("pmus/msr/events/tsc", "event=0x00\n");
    tree.write("pmus/msr/format/event", "config:0-63\n");
    tree.write("pmus/power/type", "9\n");
    tree.write("pmus/power/events/energy-psys", "event=0x05\n");
    tree.write("pmus/power/format/event", "config:0-7\n");
  }
  LiveProbes probe() {
    HostPaths paths;
    paths.proc = tree.root() / "proc";
    paths.tracefs_default = tree.root() / "tracing";
    paths.pmu_root = tree.root() / "pmus";
    return run_live_probes(LiveProbeDeps{opener, msrs, kvm, paths, privileged});
  }
  CheckResult check(const std::string& dump, std::vector<std::string> libpfm = {}) {
    CheckInputs in;
    in.cpuid = cpuid_of(dump);
    in.live = probe();
    in.libpfm_present_pmus = std::move(libpfm);
    return evaluate_check(std::move(in));
  }
};

const Verdict& verdict(const CheckResult& r, const std::string& name) {
  const Verdict* v = r.find_verdict(name);
  if (!v) throw std::runtime_error("no verdict " + name);
  return *v;
}

TEST(CapabilityCheck, DevelopmentVmWithoutPmu) {
  FakeMachine m;
  CheckResult r = m.check("firecracker-kvm-spr-nopmu.txt", {"perf", "perf_raw", "rapl", "spr"});
  EXPECT_FALSE(verdict(r, "ipc").available);
  EXPECT_TRUE(contains(verdict(r, "ipc").reason, "ENOENT")) << verdict(r, "ipc").reason;
  EXPECT_TRUE(contains(verdict(r, "ipc").reason, "hypervisor KVM"));
  EXPECT_TRUE(contains(verdict(r, "ipc").reason, "Software events work"));
  EXPECT_TRUE(contains(verdict(r, "ipc").fix, "<pmu state='on'/>"));
  EXPECT_TRUE(contains(verdict(r, "ipc").fix, "-cpu host,pmu=on"));
  EXPECT_FALSE(verdict(r, "turbo").available);
  EXPECT_TRUE(contains(verdict(r, "turbo").reason, "no aperf/mperf"));
  EXPECT_FALSE(verdict(r, "llc").available);
  EXPECT_FALSE(verdict(r, "precise").available);
  EXPECT_TRUE(verdict(r, "kernel_symbols").available);
  EXPECT_TRUE(verdict(r, "tracepoints").available);
  EXPECT_TRUE(verdict(r, "uprobes").available);
  EXPECT_FALSE(verdict(r, "kprobes").available);
  EXPECT_TRUE(contains(verdict(r, "kprobes").fix, "CONFIG_KPROBE_EVENTS"));
  EXPECT_FALSE(verdict(r, "guest_profiling").available);
  EXPECT_TRUE(contains(verdict(r, "guest_profiling").reason, "KVM_GET_API_VERSION = 12"));
  for (const auto& v : r.verdicts) {
    EXPECT_EQ(v.basis, VerdictBasis::LiveProbe) << v.name;
    EXPECT_EQ(v.fix.empty(), v.available) << v.name << ": a missing capability gets a fix, a present one none";
  }
  // libpfm4 calls 'spr' present from family/model; the live probe says otherwise.
  ASSERT_EQ(r.disagreements.size(), 1u);
  EXPECT_EQ(r.disagreements[0].claim_source, "libpfm4");
  EXPECT_TRUE(contains(r.disagreements[0].claim, "'spr'"));
  EXPECT_TRUE(contains(r.disagreements[0].live_finding, "ENOENT"));
}

TEST(CapabilityCheck, BareMetalWithPmuMsrAndPebs) {
  FakeMachine m;
  m.opener.errno_for = [](const perf_event_attr&) { return 0; };
  m.msrs.values = {{msr::address::kMperf, 100}, {msr::address::kAperf, 150}, {msr::address::kPlatformInfo, 0x2200}};
  m.tree.write("tracing/kprobe_events", "");
  CheckResult r = m.check("intel-ivybridge-i7-3770k-baremetal.txt", {"ivb", "perf"});
  for (const char* name : {"ipc", "turbo", "llc", "precise", "kernel_symbols", "tracepoints", "uprobes", "kprobes",
                           "guest_profiling"})
    EXPECT_TRUE(verdict(r, name).available) << name << ": " << verdict(r, name).reason;
  EXPECT_TRUE(contains(verdict(r, "precise").reason, "max precise_ip 3"));
  EXPECT_TRUE(r.disagreements.empty());
}

TEST(CapabilityCheck, ParanoidBlocksCountingAndSaysWhichSysctl) {
  FakeMachine m;
  m.opener.errno_for = [](const perf_event_attr&) { return EACCES; };
  CheckResult r = m.check("intel-ivybridge-i7-3770k-baremetal.txt");
  EXPECT_FALSE(verdict(r, "ipc").available);
  EXPECT_TRUE(contains(verdict(r, "ipc").fix, "sysctl kernel.perf_event_paranoid="));
  EXPECT_FALSE(contains(verdict(r, "ipc").reason, "Software events work"));
  // CPUID advertises 4 GP counters that perf cannot open: reported.
  ASSERT_EQ(r.disagreements.size(), 1u);
  EXPECT_EQ(r.disagreements[0].claim_source, "CPUID leaf 0xA");
}

TEST(CapabilityCheck, PmuWithoutPebsIsNotPrecise) {
  FakeMachine m;
  m.opener.errno_for = test::pmu_without_pebs;
  m.tree.write("pmus/cpu/type", "4\n");
  m.tree.write("pmus/cpu/caps/max_precise", "3\n");
  CheckResult r = m.check("vmware-sandybridge-i5-2520m-vpmu.txt");
  EXPECT_TRUE(verdict(r, "ipc").available);
  EXPECT_FALSE(verdict(r, "precise").available);
  EXPECT_TRUE(contains(verdict(r, "precise").fix, "PEBS"));
  // sysfs caps claims max_precise 3, the probe got 0.
  ASSERT_EQ(r.disagreements.size(), 1u);
  EXPECT_EQ(r.disagreements[0].claim_source, "sysfs caps");
}

TEST(CapabilityCheck, FixesNameTheHypervisorsKnob) {
  FakeMachine m;
  EXPECT_TRUE(contains(verdict(m.check("xen-aws-t2micro-haswell.txt"), "ipc").fix, "vpmu=arch"));
  EXPECT_TRUE(contains(verdict(m.check("vmware-skylake-i7-6600u-nopmu.txt"), "ipc").fix,
                       "Virtualize CPU performance counters"));
  EXPECT_TRUE(contains(verdict(m.check("hyperv-guest-haswell-xeon-e5-2680v3.txt"), "ipc").fix, "Set-VMProcessor"));
  EXPECT_TRUE(contains(verdict(m.check("intel-ivybridge-i7-3770k-baremetal.txt"), "ipc").fix, "dmesg"));
}

TEST(CapabilityCheck, UnmountedTracefsSaysHowToMountIt) {
  FakeMachine m;
  m.tree.write("proc/mounts", "sysfs /sys sysfs rw 0 0\n");
  m.tree.write("proc/filesystems", "nodev\ttracefs\n");
  CheckResult r = m.check("firecracker-kvm-spr-nopmu.txt");
  for (const char* name : {"tracepoints", "uprobes", "kprobes"}) {
    EXPECT_FALSE(verdict(r, name).available) << name;
    EXPECT_EQ(verdict(r, name).fix, "mount -t tracefs nodev /sys/kernel/tracing") << name;
  }
}

TEST(CapabilityCheck, HiddenKernelPointers) {
  FakeMachine m;
  m.tree.write("proc/sys/kernel/kptr_restrict", "2\n");
  m.tree.write("proc/kallsyms", "0000000000000000 T _stext\n");
  CheckResult r = m.check("firecracker-kvm-spr-nopmu.txt");
  EXPECT_FALSE(verdict(r, "kernel_symbols").available);
  EXPECT_TRUE(contains(verdict(r, "kernel_symbols").fix, "sysctl kernel.kptr_restrict=0"));
}

TEST(CapabilityCheck, MsrDriverMissingOnACpuWithAperf) {
  FakeMachine m;
  m.opener.errno_for = [](const perf_event_attr&) { return 0; };
  m.msrs.failure_errno = ENOENT;
  m.tree.write("proc/modules", "");  // a kernel that loads modules
  CheckResult r = m.check("intel-ivybridge-i7-3770k-baremetal.txt");
  EXPECT_FALSE(verdict(r, "turbo").available);
  EXPECT_TRUE(contains(verdict(r, "turbo").fix, "modprobe msr"));
  std::filesystem::remove(m.tree.root() / "proc/modules");  // one that cannot (Firecracker's)
  EXPECT_TRUE(contains(verdict(m.check("intel-ivybridge-i7-3770k-baremetal.txt"), "turbo").fix, "CONFIG_X86_MSR"));
  m.tree.write("pmus/msr/events/aperf", "event=0x02\n");
  m.tree.write("pmus/msr/events/mperf", "event=0x01\n");
  EXPECT_TRUE(verdict(m.check("intel-ivybridge-i7-3770k-baremetal.txt"), "turbo").available)
      << "the msr PMU's aperf/mperf events are enough";
}

TEST(CapabilityCheck, NoKvmDevice) {
  FakeMachine m;
  m.opener.errno_for = [](const perf_event_attr&) { return 0; };
  m.kvm.version = 0;
  m.kvm.err = ENOENT;
  CheckResult r = m.check("intel-ivybridge-i7-3770k-baremetal.txt");
  EXPECT_FALSE(verdict(r, "guest_profiling").available);
  EXPECT_TRUE(contains(verdict(r, "guest_profiling").fix, "modprobe kvm_intel"));
}

TEST(CapabilityCheck, LibpfmClaimsByRole) {
  FakeMachine m;
  CheckResult r = m.check("firecracker-kvm-spr-nopmu.txt", {"perf", "perf_raw", "rapl", "spr_unc_imc"});
  ASSERT_EQ(r.disagreements.size(), 1u) << "perf/perf_raw are always there; rapl agrees with the power PMU";
  EXPECT_TRUE(contains(r.disagreements[0].claim, "spr_unc_imc"));
  EXPECT_TRUE(contains(r.disagreements[0].live_finding, "no uncore PMU"));
}

TEST(CapabilityCheck, DumpVerdictsArePredictionsOrUnknown) {
  CheckInputs in;
  in.cpuid = cpuid_of("vmware-skylake-i7-6600u-nopmu.txt");
  in.cpuid_from_dump = true;
  in.libpfm_present_pmus = {"spr"};
  CheckResult r = evaluate_check(std::move(in));
  EXPECT_TRUE(r.disagreements.empty()) << "libpfm4 describes this machine, not the dump";
  EXPECT_FALSE(verdict(r, "ipc").available) << "all architectural events are marked unavailable";
  EXPECT_TRUE(contains(verdict(r, "ipc").reason, "core-cycles"));
  EXPECT_EQ(verdict(r, "ipc").basis, VerdictBasis::Cpuid);
  EXPECT_EQ(verdict(r, "tracepoints").basis, VerdictBasis::Unknown);
  EXPECT_FALSE(verdict(r, "tracepoints").available);

  CheckInputs milan;
  milan.cpuid = cpuid_of("firecracker-kvm-milan-t2a-nopmu.txt");
  milan.cpuid_from_dump = true;
  CheckResult m = evaluate_check(std::move(milan));
  // The README: this guest has no PMU although its CPUID advertises PerfCtrExtCore.
  EXPECT_FALSE(verdict(m, "ipc").available);
  EXPECT_EQ(verdict(m, "ipc").basis, VerdictBasis::Unknown);
  EXPECT_TRUE(contains(verdict(m, "ipc").reason, "confirm with a live vperf check"));

  CheckInputs spr;
  spr.cpuid = cpuid_of("intel-sapphirerapids-xeon-w7-2475x-baremetal.txt");
  spr.cpuid_from_dump = true;
  CheckResult s = evaluate_check(std::move(spr));
  EXPECT_TRUE(verdict(s, "ipc").available);
  EXPECT_TRUE(verdict(s, "turbo").available);
  EXPECT_TRUE(verdict(s, "precise").available);
}

TEST(CapabilityCheck, RuleTableCoversTheTenVerdicts) {
  std::vector<std::string> names;
  for (const auto& rule : verdict_rules()) names.emplace_back(rule.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ipc", "turbo", "llc", "precise", "sampling", "kernel_symbols", "tracepoints",
                                             "uprobes", "kprobes", "guest_profiling"}));
}

TEST(CheckReport, JsonHasTheKeysScriptsRelyOn) {
  FakeMachine m;
  auto j = check_to_json(m.check("firecracker-kvm-spr-nopmu.txt", {"spr"})).as_object();
  EXPECT_EQ(j.at("cpu").at("vendor").as_string(), "GenuineIntel");
  EXPECT_EQ(j.at("cpu").at("family").to_number<int>(), 6);
  EXPECT_EQ(j.at("cpu").at("model").to_number<int>(), 0x8f);
  EXPECT_EQ(j.at("hypervisor").at("vendor").as_string(), "KVM");
  const auto& arch = j.at("arch_perfmon").as_object();
  for (const char* key : {"version", "gp_counters", "gp_width", "fixed_counters"})
    EXPECT_EQ(arch.at(key).to_number<int>(), 0) << key;
  EXPECT_TRUE(arch.at("unavailable_events").is_array());
  for (const auto& rule : verdict_rules()) {
    const auto& v = j.at("verdicts").at(rule.name).as_object();
    EXPECT_TRUE(v.at("available").is_bool());
    EXPECT_TRUE(v.at("reason").is_string());
    EXPECT_TRUE(v.at("fix").is_string());
  }
  EXPECT_EQ(j.at("disagreements").as_array().size(), 1u);
  EXPECT_FALSE(j.at("live").is_null());

  auto bare = check_to_json(m.check("intel-ivybridge-i7-3770k-baremetal.txt")).as_object();
  EXPECT_TRUE(bare.at("hypervisor").at("vendor").is_null());
}

TEST(CheckReport, TextSaysItPlainly) {
  FakeMachine m;
  std::ostringstream out;
  render_check_text(m.check("firecracker-kvm-spr-nopmu.txt", {"spr"}), out);
  const std::string text = out.str();
  EXPECT_TRUE(contains(text, "Summary: hypervisor KVM, 0 GP counters")) << text;
  EXPECT_TRUE(contains(text, "measurable here: kernel_symbols, tracepoints, uprobes")) << text;
  EXPECT_TRUE(contains(text, "not measurable: ipc, turbo, llc, precise, sampling, kprobes, guest_profiling")) << text;
  for (const char* section : {"\nCPU\n", "\nHypervisor\n", "\nArchitectural PMU\n", "\nLive probes", "\nPMUs in sysfs\n",
                              "\nKernel settings\n", "\nVerdicts"})
    EXPECT_TRUE(contains(text, section)) << section;
}

}  // namespace
}  // namespace vperf::host
