// The one check of what vperf writes into the kernel's control files (tracing/kernel_control_text.h),
// file kind by file kind, and the writers that call it: a crafted value refused before anything is
// written, and a refusal explained only by the error_log entry the write itself added.
#include "tracing/kernel_control_text.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/files.h"
#include "support/fake_event_fs.h"
#include "tracing/dynamic_events.h"
#include "tracing/ftrace_buffer.h"
#include "tracing/ftrace_persisted.h"
#include "tracing/ftrace_setup.h"
#include "tracing/trace_text.h"

namespace vperf::tracing {
namespace {

using namespace std::string_literals;

struct Case {
  std::string value;
  bool accepted;
};

TEST(KernelControlText, InstanceNames) {
  const std::vector<Case> cases = {
      {"vperf-1234", true}, {"trace1", true}, {"my_trace.v2", true}, {"a", true}, {std::string(255, 'x'), true},
      {"", false}, {".", false}, {"..", false}, {"../..", false}, {"a/b", false}, {"/", false}, {"a\nb", false},
      {"a b", false}, {"a,b", false}, {"a=2", false}, {"caf\xc3\xa9", false}, {"tab\t", false}, {std::string(256, 'x'), false},
      {"a\0b"s, false},
  };
  for (const Case& c : cases) EXPECT_EQ(check_instance_name(c.value).ok(), c.accepted) << printable_text(c.value);
  const Result<void> up = check_instance_name("..");
  ASSERT_FALSE(up.ok());
  EXPECT_NE(up.error().message.find("leads out of instances/"), std::string::npos) << up.error().message;
  EXPECT_NE(up.error().hint.find("--instance ''"), std::string::npos) << up.error().hint;
}

TEST(KernelControlText, EventAndGroupNamesAreTheKernelsGoodNames) {
  const std::vector<Case> cases = {
      {"probe_libc", true}, {"malloc__return", true}, {"_x1", true}, {"A", true},
      {"", false}, {"1abc", false}, {"a-b", false}, {"a.b", false}, {"a/b", false}, {"a b", false}, {"a\n", false}, {"x:y", false},
  };
  for (const Case& c : cases) EXPECT_EQ(check_event_name(c.value, "event").ok(), c.accepted) << printable_text(c.value);
}

TEST(KernelControlText, BufferFilesStayInsideTheBuffer) {
  const std::vector<Case> cases = {
      {"tracing_on", true}, {"options/func_stack_trace", true}, {"events/sched/sched_switch/filter", true}, {"per_cpu/cpu0/trace_pipe_raw", true},
      {"", false}, {"/tracing_on", false}, {"..", false}, {"options/../../tracing_on", false}, {"options/./x", false}, {"events//enable", false},
      {"options/a b", false}, {"options/a\nb", false}, {"events/sched/", false},
  };
  for (const Case& c : cases) EXPECT_EQ(check_buffer_file(c.value).ok(), c.accepted) << printable_text(c.value);
}

TEST(KernelControlText, BufferValuesAreWhatEachFileTakes) {
  struct FileCase {
    std::string file;
    std::string value;
    bool accepted;
  };
  const std::vector<FileCase> cases = {
      {"tracing_on", "0", true}, {"tracing_on", "1", true}, {"tracing_on", "1\n0", false}, {"tracing_on", "", false}, {"tracing_on", "on", false},
      {"buffer_size_kb", "4096", true}, {"buffer_size_kb", "-1", false}, {"buffer_size_kb", "7 (expanded: 1408)", false},
      {"options/func_stack_trace", "1", true}, {"options/func_stack_trace", "yes", false},
      {"events/syscalls/sys_enter_getppid/enable", "1", true}, {"events/syscalls/sys_enter_getppid/enable", "1\n", false},
      {"max_graph_depth", "3", true}, {"tracing_thresh", "100", true}, {"snapshot", "1", true},
      {"trace", "", true}, {"trace", "x", false}, {"error_log", "", true},
      {"trace_clock", "global", true}, {"trace_clock", "x86-tsc", true}, {"trace_clock", "mono_raw", true}, {"trace_clock", "", false},
      {"trace_clock", "global\nlocal", false}, {"trace_clock", "a b", false},
      {"current_tracer", "function_graph", true}, {"current_tracer", "nop", true}, {"current_tracer", "nop\nfunction", false},
      {"tracing_cpumask", "3", true}, {"tracing_cpumask", "40,00000002,00000001", true}, {"tracing_cpumask", "3\n", false}, {"tracing_cpumask", "g", false},
      {"set_event_pid", "12 34 ", true}, {"set_event_pid", "", true}, {"set_ftrace_pid", "1\n2", false}, {"set_event_pid", "12;34", false},
      {"set_ftrace_filter", "vfs_*\n", true}, {"set_ftrace_filter", "", true}, {"set_ftrace_filter", "a b c ", true},
      {"set_ftrace_filter", "schedule:traceoff:3\n", true}, {"set_ftrace_filter", "a\nb\n", false}, {"set_graph_notrace", "a\tb", false},
      {"set_event", "sched:* ", true}, {"set_event", "sched:*\n!irq:*\n", false},
      {"events/sched/sched_switch/filter", "prev_pid == 7 && comm == \"sh\"", true},
      {"events/sched/sched_switch/filter", "0", true}, {"events/sched/sched_switch/filter", "prev_pid == 7\n", false},
      {"events/sched/sched_switch/trigger", "traceoff:3", true}, {"events/sched/sched_switch/trigger", "hist:keys=prev_pid if prev_pid > 1", true},
      {"events/sched/sched_switch/trigger", "traceoff\n!traceoff", false}, {"events/sched/sched_switch/trigger", "stacktrace\r", false},
      {"trace_marker", "any text\nwith\tcontrol bytes\x01 and \xff", true},
      {"options/../tracing_on", "0", false}, {"../tracing_on", "0", false}, {"/tracing_on", "0", false},
  };
  for (const FileCase& c : cases) EXPECT_EQ(check_buffer_value(c.file, c.value).ok(), c.accepted) << c.file << " <- " << printable_text(c.value);
  const Result<void> two_lines = check_buffer_value("events/sched/sched_switch/trigger", "traceoff\n!traceoff");
  ASSERT_FALSE(two_lines.ok());
  EXPECT_NE(two_lines.error().message.find("a newline"), std::string::npos) << two_lines.error().message;
  EXPECT_EQ(two_lines.error().message.find('\n'), std::string::npos) << "the error is one line: " << two_lines.error().message;
}

TEST(KernelControlText, FilterWordsAreOneWordEach) {
  for (std::string word : {"vfs_*", "!do_exit", ":mod:ext4", "schedule:traceoff:3", "*write*"}) EXPECT_TRUE(check_filter_word("set_ftrace_filter", word).ok()) << word;
  for (std::string word : {"", "a b", "a\nb", "a\tb", "vfs_read\n", "x\xa0y"}) EXPECT_FALSE(check_filter_word("set_ftrace_filter", word).ok()) << printable_text(word);
}

TEST(KernelControlText, UprobeCommands) {
  const std::vector<Case> cases = {
      {"p:probe_libc/malloc /usr/lib/x86_64-linux-gnu/libc.so.6:0x98930", true},
      {"r:probe_libc/malloc__return /usr/lib/x86_64-linux-gnu/libc.so.6:0x98930 $retval", true},
      {"p:sdt_python/gc__start /usr/bin/python3.11:0x1a2b(0x3c4d) arg1=%di:s32 arg2=+8(%sp):u64", true},
      {"p:vperftest/probe_target /opt/w:x/vperf-workload:0x1139 index=-20(%bp):s32 name=+0(%di):string", true},
      {"p:g/e /a:100 flags=+4(+8(%si)):x32 arr=+0(%di):u8[4] bit=+0(%di):b3@4/32 c=$comm s=@+0x4010:u64", true},
      {"-:probe_libc/malloc", true},
      // The attacks: a path with a newline (a second command), a space (a word split off), '#'
      // (the rest a comment), a byte the kernel's isspace splits on (0xa0), a control byte.
      {"p:g/e /tmp/x\n-:other/probe:0x10", false},
      {"p:g/e /tmp/x\np:g/f /bin/su:0x10:0x20", false},
      {"p:g/e /tmp/a b:0x10", false},
      {"p:g/e /tmp/x:0x10 /bin/su:0x20", false},
      {"p:g/e /tmp/x#y:0x10", false},
      {"p:g/e /tmp/\xa0x:0x10", false},
      {"p:g/e /tmp/x\r:0x10", false},
      {"p:g/e /tmp/x\t:0x10", false},
      {"p:g/e /tmp/x:0x10\n", false},
      {"p:g/e /tmp/x:0x10 a=%di\n-:g/f", false},
      // Malformed commands.
      {"", false}, {" ", false}, {"p:g/e  /tmp/x:0x10", false}, {"p:g/e /tmp/x:0x10 ", false}, {"p:g/e", false}, {"x:g/e /a:0x1", false},
      {"p:g /a:0x1", false}, {"p:1g/e /a:0x1", false}, {"p:g/e-x /a:0x1", false}, {"p:../e /a:0x1", false}, {"p:g/e /a", false},
      {"p:g/e :0x1", false}, {"p:g/e /a:0xzz", false}, {"p:g/e /a:0x1(0x", false}, {"p:g/e /a:0x1(zz)", false},
      {"p:g/e /a:0x1 x=%di:0x10", false}, {"p:g/e /a:0x1 x=(%di", false}, {"p:g/e /a:0x1 1x=%di", false}, {"p:g/e /a:0x1 word", false},
      {"-:g/e extra", false}, {"-:g", false}, {"r3:g/e /a:0x1", false}, {"p:g/e /a:0x1 a=%di:u128", false},
      {"p:g/e /" + std::string(4100, 'a') + ":0x1", false},
  };
  for (const Case& c : cases) EXPECT_EQ(check_dynamic_event_command(DynamicEventsFile::uprobes, c.value).ok(), c.accepted) << printable_text(c.value);
  const Result<void> newline = check_dynamic_event_command(DynamicEventsFile::uprobes, "p:g/e /tmp/x\n-:other/probe:0x10");
  ASSERT_FALSE(newline.ok());
  EXPECT_NE(newline.error().message.find("/tmp/x\\n-:other/probe"), std::string::npos) << newline.error().message;
  EXPECT_NE(newline.error().hint.find("ln -s"), std::string::npos) << newline.error().hint;
}

TEST(KernelControlText, KprobeCommands) {
  const std::vector<Case> cases = {
      {"p:probe/do_sys_openat2 do_sys_openat2+0 dfd=%di filename=+0(%si):string", true},
      {"r:probe/do_sys_openat2__return do_sys_openat2+0 $retval", true},
      {"r10:probe/vfs_read__return vfs_read+0", true},
      {"p:probe/x ext4:ext4_file_write_iter+16", true},
      {"p:probe/x _text+1234567", true},
      {"p:probe/x 0xffffffff81000000", true},
      {"p:probe/x foo.isra.0+4 file", true},
      {"-:probe/do_sys_openat2", true},
      {"p:probe/x do_sys_openat2+0\n-:probe/y", false},
      {"p:probe/x do/sys+0", false},
      {"p:probe/x do_sys_openat2+zz", false},
      {"p:probe/x do_sys_openat2+0 #c", false},
  };
  for (const Case& c : cases) EXPECT_EQ(check_dynamic_event_command(DynamicEventsFile::kprobes, c.value).ok(), c.accepted) << printable_text(c.value);
}

TEST(KernelControlText, OopsDumpSettings) {
  const std::vector<Case> cases = {
      {"0", true}, {"1", true}, {"2", true}, {"orig_cpu", true}, {"0,trace1", true}, {"0,trace1=2,vperf-9=orig_cpu", true}, {"trace1", true},
      {"", false}, {"0\n1", false}, {"0,", false}, {"0,a b", false}, {"0,..", false}, {"0,a/b", false}, {"0,a=3", false}, {"1\n", false},
  };
  for (const Case& c : cases) EXPECT_EQ(check_dump_on_oops_text(c.value).ok(), c.accepted) << printable_text(c.value);
}

TEST(KernelControlText, PrintableTextIsOneLine) {
  EXPECT_EQ(printable_text("a\nb\tc\\d\x01\xff"), "a\\nb\\tc\\\\d\\x01\\xff");
  EXPECT_EQ(printable_text("plain /path:0x10"), "plain /path:0x10");
}

// A tracefs laid out in plain files: enough for the writers to show that a refused value never
// reaches a file.
Tracefs fake_tracefs(test::TempTree& tree) {
  tree.write("uprobe_events", "p:someone/else /bin/true:0x10\n");
  tree.write("tracing_on", "1\n");
  tree.write("error_log", "");
  tree.write("instances/mine/tracing_on", "1\n");
  tree.write("instances/mine/error_log", "");
  tree.write("instances/mine/options/func_stack_trace", "0\n");
  return Tracefs::open(tree.root()).value();
}

// The first attack of issue 30: a -x path with a newline made the uprobe_events write two
// commands (add a probe on another file, remove someone else's). Nothing is written now.
TEST(KernelControlWriters, AProbePathWithANewlineNeverReachesUprobeEvents) {
  test::TempTree tree;
  const Tracefs tracefs = fake_tracefs(tree);
  for (const std::string path : {"/tmp/x\n-:someone/else\np:evil/probe /bin/su", "/tmp/a b", "/tmp/x#"}) {
    UprobeEvent event{"probe_x", "main", path, 0x1139, std::nullopt, false, {}};
    const Result<void> added = add_uprobe(tracefs, uprobe_definition(event));
    ASSERT_FALSE(added.ok()) << printable_text(path);
    const std::string said = added.error().describe();
    EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 0) << said;
  }
  EXPECT_FALSE(remove_uprobe(tracefs, "someone/else\n-:x", "y").ok());
  EXPECT_EQ(read_file(tree.root() / "uprobe_events").value(), "p:someone/else /bin/true:0x10\n");
}

// The second: `--instance ..` named the top level through instances/.., past the guard that
// keeps the top level to `start --instance ''`. Refused, and tracing_on is untouched; so is an
// instance that is a link out of instances/.
TEST(KernelControlWriters, InstanceNamesNeverLeadOutOfInstances) {
  test::TempTree tree;
  const Tracefs tracefs = fake_tracefs(tree);
  for (std::string name : {"..", ".", "../instances/mine", "mine/..", "", "mine/../..", "/"}) {
    Result<FtraceBuffer> opened = FtraceBuffer::open_instance(tracefs, name);
    ASSERT_FALSE(opened.ok()) << name;
    EXPECT_FALSE(remove_instance(tracefs, name).ok()) << name;
    EXPECT_FALSE(FtraceBuffer::create_instance(tracefs, name).ok()) << name;
  }
  ASSERT_EQ(::symlink(tree.root().c_str(), (tree.root() / "instances/escape").c_str()), 0);
  Result<FtraceBuffer> escaped = FtraceBuffer::open_instance(tracefs, "escape");
  ASSERT_FALSE(escaped.ok());
  EXPECT_NE(escaped.error().message.find("outside"), std::string::npos) << escaped.error().message;
  EXPECT_EQ(read_file(tree.root() / "tracing_on").value(), "1\n");
  EXPECT_TRUE(std::filesystem::is_directory(tree.root() / "instances"));
  // The instance that exists opens, stops, and is removed by its own name.
  Result<FtraceBuffer> mine = FtraceBuffer::open_instance(tracefs, "mine");
  ASSERT_TRUE(mine.ok()) << mine.error().describe();
  ASSERT_TRUE(stop_tracing(mine.value()).ok());
  EXPECT_EQ(read_file(tree.root() / "instances/mine/tracing_on").value(), "0");
  EXPECT_EQ(read_file(tree.root() / "tracing_on").value(), "1\n");
}

// A trace option is a file name under options/: "-O ../tracing_on" would turn the buffer off
// (or, from an instance, reach the top level's files). Refused before the first write.
TEST(KernelControlWriters, SettingsAreCheckedBeforeAnyWrite) {
  test::TempTree tree;
  const Tracefs tracefs = fake_tracefs(tree);
  Result<FtraceBuffer> mine = FtraceBuffer::open_instance(tracefs, "mine");
  ASSERT_TRUE(mine.ok());
  std::vector<FtraceSettings> bad(7);
  bad[0].options = {"../../../tracing_on"};
  bad[6].options = {"no../tracing_on"};  // written as options/../tracing_on
  bad[1].function_filters = {"vfs_read\n!vfs_write"};
  bad[2].event_filter = "common_pid == 1\n";
  bad[3].event_triggers = {"traceoff\n!traceoff"};
  bad[4].clock = "global\nlocal";
  bad[5].cpumask = "3\n";
  for (const FtraceSettings& settings : bad) {
    const Result<void> applied = apply_settings(mine.value(), settings, {});
    EXPECT_FALSE(applied.ok());
  }
  EXPECT_EQ(read_file(tree.root() / "instances/mine/tracing_on").value(), "1\n") << "nothing written, not even tracing_on";
  EXPECT_EQ(read_file(tree.root() / "tracing_on").value(), "1\n");
  EXPECT_FALSE(mine->write("options/../../../tracing_on", "0").ok());
  EXPECT_EQ(read_file(tree.root() / "tracing_on").value(), "1\n");
}

// A sysctl string is kept up to its first newline: an instance name that holds one is refused
// before the write, and the sysctl keeps what it had.
TEST(KernelControlWriters, TheOopsDumpSettingIsCheckedBeforeItIsWritten) {
  test::TempTree tree;
  tree.write("ftrace_dump_on_oops", "0\n");
  DumpOnOops setting;
  setting.instances.emplace_back("a\n1", OopsDump::all_cpus);
  EXPECT_FALSE(write_dump_on_oops(setting, tree.root() / "ftrace_dump_on_oops").ok());
  setting.instances = {{"..", OopsDump::all_cpus}};
  EXPECT_FALSE(write_dump_on_oops(setting, tree.root() / "ftrace_dump_on_oops").ok());
  EXPECT_EQ(read_file(tree.root() / "ftrace_dump_on_oops").value(), "0\n");
  setting.instances = {{"trace1", OopsDump::oops_cpu}};
  ASSERT_TRUE(write_dump_on_oops(setting, tree.root() / "ftrace_dump_on_oops").ok());
  EXPECT_EQ(read_file(tree.root() / "ftrace_dump_on_oops").value(), "0,trace1=2");
}

// Issue 30's item 7: a refusal quoted error_log's last entry whatever its age (another tool's
// refusal, an hour old). Only entries the write added count; the top level's log, shared with
// every tool, is not cleared.
TEST(KernelControlWriters, ARefusalQuotesOnlyTheErrorLogEntryItsWriteAdded) {
  const std::string old_entry = "[ 1520.382093] event filter parse error: error: Field not found\n  Command: bogus == 1\n           ^\n";
  test::TempTree tree;
  const Tracefs tracefs = fake_tracefs(tree);
  tree.write("error_log", old_entry);
  // A write the "kernel" refuses without an entry of its own: /dev/full (ENOSPC).
  std::filesystem::remove(tree.root() / "uprobe_events");
  ASSERT_EQ(::symlink("/dev/full", (tree.root() / "uprobe_events").c_str()), 0);
  const Result<void> added = add_uprobe(tracefs, "p:probe_x/main /bin/true:0x10");
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().errno_value, ENOSPC);
  EXPECT_EQ(added.error().message.find("bogus"), std::string::npos) << added.error().message;

  ASSERT_EQ(::symlink("/dev/full", (tree.root() / "trace_clock").c_str()), 0);
  FtraceBuffer top = FtraceBuffer::top_level(tracefs);
  const Result<void> written = top.write("trace_clock", "global");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().describe().find("bogus"), std::string::npos) << written.error().describe();
  top.keep();
  EXPECT_EQ(read_file(tree.root() / "error_log").value(), old_entry) << "the shared top-level error_log is left as it was";
}

TEST(KernelControlWriters, TheEntryAWriteAddedIsTheNewOneThatQuotesIt) {
  const std::string a = "[ 10.000001] trace_uprobe: error: File not found\n  Command: p:g/e /nope:0x10\n                 ^\n";
  const std::string b = "[ 20.000002] event filter parse error: error: Field not found\n  Command: bogus == 1\n           ^\n";
  const std::string c = "[ 30.000003] trace_uprobe: error: Invalid fetch argument\n  Command: p:g/f /bin/true:0x10 x=%zz\n    ^\n";
  EXPECT_EQ(error_log_entry_of_write(a, a, "p:g/e /nope:0x10"), "") << "an old entry, however well it matches, is not this write's";
  EXPECT_EQ(error_log_entry_of_write(a, a + b, "p:g/e /nope:0x10"), "event filter parse error: error: Field not found | Command: bogus == 1 | ^");
  EXPECT_EQ(error_log_entry_of_write(a, a + c + b, "p:g/f /bin/true:0x10 x=%zz"),
            "trace_uprobe: error: Invalid fetch argument | Command: p:g/f /bin/true:0x10 x=%zz | ^")
      << "another tool's newer refusal is not this write's";
  EXPECT_EQ(error_log_entry_of_write("", c, "p:g/f /bin/true:0x10 x=%zz\n"), "trace_uprobe: error: Invalid fetch argument | Command: p:g/f /bin/true:0x10 x=%zz | ^");
  // error_log keeps 16 entries: the oldest goes as a new one comes.
  EXPECT_EQ(error_log_entry_of_write(a + b, b + c, "p:g/f /bin/true:0x10 x=%zz"),
            "trace_uprobe: error: Invalid fetch argument | Command: p:g/f /bin/true:0x10 x=%zz | ^");
  EXPECT_EQ(error_log_entry_of_write("", "", "x"), "");
}

}  // namespace
}  // namespace vperf::tracing
