// vperf ftrace's function tracers, for real: this machine's kernel locks them (ftrace_test.cpp
// checks the refusal), the project's test guest (Debian's 6.1 kernel) has them all. vperf and
// vperf-workload go into the guest's initramfs and run there through the guest agent; the
// guest's trace.dat comes back to this machine, where trace-cmd 3.1.6 reports it. One guest
// serves the whole program (SharedGuest); each test leaves the guest's tracefs without instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "in_guest/shared_guest.h"
#include "support/capability.h"
#include "support/guest_rig.h"
#include "support/run_program.h"
#include "support/scratch_tmpdir.h"

namespace vperf::test {
namespace {

class FtraceGuest : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(!find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the test guest (its kernel has the function tracers)");
    ASSERT_TRUE(SharedGuest::ready()) << SharedGuest::boot_error();
  }
  void TearDown() override {
    if (!SharedGuest::guest()) return;
    EXPECT_EQ(in_guest("ls /sys/kernel/tracing/instances").out, "") << "an instance was left in the guest";
    EXPECT_EQ(in_guest("cat /sys/kernel/tracing/current_tracer").out, "nop\n");
    // A failed test's leftovers go, so that the tests after it in the shared guest start clean.
    in_guest("cd /sys/kernel/tracing && for i in instances/*; do [ -d \"$i\" ] && rmdir \"$i\"; done; echo nop > current_tracer; "
             "rmmod vperf_probe_module 2>/dev/null; true");
  }

  GuestCommandResult in_guest(const std::string& command) { return SharedGuest::run(command); }

  // A guest file, brought back through the agent as base64.
  std::string fetch(const std::string& guest_path, const std::filesystem::path& here) {
    GuestCommandResult encoded = in_guest("base64 " + guest_path);
    EXPECT_EQ(encoded.exit_code, 0) << encoded.err;
    const std::filesystem::path text = here.string() + ".b64";
    std::ofstream(text) << encoded.out;
    ProgramResult decoded = run_program({"sh", "-c", "base64 -d '" + text.string() + "' > '" + here.string() + "'"});
    EXPECT_EQ(decoded.exit_code, 0) << decoded.err;
    return here.string();
  }

  TempTree scratch_;
};

// The function tracer filtered to the syscall's kernel function (__do_sys_getppid: 6.1's
// __x64_sys_ wrappers are not traceable): N calls, N entries, the
// workload's only (set_ftrace_pid).
TEST_F(FtraceGuest, FunctionTracerCountsEachCallOfTheFilteredFunction) {
  GuestCommandResult r = in_guest("/bin/vperf ftrace -t function -T __do_sys_getppid -- /bin/vperf-workload getppid 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out, "__do_sys_getppid"), 100u) << r.out.substr(0, 3000);
  EXPECT_EQ(static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n')), 100u) << r.out.substr(0, 3000);
}

// perf ftrace's default tracer, function_graph, from the syscall's function down: each of the N
// calls opens its graph once. Debian's 6.1 offers function_graph only at the top level, so the
// run changes the machine's own files there; every one of them reads as before afterwards.
TEST_F(FtraceGuest, FunctionGraphGraphsEachCallAndTheTopLevelComesBack) {
  const std::string files =
      "cd /sys/kernel/tracing && for f in current_tracer tracing_on max_graph_depth set_graph_function set_ftrace_filter "
      "set_ftrace_pid set_event_pid trace_clock buffer_size_kb tracing_cpumask options/funcgraph-irqs options/function-fork; "
      "do echo \"$f: $(cat $f)\"; done";
  // A freshly booted kernel allocates the top-level ring buffer at its first use by anyone
  // ("7 (expanded: 1408)" until then), and that cannot be undone by anyone: the buffer is
  // expanded first, by enabling and disabling an event, so what is compared is what vperf owns.
  ASSERT_EQ(in_guest("cd /sys/kernel/tracing/events/sched/sched_switch && echo 1 > enable && echo 0 > enable").exit_code, 0);
  const GuestCommandResult before = in_guest(files);
  ASSERT_EQ(before.exit_code, 0) << before.err;
  // -T as well as -G: only the one function is patched. A graph of everything below it patches
  // every traceable call site, which under QEMU 7.2's thread-per-vCPU TCG livelocked the guest
  // in 6 of 15 runs (a vCPU trapping forever on an int3 its stale translation still held, the
  // other waiting for it in text_poke_bp_batch or stuck the same way); the test guest now runs
  // single-threaded TCG (RunningGuest::boot's patches_kernel_text): 0 of 15.
  GuestCommandResult r = in_guest(
      "/bin/vperf ftrace -T __do_sys_getppid -G __do_sys_getppid --graph-opts depth=3,noirqs -- /bin/vperf-workload getppid 50");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("only in the top-level buffer"), std::string::npos) << "6.1 has no function_graph in instances: " << r.err;
  EXPECT_EQ(count_lines_with(r.out, "__do_sys_getppid() {") + count_lines_with(r.out, "__do_sys_getppid();"), 50u) << r.out.substr(0, 3000);
  EXPECT_EQ(in_guest(files).out, before.out);
}

// perf ftrace latency's histogram, from function_graph: the N calls are N durations, counted
// once each across the rows.
TEST_F(FtraceGuest, LatencyHistogramCountsEachCall) {
  GuestCommandResult r = in_guest("/bin/vperf ftrace latency -T __do_sys_getppid -- /bin/vperf-workload getppid 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.out.starts_with("#   DURATION     |      COUNT | GRAPH")) << r.out;
  uint64_t total = 0;
  size_t rows = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) continue;
    const size_t bar = line.find(" | ");
    ASSERT_NE(bar, std::string::npos) << line;
    total += std::stoull(line.substr(bar + 3));
    ++rows;
  }
  EXPECT_EQ(rows, 22u);
  EXPECT_EQ(total, 100u) << r.out;
}

// A function trigger: traceoff on the first call of the function stops the buffer there.
TEST_F(FtraceGuest, FunctionTraceoffTriggerStopsAtTheFirstCall) {
  GuestCommandResult r = in_guest(
      "/bin/vperf ftrace -t function -T __do_sys_getppid -T '__do_sys_getppid:traceoff' -- /bin/vperf-workload getppid 40");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out, "__do_sys_getppid"), 1u) << r.out;
}

// trace-cmd report reads a function trace recorded in the guest the way vperf ftrace report
// does, line for line: function events printed through libtraceevent's function plugin, with
// kallsyms from the file.
TEST_F(FtraceGuest, RecordedFunctionTraceIsReadByTraceCmdLineForLine) {
  if (run_program({"trace-cmd", "--version"}).exit_code < 0) GTEST_SKIP() << "needs trace-cmd (apt-get install trace-cmd)";
  GuestCommandResult recorded =
      in_guest("/bin/vperf ftrace record -p function -l __do_sys_getppid -o /tmp/f.dat -- /bin/vperf-workload getppid 30");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const std::string file = fetch("/tmp/f.dat", scratch_.root() / "f.dat");
  ProgramResult theirs = run_program({"trace-cmd", "report", file});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  ProgramResult mine = run_vperf({"ftrace", "report", file});
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_EQ(mine.out, theirs.out);
  EXPECT_EQ(count_lines_with(mine.out, " function: "), 30u) << mine.out.substr(0, 3000);
  EXPECT_EQ(count_lines_with(mine.out, "__do_sys_getppid"), 30u);
  // The guest has no libtraceevent plugins, so there the kernel's own print fmt is used (no
  // "<-- parent"); the same events all the same.
  GuestCommandResult in_guest_report = in_guest("/bin/vperf ftrace report -i /tmp/f.dat");
  EXPECT_EQ(count_lines_with(in_guest_report.out, " function: "), 30u) << in_guest_report.out << in_guest_report.err;
}

// A flame graph of function_graph durations (vperf flamegraph -i trace.dat): each call's path
// weighted by its self time. N getppid calls graphed with one callee give exactly two paths and
// 2N calls, and the weights add up to the root calls' durations, exactly, as trace-cmd report -R
// reads calltime and rettime from the same file.
TEST_F(FtraceGuest, FunctionGraphDurationsFoldIntoAFlameGraph) {
  if (run_program({"trace-cmd", "--version"}).exit_code < 0) GTEST_SKIP() << "needs trace-cmd (apt-get install trace-cmd)";
  GuestCommandResult recorded = in_guest(
      "/bin/vperf ftrace record -p function_graph -g __do_sys_getppid -l __do_sys_getppid -l __task_pid_nr_ns -o /tmp/g.dat -- "
      "/bin/vperf-workload getppid 20");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const std::string file = fetch("/tmp/g.dat", scratch_.root() / "g.dat");
  ProgramResult folded = run_vperf({"flamegraph", "-i", file, "--folded", "-o", "-"});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  std::map<std::string, uint64_t> paths;
  uint64_t weights = 0;
  std::istringstream lines(folded.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    paths[line.substr(0, space)] += std::stoull(line.substr(space + 1));
    weights += std::stoull(line.substr(space + 1));
  }
  EXPECT_EQ(paths.size(), 2u) << folded.out;
  EXPECT_TRUE(paths.count("vperf-workload;__do_sys_getppid_[k]")) << folded.out;
  EXPECT_TRUE(paths.count("vperf-workload;__do_sys_getppid_[k];__task_pid_nr_ns_[k]")) << folded.out;

  ProgramResult raw = run_program({"trace-cmd", "report", "-R", file});
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  uint64_t roots = 0;
  size_t exits = 0;
  std::istringstream events(raw.out);
  auto field = [](const std::string& line, const std::string& name) {
    const size_t at = line.find(" " + name + "=");
    return at == std::string::npos ? std::string() : line.substr(at + name.size() + 2, line.find(' ', at + 1) - at - name.size() - 2);
  };
  for (std::string line; std::getline(events, line);) {
    if (line.find(" funcgraph_exit: ") == std::string::npos) continue;
    ++exits;
    // trace-cmd prints the print fmt's %llx: hexadecimal without 0x.
    if (field(line, "depth") == "0") roots += std::stoull(field(line, "rettime"), nullptr, 16) - std::stoull(field(line, "calltime"), nullptr, 16);
  }
  EXPECT_EQ(exits, 40u) << raw.out.substr(0, 3000);
  EXPECT_GT(roots, 0u);
  EXPECT_EQ(weights, roots) << folded.out << raw.out.substr(0, 2000);
}

// A function filter by module (set_ftrace_filter's ":mod:"): with the test module loaded, writing
// N to its calls file runs calls_write once and vperf_probe_module_target N times, and the trace
// holds exactly those and nothing of the rest of the kernel.
TEST_F(FtraceGuest, ModuleFilterTracesTheModulesFunctionsOnly) {
  VPERF_REQUIRE(SharedGuest::module().ok(), "the test module: " + SharedGuest::module().error().describe());
  ASSERT_EQ(in_guest("insmod /lib/vperf-test/vperf_probe_module.ko").exit_code, 0);
  GuestCommandResult r = in_guest(
      "/bin/vperf ftrace -t function -T ':mod:vperf_probe_module' -- /bin/sh -c 'echo 25 >/sys/kernel/debug/vperf_probe_module/calls'");
  EXPECT_EQ(in_guest("rmmod vperf_probe_module").exit_code, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out, " vperf_probe_module_target <-calls_write"), 25u) << r.out;
  EXPECT_EQ(count_lines_with(r.out, " calls_write <-"), 1u) << r.out;
  EXPECT_EQ(static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n')), 26u) << r.out;
}

// What differs between two runs of one command: the timestamps, the pid (and so the padding
// after the task), the CPU. Everything else of a trace line must be the same.
std::string without_run_details(const std::string& trace) {
  std::string out;
  std::istringstream in(trace);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) continue;
    line = std::regex_replace(line, std::regex(R"([0-9]+\.[0-9]+:)"), "TIME:");
    line = std::regex_replace(line, std::regex(R"(-[0-9]+(\s+)\[)"), "-PID [");
    line = std::regex_replace(line, std::regex(R"(\[[0-9]{3}\])"), "[CPU]");
    line = std::regex_replace(line, std::regex(R"(\s+)"), " ");
    out += line + "\n";
  }
  return out;
}

// perf ftrace 6.1 (in the guest, with its libraries) and vperf ftrace print the same lines for
// the same filtered run, but for timestamps, pids and CPUs: the function tracer, and perf's
// default function_graph with durations masked too.
TEST_F(FtraceGuest, TraceLinesAreWhatPerfFtracePrints) {
  VPERF_REQUIRE(SharedGuest::has_perf(), "perf 6.1 in the guest (linux-perf on this machine)");
  const std::string function = "-t function -T __do_sys_getppid -- /bin/vperf-workload getppid 20";
  GuestCommandResult perf = in_guest("/lib/vperf-test/perf ftrace " + function);
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  GuestCommandResult mine = in_guest("/bin/vperf ftrace " + function);
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_EQ(count_lines_with(perf.out, "__do_sys_getppid"), 20u) << perf.out;
  // The kernel prints a task whose comm it has not saved yet (it ran and was read before its
  // first switch-out) as "<...>", in perf's output as it comes; vperf names it. Only the
  // workload is traced, so that is its name.
  EXPECT_EQ(mine.out.find("<...>"), std::string::npos) << mine.out;
  EXPECT_EQ(without_run_details(mine.out), std::regex_replace(without_run_details(perf.out), std::regex(R"(<\.\.\.>-PID)"), "vperf-workload-PID"));

  const std::string graph = "-G __do_sys_getppid -T __do_sys_getppid -- /bin/vperf-workload getppid 10";
  GuestCommandResult perf_graph = in_guest("/lib/vperf-test/perf ftrace " + graph);
  ASSERT_EQ(perf_graph.exit_code, 0) << perf_graph.err;
  GuestCommandResult mine_graph = in_guest("/bin/vperf ftrace " + graph);
  ASSERT_EQ(mine_graph.exit_code, 0) << mine_graph.err;
  // function_graph lines start with the CPU ("1) "), and a duration carries a mark of its size
  // ("!" over 100 us): both vary from run to run.
  // A leaf call prints as "func();" when its entry and exit are read together, and as
  // "func() {" then "}" when the reader took the entry first: the kernel's timing, either tool.
  auto masked = [](const std::string& text) {
    std::string out = std::regex_replace(without_run_details(text), std::regex(R"((^|\n) ?[0-9]+\))"), "$1CPU)");
    out = std::regex_replace(out, std::regex(R"(([!+#*@$] )?[0-9]+\.[0-9]+ us)"), "D us");
    return std::regex_replace(out, std::regex(R"(CPU\) \| ([A-Za-z0-9_.]+)\(\) \{\nCPU\) D us \| \}\n)"), "CPU) D us | $1();\n");
  };
  EXPECT_EQ(masked(mine_graph.out), masked(perf_graph.out)) << perf_graph.out;
}

}  // namespace
}  // namespace vperf::test
