#include "host/kernel_settings.h"

#include "tracing/tracefs_events.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/files.h"
#include "fake_host.h"

namespace vperf::host {
namespace {

namespace fs = std::filesystem;

HostPaths paths_in(const test::TempTree& tree) {
  HostPaths p;
  p.proc = tree.root() / "proc";
  p.tracefs_default = tree.root() / "sys/kernel/tracing";
  p.pmu_root = tree.root() / "sys/bus/event_source/devices";
  return p;
}

TEST(KernelSettings, ReadsSysctlsKallsymsAndTracefs) {
  test::TempTree tree("ks-full");
  const std::string tracing = (tree.root() / "sys/kernel/tracing").string();
  tree.write("proc/sys/kernel/perf_event_paranoid", "2\n");
  tree.write("proc/sys/kernel/kptr_restrict", "0\n");
  tree.write("proc/kallsyms", "ffffffff81000000 T _stext\nffffffff81000010 T other\n");
  tree.write("proc/mounts", "sysfs /sys sysfs rw 0 0\nnodev " + tracing + " tracefs rw,relatime 0 0\n");
  tree.mkdir("sys/kernel/tracing/events/sched");
  tree.write("sys/kernel/tracing/uprobe_events", "");
  tree.write("sys/kernel/tracing/available_tracers", "blk function nop\n");
  KernelSettings s = probe_kernel_settings(paths_in(tree));
  EXPECT_EQ(s.perf_event_paranoid, 2);
  EXPECT_EQ(s.kptr_restrict, 0);
  EXPECT_EQ(s.kallsyms_addresses_visible, true);
  ASSERT_TRUE(s.tracefs.mount_point.has_value());
  EXPECT_EQ(*s.tracefs.mount_point, fs::path(tracing));
  EXPECT_TRUE(s.tracefs.events_dir);
  EXPECT_TRUE(s.tracefs.uprobe_events);
  EXPECT_FALSE(s.tracefs.kprobe_events);
  EXPECT_EQ(s.tracefs.available_tracers, (std::vector<std::string>{"blk", "function", "nop"}));
  EXPECT_FALSE(s.tracefs.mountable);
}

TEST(KernelSettings, HiddenKallsymsNegativeParanoidAndUnmountedTracefs) {
  test::TempTree tree("ks-hidden");
  tree.write("proc/sys/kernel/perf_event_paranoid", "-1\n");
  tree.write("proc/sys/kernel/kptr_restrict", "2\n");
  tree.write("proc/kallsyms", "0000000000000000 T _stext\n0000000000000000 T other\n");
  tree.write("proc/mounts", "sysfs /sys sysfs rw 0 0\n");
  tree.write("proc/filesystems", "nodev\tsysfs\nnodev\ttracefs\n");
  tree.mkdir("sys/kernel/tracing");
  KernelSettings s = probe_kernel_settings(paths_in(tree));
  EXPECT_EQ(s.perf_event_paranoid, -1);
  EXPECT_EQ(s.kptr_restrict, 2);
  EXPECT_EQ(s.kallsyms_addresses_visible, false);
  EXPECT_FALSE(s.tracefs.mount_point.has_value());
  EXPECT_TRUE(s.tracefs.mountable);
}

TEST(KernelSettings, MissingFilesAreErrorsNotValues) {
  test::TempTree tree("ks-missing");
  tree.write("proc/sys/kernel/perf_event_paranoid", "two\n");
  KernelSettings s = probe_kernel_settings(paths_in(tree));
  EXPECT_FALSE(s.perf_event_paranoid.has_value());
  EXPECT_NE(s.perf_event_paranoid_error.find("not a number"), std::string::npos);
  EXPECT_FALSE(s.kptr_restrict.has_value());
  EXPECT_FALSE(s.kptr_restrict_error.empty());
  EXPECT_FALSE(s.kallsyms_addresses_visible.has_value());
  EXPECT_FALSE(s.tracefs.mountable) << "no tracefs in /proc/filesystems";
}

TEST(KernelSettings, TracefsUnderDebugfs) {
  test::TempTree tree("ks-debugfs");
  tree.mkdir("debug/tracing/events");
  auto m = tracing::tracefs_mount_in("debugfs " + (tree.root() / "debug").string() + " debugfs rw 0 0\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, tree.root() / "debug/tracing");
  EXPECT_FALSE(tracing::tracefs_mount_in("proc /proc proc rw 0 0\n").has_value());
}

// The real machine, against independent reads of the same files.
TEST(KernelSettings, RealMachine) {
  KernelSettings s = probe_kernel_settings(HostPaths{});
  auto paranoid = read_first_line("/proc/sys/kernel/perf_event_paranoid");
  ASSERT_TRUE(paranoid.ok());
  EXPECT_EQ(s.perf_event_paranoid, std::stoi(*paranoid));
  if (s.tracefs.mount_point) {
    EXPECT_EQ(s.tracefs.events_dir, fs::is_directory(*s.tracefs.mount_point / "events"));
    EXPECT_EQ(s.tracefs.kprobe_events, fs::exists(*s.tracefs.mount_point / "kprobe_events"));
    EXPECT_EQ(s.tracefs.uprobe_events, fs::exists(*s.tracefs.mount_point / "uprobe_events"));
  } else {
    EXPECT_FALSE(fs::exists("/sys/kernel/tracing/events"));
  }
}

}  // namespace
}  // namespace vperf::host
