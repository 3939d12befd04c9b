#include "tracing/ftrace_buffer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/files.h"
#include "support/fake_event_fs.h"
#include "tracing/ftrace_setup.h"
#include "tracing/trace_text.h"

namespace vperf::tracing {
namespace {

// A top level laid out like tracefs, in plain files (writes replace their content, as tracefs
// files' reads show what was written, close enough for what is saved and restored).
void add_top_level(test::TempTree& tree) {
  tree.write("current_tracer", "nop\n");
  tree.write("tracing_on", "1\n");
  tree.write("trace_clock", "[local] global counter uptime perf mono\n");
  tree.write("buffer_size_kb", "1408\n");
  tree.write("set_ftrace_filter", "#### all functions enabled ####\n");
  tree.write("set_event_pid", "");
  tree.write("options/func_stack_trace", "0\n");
  tree.write("events/syscalls/sys_enter_getppid/filter", "none\n");
  tree.write("events/syscalls/sys_enter_getppid/enable", "0\n");
  tree.write("error_log", "");
  tree.write("trace", "");
}

// The top level is used only where a tracer needs it: every file vperf wrote gets back what it
// held, in the kernel's terms ("[local]" -> "local", "none" -> "0", "all functions" -> empty).
TEST(FtraceBuffer, TopLevelFilesAreRestored) {
  test::TempTree tree;
  add_top_level(tree);
  Tracefs tracefs = Tracefs::open(tree.root()).value();
  {
    FtraceBuffer top = FtraceBuffer::top_level(tracefs);
    FtraceSettings settings;
    settings.clock = "global";
    settings.buffer_kb = 4096;
    settings.options = {"func_stack_trace"};
    settings.event_filter = "common_pid == 7";
    ASSERT_TRUE(apply_settings(top, settings, {{"syscalls", "sys_enter_getppid"}}).ok());
    EXPECT_EQ(read_file(tree.root() / "trace_clock").value(), "global");
    EXPECT_EQ(read_file(tree.root() / "events/syscalls/sys_enter_getppid/enable").value(), "1");
    EXPECT_EQ(read_file(tree.root() / "tracing_on").value(), "0");
    ASSERT_TRUE(top.release().ok());
  }
  EXPECT_EQ(read_file(tree.root() / "trace_clock").value(), "local");
  EXPECT_EQ(read_file(tree.root() / "buffer_size_kb").value(), "1408");
  EXPECT_EQ(read_file(tree.root() / "options/func_stack_trace").value(), "0");
  EXPECT_EQ(read_file(tree.root() / "events/syscalls/sys_enter_getppid/filter").value(), "0");
  EXPECT_EQ(read_file(tree.root() / "events/syscalls/sys_enter_getppid/enable").value(), "0");
  EXPECT_EQ(read_file(tree.root() / "tracing_on").value(), "1");
}

// A filter file that shows an earlier refused write (the expression, a caret, parse_error)
// held no filter: it is given back as "0", not refused as text with newlines (reset failed).
TEST(FtraceBuffer, AFilterShowingARefusalIsRestoredAsNoFilter) {
  test::TempTree tree;
  add_top_level(tree);
  tree.write("events/syscalls/sys_enter_getppid/filter", "no_field == 1\n^\nparse_error: Field not found\n");
  Tracefs tracefs = Tracefs::open(tree.root()).value();
  {
    FtraceBuffer top = FtraceBuffer::top_level(tracefs);
    FtraceSettings settings;
    settings.event_filter = "common_pid == 7";
    ASSERT_TRUE(apply_settings(top, settings, {{"syscalls", "sys_enter_getppid"}}).ok());
    ASSERT_TRUE(top.release().ok());
  }
  EXPECT_EQ(read_file(tree.root() / "events/syscalls/sys_enter_getppid/filter").value(), "0");
}

// A private instance is made, named after the PID, and removed; a second one of the same name
// is refused with the way out; leftovers of dead vperfs are swept, other instances kept.
TEST(FtraceBuffer, PrivateInstancesComeAndGoAndLeftoversAreSwept) {
  test::TempTree tree;
  tree.write("instances/.keep", "");
  ::unlink((tree.root() / "instances/.keep").c_str());
  Tracefs tracefs = Tracefs::open(tree.root()).value();
  const std::string mine = private_instance_name(::getpid());
  {
    Result<FtraceBuffer> buffer = FtraceBuffer::create_instance(tracefs, mine);
    ASSERT_TRUE(buffer.ok()) << buffer.error().describe();
    EXPECT_TRUE(std::filesystem::is_directory(tree.root() / "instances" / mine));
    Result<FtraceBuffer> again = FtraceBuffer::create_instance(tracefs, mine);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().hint.find("vperf ftrace reset --instance " + mine), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(tree.root() / "instances" / mine)) << "removed when it goes";
  // PID 1 is init, not vperf; 2^22+1 is above any PID this kernel hands out.
  for (const char* name : {"vperf-1", "vperf-4194305", "someone-elses", "vperf-notapid"}) ::mkdir((tree.root() / "instances" / name).c_str(), 0755);
  EXPECT_EQ(remove_leftover_instances(tracefs), (std::vector<std::string>{"vperf-1", "vperf-4194305"}));
  EXPECT_EQ(list_instances(tracefs), (std::vector<std::string>{"someone-elses", "vperf-notapid"}));
}

TEST(FtraceBuffer, TheLastErrorLogEntryIsOneLine) {
  const std::string log =
      "[   12.000000] event filter parse error: error: Invalid operator\n  Command: a >< 1\n             ^\n"
      "[ 1520.382093] event filter parse error: error: Field not found\n  Command: bogus == 1\n           ^\n";
  EXPECT_EQ(last_error_log_entry(log), "event filter parse error: error: Field not found | Command: bogus == 1 | ^");
  EXPECT_EQ(last_error_log_entry(""), "");
  EXPECT_EQ(last_error_log_entry("[ 1.0 unclosed\n"), "");
}

TEST(TraceText, LinesComeWholeWhateverThePiecesAndStatsCountWhatWasLost) {
  std::vector<std::string> lines;
  TraceLineSplitter splitter([&](std::string_view line) { lines.emplace_back(line); });
  for (std::string_view piece : {"  a-1 [000] x", ": one\n  b-2", " [001] y: two\n\nla", "st"}) splitter.feed(piece);
  splitter.finish();
  EXPECT_EQ(lines, (std::vector<std::string>{"  a-1 [000] x: one", "  b-2 [001] y: two", "", "last"}));
  EXPECT_EQ(events_lost_in_cpu_stats("entries: 0\noverrun: 298044\ncommit overrun: 5\nbytes: 0\ndropped events: 6\nread events: 1956\n"), 298050u);
  EXPECT_EQ(events_lost_in_cpu_stats("overrun: many\n"), 0u);
}

// "<...>" (no saved comm yet) is named in its 16 columns; a named task, an unknown pid or a line
// of another shape stays as it is.
TEST(TraceText, UnknownTasksAreNamedInTheirColumns) {
  auto comm_of = [](int pid) -> std::optional<std::string> {
    if (pid == 1234) return "vperf-workload";
    return std::nullopt;
  };
  EXPECT_EQ(with_task_name("           <...>-1234    [001] ..... 12.5: __do_sys_getppid <-do_syscall_64", comm_of),
            "  vperf-workload-1234    [001] ..... 12.5: __do_sys_getppid <-do_syscall_64");
  EXPECT_EQ(with_task_name("           <...>-99      [001] ..... 12.5: f <-g", comm_of), "           <...>-99      [001] ..... 12.5: f <-g");
  EXPECT_EQ(with_task_name("              sh-1234    [001] ..... 12.5: f <-g", comm_of), "              sh-1234    [001] ..... 12.5: f <-g");
  EXPECT_EQ(with_task_name(" 1)   0.451 us    |  <...>-1234", comm_of), " 1)   0.451 us    |  <...>-1234");
}

TEST(FtraceSetup, CpuMasksAreTheKernelsText) {
  EXPECT_EQ(tracing_cpumask_text({0, 1}), "3");
  EXPECT_EQ(tracing_cpumask_text({1}), "2");
  EXPECT_EQ(tracing_cpumask_text({32}), "1,00000000");
  EXPECT_EQ(tracing_cpumask_text({0, 33, 70}), "40,00000002,00000001");
}

TEST(FtraceSetup, EventPatternsExpandOnceInCatalogOrderAndUnknownOnesAreOneError) {
  test::TempTree tree;
  test::add_typical_tracepoints(tree);
  TracepointCatalog catalog = TracepointCatalog::load(tree.root()).value();
  Result<std::vector<TracepointName>> events = expand_events(catalog, {"syscalls:sys_enter_*,sched:sched_switch", "syscalls:sys_enter_read", "irq"});
  ASSERT_TRUE(events.ok()) << events.error().describe();
  std::vector<std::string> names;
  for (const TracepointName& e : *events) names.push_back(e.system + ":" + e.event);
  EXPECT_EQ(names, (std::vector<std::string>{"syscalls:sys_enter_read", "syscalls:sys_enter_write", "sched:sched_switch", "irq:irq_handler_entry"}));
  Result<std::vector<TracepointName>> none = expand_events(catalog, {"nosuch:*"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().describe(), "no event matches 'nosuch:*'");
}

// perf ftrace latency's parsing and table: durations from function_graph lines into log2
// buckets (lines without a duration ignored), printed in perf 6.1's layout.
TEST(TraceText, LatencyHistogramBucketsFunctionGraphDurationsAsPerf) {
  LatencyHistogram histogram;
  for (const char* line : {"# tracer: function_graph", " 1)   0.750 us    |  __do_sys_getppid();", " 1)   4.889 us    |  do_filp_open();",
                           " 0) + 10.291 us   |  do_filp_open();", " 1) ! 1229.910 us |  }", " 1)               |  __do_sys_getppid() {",
                           " 1)   2.0 ms      |  x();"})
    histogram.add_line(line);
  EXPECT_EQ(histogram.total(), 4u);
  EXPECT_EQ(histogram.buckets()[0], 1u);   // 0.75 us
  EXPECT_EQ(histogram.buckets()[2], 1u);   // 4.889 us: log2 2.3, shown as perf 6.1 shows it, "2 - 4 us"
  EXPECT_EQ(histogram.buckets()[3], 1u);   // 10.291 us: "4 - 8 us"
  EXPECT_EQ(histogram.buckets()[10], 1u);  // 1229.9 us: "512 - 1024 us"
  const std::string table = histogram.table();
  EXPECT_TRUE(table.starts_with("#   DURATION     |      COUNT | GRAPH                                          |\n"
                                "     0 - 1    us |          1 | ###########                                    |\n"
                                "     1 - 2    us |          0 |                                                |\n"))
      << table;
  EXPECT_NE(table.find("\n   512 - 1024 us |          1 | ###########                                    |\n"), std::string::npos) << table;
  EXPECT_TRUE(table.ends_with("\n     1 - ...   s |          0 |                                                |\n")) << table;
  EXPECT_EQ(LatencyHistogram().table(), "No data found\n");
}

// A duration whose log2 no int holds (the kernel never prints one; a damaged or crafted text
// can): the last bucket, as any long duration. The fuzzer found it: "1e999" is infinite, and
// converting that to an int is undefined (x86 made it INT_MIN, then bucket 0).
TEST(TraceText, LatencyHistogramPutsAnEndlessDurationInTheLastBucket) {
  LatencyHistogram histogram;
  for (const char* line : {" 1) ! 1e999 us |  }", " 1) ! 1e30 us  |  }"}) histogram.add_line(line);
  EXPECT_EQ(histogram.total(), 2u);
  EXPECT_EQ(histogram.buckets()[LatencyHistogram::kBuckets - 1], 2u);
}

}  // namespace
}  // namespace vperf::tracing
