// Backend choice for APERF/MPERF/TSC: /dev/cpu/N/msr, else the perf msr PMU, else one error
// that names what is missing. The device is a fake MsrReader (or the real reader on an empty
// temp dir), the PMU a fake sysfs tree, and perf_event_open a fake handing out pipes whose
// contents the test writes, as the kernel would answer a group read.
#include "msr/activity_counters.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "core/strings.h"
#include "msr/msr_register.h"
#include "support/fake_event_fs.h"

namespace vperf::msr {
namespace {

class FakeMsrs final : public MsrReader {
 public:
  std::map<std::pair<int, uint32_t>, uint64_t> values;
  int missing_errno = EIO;  // what a register not in `values` fails with
  Result<uint64_t> read(int cpu, uint32_t address) const override {
    auto it = values.find({cpu, address});
    if (it == values.end()) return Error{"read MSR " + hex(address), missing_errno};
    return it->second;
  }
  std::string device_name(int cpu) const override { return "/fake/cpu/" + std::to_string(cpu) + "/msr"; }
};

// perf_event_open as pipes: every open returns a pipe's read end and keeps the write end, so a
// test can put the bytes of the next group read into a leader's pipe.
class PipeOpener final : public perf::PerfEventOpener {
 public:
  struct Opened {
    perf_event_attr attr;
    perf::OpenTarget target;
    int write_fd;
  };
  mutable std::vector<Opened> opened;
  int fail_errno = 0;

  ~PipeOpener() override {
    for (const Opened& o : opened) ::close(o.write_fd);
  }
  Result<perf::EventFd> open(const perf_event_attr& attr, const perf::OpenTarget& target) const override {
    if (fail_errno != 0) return Error{"perf_event_open", fail_errno};
    int fds[2];
    if (::pipe(fds) != 0) return Error::from_errno("pipe");
    opened.push_back({attr, target, fds[1]});
    return perf::EventFd(ScopedFd(fds[0]));
  }
  // The leader of `cpu`'s group answers its next read with {nr, enabled, running, values...}.
  void answer(int cpu, uint64_t aperf, uint64_t mperf, uint64_t tsc, uint64_t running = 1000) const {
    for (const Opened& o : opened)
      if (o.target.cpu == cpu && o.target.group_fd == -1) {
        const uint64_t words[] = {3, 1000, running, aperf, mperf, tsc};
        ASSERT_EQ(::write(o.write_fd, words, sizeof words), static_cast<ssize_t>(sizeof words));
        return;
      }
    FAIL() << "no leader on CPU " << cpu;
  }
};

// The msr PMU of a Skylake host, and of this KVM guest (tsc and smi only).
void add_msr_pmu(const test::TempTree& tree, std::vector<std::pair<std::string, std::string>> events) {
  test::add_fake_pmu(tree, {"msr", 14, {{"event", "config:0-63"}}, std::move(events), {}, ""});
}
const std::vector<std::pair<std::string, std::string>> kHostEvents{{"aperf", "event=0x01"},
                                                                   {"mperf", "event=0x02"},
                                                                   {"pperf", "event=0x03"},
                                                                   {"smi", "event=0x04"},
                                                                   {"tsc", "event=0x00"}};
const std::vector<std::pair<std::string, std::string>> kGuestEvents{{"smi", "event=0x04"}, {"tsc", "event=0x00"}};

const std::vector<int> kCpus{0, 1};

TEST(ActivityCounters, DeviceWinsWhenItReadsAperfAndMperf) {
  FakeMsrs device;
  for (int cpu : kCpus) {
    device.values[{cpu, address::kAperf}] = 100 + cpu;
    device.values[{cpu, address::kMperf}] = 200 + cpu;
    device.values[{cpu, address::kTimeStampCounter}] = 300 + cpu;
  }
  test::TempTree sysfs;
  add_msr_pmu(sysfs, kHostEvents);
  PipeOpener opener;
  ActivityCounterChoice choice = open_activity_counters({device, opener, sysfs.root(), {}}, kCpus);
  ASSERT_NE(choice.counters, nullptr) << choice.missing;
  EXPECT_EQ(choice.counters->describe(), "/dev/cpu/N/msr");
  EXPECT_TRUE(opener.opened.empty()) << "the PMU is not opened when the device works";
  auto s = choice.counters->read(1);
  ASSERT_TRUE(s.ok()) << s.error().describe();
  EXPECT_EQ(*s, (ActivitySample{101, 201, 301}));
  device.values.erase({1, address::kMperf});
  EXPECT_FALSE(choice.counters->read(1).ok()) << "a failed read is an error, not a 0";
}

TEST(ActivityCounters, PmuWhenTheDeviceIsMissing) {
  test::TempTree dev_cpu;  // an empty /dev/cpu: no msr driver
  DevCpuMsrReader device(dev_cpu.root());
  test::TempTree sysfs;
  add_msr_pmu(sysfs, kHostEvents);
  PipeOpener opener;
  ActivityCounterChoice choice = open_activity_counters({device, opener, sysfs.root(), {}}, kCpus);
  ASSERT_NE(choice.counters, nullptr) << choice.missing;
  EXPECT_EQ(choice.counters->describe(), "perf msr PMU (msr/aperf/, msr/mperf/, msr/tsc/)");

  // One group per CPU, system-wide: aperf leads, mperf and tsc follow, encodings from sysfs.
  ASSERT_EQ(opener.opened.size(), 6u);
  for (size_t i = 0; i < opener.opened.size(); ++i) {
    const auto& o = opener.opened[i];
    EXPECT_EQ(o.attr.type, 14u);
    EXPECT_EQ(o.target.pid, -1);
    EXPECT_EQ(o.target.cpu, kCpus[i / 3]);
    EXPECT_EQ(o.attr.config, (std::array<uint64_t, 3>{1, 2, 0}[i % 3]));
    EXPECT_EQ(o.attr.read_format, PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
    EXPECT_EQ(o.attr.exclude_kernel, 0u) << "the msr PMU rejects exclude bits";
    if (i % 3 == 0)
      EXPECT_EQ(o.target.group_fd, -1);
    else
      EXPECT_GE(o.target.group_fd, 0);
  }

  opener.answer(1, 2'900'000'000, 2'500'000'000, 2'500'000'000);
  auto s = choice.counters->read(1);
  ASSERT_TRUE(s.ok()) << s.error().describe();
  EXPECT_EQ(*s, (ActivitySample{2'900'000'000, 2'500'000'000, 2'500'000'000}));
  EXPECT_FALSE(choice.counters->read(7).ok()) << "CPU 7 was not opened";
  opener.answer(0, 1, 2, 3, /*running=*/0);
  EXPECT_FALSE(choice.counters->read(0).ok()) << "a counter that never ran has no value";
}

TEST(ActivityCounters, HiddenInThisKindOfGuestIsOneErrorWithTheFix) {
  test::TempTree dev_cpu;
  DevCpuMsrReader device(dev_cpu.root());
  test::TempTree sysfs;
  add_msr_pmu(sysfs, kGuestEvents);
  PipeOpener opener;
  ActivityCounterChoice choice = open_activity_counters({device, opener, sysfs.root(), {true, false}}, kCpus);
  ASSERT_EQ(choice.counters, nullptr);
  EXPECT_EQ(choice.missing, "APERF/MPERF are hidden here: no " + (dev_cpu.root() / "0" / "msr").string() +
                                " (msr module not loaded) and the msr PMU offers only smi, tsc");
  EXPECT_NE(choice.hint.find("does not pass APERF/MPERF through (CPUID.6:ECX[0]=0)"), std::string::npos) << choice.hint;
  EXPECT_NE(choice.hint.find("loading the msr module cannot help"), std::string::npos) << choice.hint;
  EXPECT_NE(choice.hint.find("cycles,ref-cycles"), std::string::npos) << choice.hint;
  EXPECT_NE(choice.hint.find("KVM_X86_DISABLE_EXITS_APERFMPERF"), std::string::npos) << choice.hint;
  EXPECT_TRUE(opener.opened.empty());
}

TEST(ActivityCounters, BareMetalWithoutTheDriverSaysModprobe) {
  test::TempTree dev_cpu;
  DevCpuMsrReader device(dev_cpu.root());
  test::TempTree sysfs;  // a kernel without the msr PMU
  PipeOpener opener;
  ActivityCounterChoice choice = open_activity_counters({device, opener, sysfs.root(), {false, true}}, kCpus);
  ASSERT_EQ(choice.counters, nullptr);
  EXPECT_NE(choice.missing.find("there is no msr PMU"), std::string::npos) << choice.missing;
  EXPECT_EQ(choice.hint, msr_driver_hint());

  ActivityCounterChoice no_feature = open_activity_counters({device, opener, sysfs.root(), {false, false}}, kCpus);
  EXPECT_EQ(no_feature.hint, "this CPU has no APERF/MPERF (CPUID.6:ECX[0]=0); compare cycles with ref-cycles instead");

  ActivityCounterChoice unknown = open_activity_counters({device, opener, sysfs.root(), {}}, kCpus);
  EXPECT_EQ(unknown.hint.rfind("on bare metal: modprobe msr; in a VM", 0), 0u) << unknown.hint;
}

TEST(ActivityCounters, FaultingRegisterAndPermissionAreNamed) {
  FakeMsrs device;  // the device exists but rdmsr of APERF faults (EIO), as under a hypervisor
  device.values[{0, address::kMperf}] = 1;
  test::TempTree sysfs;
  add_msr_pmu(sysfs, kHostEvents);
  PipeOpener opener;
  opener.fail_errno = EACCES;
  ActivityCounterChoice choice = open_activity_counters({device, opener, sysfs.root(), {false, true}}, kCpus);
  ASSERT_EQ(choice.counters, nullptr);
  EXPECT_EQ(choice.missing,
            "APERF/MPERF cannot be read here: /fake/cpu/0/msr faults reading IA32_APERF (0xe8) and the msr PMU's "
            "aperf, mperf, tsc did not open on CPU 0: event 0 of the group: perf_event_open: Permission denied");
  EXPECT_EQ(choice.hint, "counting system-wide with the msr PMU needs root or kernel.perf_event_paranoid <= 0");

  FakeMsrs locked;
  locked.missing_errno = EACCES;
  ActivityCounterChoice denied = open_activity_counters({locked, opener, sysfs.root(), {false, true}}, kCpus);
  EXPECT_NE(denied.missing.find("/fake/cpu/0/msr is not readable (it needs root with CAP_SYS_RAWIO)"),
            std::string::npos)
      << denied.missing;
  EXPECT_EQ(denied.hint.rfind("run as root", 0), 0u) << denied.hint;

  // A CPU that claims APERF/MPERF but faults on them still gets a hint, never an empty one.
  opener.fail_errno = 0;
  test::TempTree guest_pmu;
  add_msr_pmu(guest_pmu, kGuestEvents);
  ActivityCounterChoice odd = open_activity_counters({device, opener, guest_pmu.root(), {false, true}}, kCpus);
  EXPECT_EQ(odd.hint, "the register does not exist on this CPU, or the hypervisor hides it");
}

TEST(MsrPmuEncoding, ReadsTypeAndEventsThroughTheFormat) {
  test::TempTree sysfs;
  add_msr_pmu(sysfs, kHostEvents);
  auto pmu = events::load_sysfs_pmu(sysfs.root(), "msr");
  ASSERT_TRUE(pmu.ok()) << pmu.error().describe();
  auto encoding = msr_pmu_encoding(*pmu);
  ASSERT_TRUE(encoding.ok()) << encoding.error().describe();
  EXPECT_EQ(encoding->type, 14u);
  EXPECT_EQ(encoding->aperf, 1u);
  EXPECT_EQ(encoding->mperf, 2u);
  EXPECT_EQ(encoding->tsc, 0u);

  test::TempTree no_format;
  test::add_fake_pmu(no_format, {"msr", 14, {}, kHostEvents, {}, ""});
  auto bad = msr_pmu_encoding(events::load_sysfs_pmu(no_format.root(), "msr").value());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no format/event"), std::string::npos) << bad.error().message;

  test::TempTree empty;
  test::add_fake_pmu(empty, {"msr", 14, {{"event", "config:0-63"}}, {}, {}, ""});
  EXPECT_EQ(msr_pmu_encoding(events::load_sysfs_pmu(empty.root(), "msr").value()).error().message,
            "the msr PMU offers no events");
}

}  // namespace
}  // namespace vperf::msr
