#include "tracing/ftrace_persisted.h"

#include <gtest/gtest.h>

#include "core/files.h"
#include "support/fake_event_fs.h"
#include "tracing/ftrace_buffer.h"
#include "tracing/ftrace_setup.h"

namespace vperf::tracing {
namespace {

// What start kept comes back byte for byte, whatever the contents hold (newlines, spaces, nothing).
TEST(FtracePersisted, SavedFilesComeBackExactly) {
  const SavedFiles files = {{"tracing_on", "1\n"},
                            {"events/syscalls/sys_enter_getppid/trigger", "# Available triggers:\n# traceon traceoff\n"},
                            {"set_event_pid", ""},
                            {"trace_clock", "[local] global 12 3\n"}};
  const std::string text = saved_files_text(files);
  Result<SavedFiles> back = parse_saved_files(text);
  ASSERT_TRUE(back.ok()) << back.error().describe();
  EXPECT_EQ(*back, files);
  EXPECT_TRUE(parse_saved_files(saved_files_text({})).value().empty());
}

// A damaged file is one error, never a partial restore; names cannot leave tracefs.
TEST(FtracePersisted, DamagedSavedFilesAreRefused) {
  const std::string good = saved_files_text({{"tracing_on", "1\n"}});
  for (const std::string& bad : {std::string("tracing_on 2\n1\n"), good.substr(0, good.size() - 1), good.substr(0, good.size() - 3),
                                 saved_files_text({{"../../proc/sys/kernel/panic", "1"}}), saved_files_text({{"/etc/passwd", "x"}}),
                                 good + "tracing_on x\n", good + "tracing_on 1\n1"}) {
    Result<SavedFiles> parsed = parse_saved_files(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().describe().find("damaged"), std::string::npos);
  }
}

// The sysctl as the kernel reads it at an oops: 6.1's numbers, 6.10's instances.
TEST(FtracePersisted, OopsDumpSettingReadsAsTheKernelReadsIt) {
  EXPECT_EQ(parse_dump_on_oops("0\n"), DumpOnOops{});
  EXPECT_EQ(parse_dump_on_oops("1\n").top, OopsDump::all_cpus);
  EXPECT_EQ(parse_dump_on_oops("orig_cpu").top, OopsDump::oops_cpu);
  const DumpOnOops mixed = parse_dump_on_oops("2,foo,bar=orig_cpu,baz=1\n");
  EXPECT_EQ(mixed.top, OopsDump::oops_cpu);
  ASSERT_EQ(mixed.instances.size(), 3u);
  EXPECT_EQ(mixed.instances[0], std::make_pair(std::string("foo"), OopsDump::all_cpus));
  EXPECT_EQ(mixed.instances[1], std::make_pair(std::string("bar"), OopsDump::oops_cpu));
  EXPECT_EQ(mixed.instances[2], std::make_pair(std::string("baz"), OopsDump::all_cpus));
  EXPECT_EQ(dump_on_oops_text(mixed), "2,foo,bar=2,baz");
  // A first field that is no mode names an instance; the top level stays off.
  const DumpOnOops only_instance = parse_dump_on_oops("foo=2");
  EXPECT_EQ(only_instance.top, OopsDump::off);
  EXPECT_EQ(dump_on_oops_text(only_instance), "0,foo=2");
}

// start and reset change only their own part of the setting.
TEST(FtracePersisted, EachStartChangesOnlyItsOwnPartOfTheOopsDump) {
  DumpOnOops setting = parse_dump_on_oops("0,theirs");
  setting = with_oops_dump(setting, "mine", OopsDump::oops_cpu);
  EXPECT_EQ(dump_on_oops_text(setting), "0,theirs,mine=2");
  setting = with_oops_dump(setting, "", OopsDump::all_cpus);
  EXPECT_EQ(dump_on_oops_text(setting), "1,theirs,mine=2");
  setting = with_oops_dump(setting, "mine", OopsDump::off);
  setting = with_oops_dump(setting, "", OopsDump::off);
  EXPECT_EQ(dump_on_oops_text(setting), "0,theirs");
}

TEST(FtracePersisted, InstancesInTheOopsDumpNeedLinux610) {
  EXPECT_FALSE(dump_on_oops_takes_instances("6.1.0-56-amd64"));
  EXPECT_FALSE(dump_on_oops_takes_instances("6.9.12"));
  EXPECT_FALSE(dump_on_oops_takes_instances("5.15.0-91-generic"));
  EXPECT_TRUE(dump_on_oops_takes_instances("6.10.0"));
  EXPECT_TRUE(dump_on_oops_takes_instances("6.18.0-rc3+"));
  EXPECT_TRUE(dump_on_oops_takes_instances("7.0"));
  EXPECT_FALSE(dump_on_oops_takes_instances("garbage"));
}

// The sysctl is written whole, in one write; a file standing in for it shows what the kernel got.
TEST(FtracePersisted, OopsDumpIsWrittenWhole) {
  test::TempTree tree;
  tree.write("ftrace_dump_on_oops", "0\n");
  const std::filesystem::path sysctl = tree.root() / "ftrace_dump_on_oops";
  ASSERT_TRUE(write_dump_on_oops(parse_dump_on_oops("1,foo=2"), sysctl).ok());
  EXPECT_EQ(read_file(sysctl).value(), "1,foo=2");
  EXPECT_EQ(read_dump_on_oops(sysctl).value(), parse_dump_on_oops("1,foo=2"));
  Result<void> missing = write_dump_on_oops(DumpOnOops{}, tree.root() / "absent" / "ftrace_dump_on_oops");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().describe().find("ftrace_dump_on_oops"), std::string::npos);
}

// The top level a start kept is given back by a later command: a buffer made from the saved
// files restores them when released, and a kept buffer leaves what was written.
TEST(FtracePersisted, TopLevelKeptByOneCommandIsRestoredByAnother) {
  test::TempTree tree;
  tree.write("tracing_on", "1\n");
  tree.write("trace_clock", "[local] global\n");
  tree.write("events/syscalls/sys_enter_getppid/enable", "0\n");
  tree.write("events/syscalls/sys_enter_getppid/filter", "none\n");
  tree.write("error_log", "");
  tree.write("trace", "");
  Tracefs tracefs = Tracefs::open(tree.root()).value();
  std::string kept;
  {
    FtraceBuffer top = FtraceBuffer::top_level(tracefs);
    FtraceSettings settings;
    settings.clock = "global";
    Result<void> applied = apply_settings(top, settings, {{"syscalls", "sys_enter_getppid"}});
    ASSERT_TRUE(applied.ok()) << applied.error().describe();
    ASSERT_TRUE(start_tracing(top).ok());
    kept = saved_files_text(top.saved_files());
    top.keep();
  }
  EXPECT_EQ(read_file(tree.root() / "trace_clock").value(), "global");
  EXPECT_EQ(read_file(tree.root() / "events/syscalls/sys_enter_getppid/enable").value(), "1");
  {
    FtraceBuffer top = FtraceBuffer::top_level_restoring(tracefs, parse_saved_files(kept).value());
    ASSERT_TRUE(top.release().ok());
  }
  EXPECT_EQ(read_file(tree.root() / "trace_clock").value(), "local");
  EXPECT_EQ(read_file(tree.root() / "events/syscalls/sys_enter_getppid/enable").value(), "0");
  EXPECT_EQ(read_file(tree.root() / "tracing_on").value(), "1");
}

}  // namespace
}  // namespace vperf::tracing
