// What kvm stat record records on a kernel (kvm/kvm_tracepoints.h), against fake tracefs trees:
// the tracepoints the kernel has, and the KVM_RUN filter tied to its tracepoint by name.
#include "kvm_stat/kvm_tracepoints.h"

#include <gtest/gtest.h>
#include <linux/kvm.h>

#include "support/fake_event_fs.h"

namespace vperf::kvm {
namespace {

TEST(KvmTracepoints, RecordsWhatTheKernelHasWithTheRunFilterOnTheIoctlTracepoint) {
  test::TempTree tracefs;
  test::add_fake_tracepoint(tracefs, "kvm", "kvm_exit", 101);
  test::add_fake_tracepoint(tracefs, "kvm", "kvm_entry", 102);
  test::add_fake_tracepoint(tracefs, "syscalls", "sys_enter_ioctl", 103);
  test::add_fake_tracepoint(tracefs, "kvm", "kvm_pio", 104);
  Result<KvmRecordEvents> recorded = kvm_record_events(tracing::Tracefs::open(tracefs.root()).value());
  ASSERT_TRUE(recorded.ok()) << recorded.error().describe();
  EXPECT_EQ(recorded->events,
            (std::vector<std::string>{"kvm:kvm_entry", "kvm:kvm_exit", "kvm:kvm_pio", "syscalls:sys_enter_ioctl"}));
  char run[32];
  std::snprintf(run, sizeof run, "cmd == %#x", static_cast<unsigned>(KVM_RUN));
  EXPECT_EQ(recorded->filters, (std::map<std::string, std::string>{{"syscalls:sys_enter_ioctl", run}}));
}

TEST(KvmTracepoints, NoKvmTracepointIsAnErrorThatSaysToLoadKvm) {
  test::TempTree tracefs;
  test::add_fake_tracepoint(tracefs, "syscalls", "sys_enter_ioctl", 105);  // the ioctl alone is no kvm recording
  Result<KvmRecordEvents> recorded = kvm_record_events(tracing::Tracefs::open(tracefs.root()).value());
  ASSERT_FALSE(recorded.ok());
  EXPECT_EQ(recorded.error().message, "no kvm tracepoints in " + (tracefs.root() / "events").string());
  EXPECT_EQ(recorded.error().hint, "load KVM (modprobe kvm_intel or kvm_amd); /dev/kvm must exist");
}

TEST(KvmTracepoints, KindsByName) {
  EXPECT_EQ(kvm_event_kind("kvm:kvm_exit"), KvmEventKind::Exit);
  EXPECT_EQ(kvm_event_kind("syscalls:sys_enter_ioctl"), KvmEventKind::RunIoctl);
  EXPECT_EQ(kvm_event_kind("kvm:kvm_page_fault"), std::nullopt);
  for (const KvmTracepoint& t : kvm_tracepoints()) EXPECT_EQ(kvm_tracepoint(t.kind).name(), t.name());
}

}  // namespace
}  // namespace vperf::kvm
