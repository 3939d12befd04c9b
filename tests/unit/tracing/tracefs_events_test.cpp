#include "tracing/tracefs_events.h"

#include "tracing/tracefs.h"

#include <gtest/gtest.h>

#include "core/files.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"

namespace vperf::tracing {
namespace {

std::vector<std::string> names_of(const std::vector<const Tracepoint*>& tps) {
  std::vector<std::string> out;
  for (const Tracepoint* tp : tps) out.push_back(tp->name());
  return out;
}

TEST(TracefsEvents, LoadsFakeTreeSortedAndSkipsNonEvents) {
  test::TempTree tree;
  test::add_typical_tracepoints(tree);
  // perf's rule: an event directory without an id file (ftrace:function) is not a tracepoint.
  tree.write("events/sched/sched_broken/format", "no id file here\n");
  auto catalog = TracepointCatalog::load(tree.root());
  ASSERT_TRUE(catalog) << catalog.error().describe();
  std::vector<std::string> names;
  for (const Tracepoint& tp : catalog->all()) names.push_back(tp.name());
  EXPECT_EQ(names, (std::vector<std::string>{"irq:irq_handler_entry", "sched:sched_process_exec", "sched:sched_switch",
                                             "sched:sched_wakeup", "syscalls:sys_enter_read",
                                             "syscalls:sys_enter_write", "syscalls:sys_exit_read"}));
  EXPECT_EQ(catalog->find("sched:sched_broken"), nullptr);
  const Tracepoint* sw = catalog->find("sched:sched_switch");
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(sw->id().value(), 372u);
  EXPECT_EQ(sw->format_path(), tree.root() / "events/sched/sched_switch/format");
  EXPECT_EQ(catalog->find("sched:nope"), nullptr);
  EXPECT_EQ(catalog->find("sched"), nullptr);
}

TEST(TracefsEvents, GlobsExpand) {
  test::TempTree tree;
  test::add_typical_tracepoints(tree);
  auto catalog = TracepointCatalog::load(tree.root()).value();
  EXPECT_EQ(names_of(catalog.match("sched:*")).size(), 3u);
  EXPECT_EQ(names_of(catalog.match("syscalls:sys_enter_*")),
            (std::vector<std::string>{"syscalls:sys_enter_read", "syscalls:sys_enter_write"}));
  EXPECT_EQ(names_of(catalog.match("*:*read")), (std::vector<std::string>{"syscalls:sys_enter_read", "syscalls:sys_exit_read"}));
  EXPECT_TRUE(catalog.match("nope:*").empty());
}

TEST(TracefsEvents, MissingRootIsAnError) {
  test::TempTree tree;
  auto catalog = TracepointCatalog::load(tree.root() / "nothing");
  ASSERT_FALSE(catalog);
  EXPECT_EQ(catalog.error().errno_value, ENOENT);
}

TEST(TracefsEvents, FindsMountInProcMounts) {
  test::TempTree tree;
  tree.write("mounts",
             "sysfs /sys sysfs rw,nosuid 0 0\n"
             "nodev /mnt/my\\040trace tracefs rw,relatime 0 0\n"
             "nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n");
  auto root = find_tracefs_root(tree.root() / "mounts");
  ASSERT_TRUE(root) << root.error().describe();
  EXPECT_EQ(*root, std::filesystem::path("/mnt/my trace"));
}

TEST(TracefsEvents, FallsBackToWellKnownPaths) {
  test::TempTree tree;
  tree.write("mounts", "sysfs /sys sysfs rw 0 0\n");
  auto root = find_tracefs_root(tree.root() / "mounts");
  bool any_known = std::filesystem::is_directory("/sys/kernel/tracing/events") ||
                   std::filesystem::is_directory("/sys/kernel/debug/tracing/events");
  EXPECT_EQ(root.ok(), any_known);
  if (root) {
    EXPECT_TRUE(*root == "/sys/kernel/tracing" || *root == "/sys/kernel/debug/tracing");
  } else {
    EXPECT_NE(root.error().message.find("tracefs is not mounted"), std::string::npos);
  }
}

TEST(Tracefs, OpenMountedSaysHowToMountWhenTheMountIsGone) {
  test::TempTree tree;
  tree.write("mounts", "nodev " + (tree.root() / "gone").string() + " tracefs rw,relatime 0 0\n");
  Result<Tracefs> tracefs = Tracefs::open_mounted(tree.root() / "mounts");
  ASSERT_FALSE(tracefs);
  EXPECT_NE(tracefs.error().describe().find("gone"), std::string::npos) << tracefs.error().describe();
  EXPECT_EQ(tracefs.error().hint, "mount -t tracefs nodev /sys/kernel/tracing");

  std::filesystem::create_directory(tree.root() / "gone");
  tracefs = Tracefs::open_mounted(tree.root() / "mounts");
  ASSERT_TRUE(tracefs) << tracefs.error().describe();
  EXPECT_EQ(tracefs->root(), tree.root() / "gone");
}

// Subsystems are read lazily: find and match read only what they need, and agree with all().
TEST(TracefsEvents, LazySubsystemsAgreeWithTheFullWalk) {
  test::TempTree tree;
  test::add_typical_tracepoints(tree);
  auto lazy = TracepointCatalog::load(tree.root()).value();
  EXPECT_EQ(names_of(lazy.match("sys*:sys_enter_*")),
            (std::vector<std::string>{"syscalls:sys_enter_read", "syscalls:sys_enter_write"}));
  EXPECT_EQ(names_of(lazy.match("*switch*")), (std::vector<std::string>{"sched:sched_switch"}));
  ASSERT_NE(lazy.find("irq:irq_handler_entry"), nullptr);
  auto full = TracepointCatalog::load(tree.root()).value();
  std::vector<const Tracepoint*> everything;
  for (const Tracepoint& tp : full.all()) everything.push_back(&tp);
  EXPECT_EQ(names_of(lazy.match("*")), names_of(everything));
}

TEST(TracefsEvents, RealTracefsHasSchedSwitch) {
  VPERF_REQUIRE(test::has_tracefs(), "tracefs");
  auto root = find_tracefs_root();
  ASSERT_TRUE(root) << root.error().describe();
  auto catalog = TracepointCatalog::load(*root);
  ASSERT_TRUE(catalog) << catalog.error().describe();
  const Tracepoint* sw = catalog->find("sched:sched_switch");
  ASSERT_NE(sw, nullptr);
  auto id_text = read_first_line(*root / "events/sched/sched_switch/id");
  EXPECT_EQ(std::to_string(sw->id().value()), id_text.value());
  EXPECT_TRUE(std::filesystem::exists(sw->format_path()));
  EXPECT_GT(catalog->match("sched:*").size(), 10u);
}

}  // namespace
}  // namespace vperf::tracing
