// vperf ftrace on this machine's tracefs: exact counts from vperf-workload's getppid calls, the
// live trace, trace.dat read back by trace-cmd 3.1.6 report (the oracle) line for line, filters
// and triggers, the function tracers refused in one line where the kernel locks them, and
// tracefs as it was before every test, after SIGINT/SIGTERM and (once the next command has run)
// after SIGKILL. The function tracers themselves run in the test guest (ftrace_guest_test.cpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "support/background.h"
#include "support/processes.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

const std::filesystem::path kTracefs = "/sys/kernel/tracing";

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Everything a vperf ftrace run could change at the top level (each settings file, the enabled
// events, the getppid event's filter and trigger) and the list of instances. Buffers' contents
// and counters (trace, per_cpu, saved_cmdlines) are data, not state.
std::map<std::string, std::string> tracefs_state() {
  static const std::vector<std::string> kVolatile = {"trace", "trace_pipe", "trace_marker", "trace_marker_raw", "per_cpu", "saved_cmdlines",
                                                     "saved_tgids", "free_buffer", "available_filter_functions", "available_filter_functions_addrs",
                                                     "touched_functions", "enabled_functions", "dyn_ftrace_total_info", "snapshot", "error_log",
                                                     "README", "printk_formats", "buffer_total_size_kb", "uprobe_profile", "kprobe_profile"};
  std::map<std::string, std::string> state;
  for (const auto& entry : std::filesystem::directory_iterator(kTracefs)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || std::find(kVolatile.begin(), kVolatile.end(), name) != kVolatile.end()) continue;
    state[name] = slurp(entry.path());
  }
  for (const auto& entry : std::filesystem::directory_iterator(kTracefs / "options")) state["options/" + entry.path().filename().string()] = slurp(entry.path());
  for (const char* file : {"filter", "trigger", "enable"})
    state[std::string("events/syscalls/sys_enter_getppid/") + file] = slurp(kTracefs / "events/syscalls/sys_enter_getppid" / file);
  // A vperf-PID instance whose vperf still runs is another run's, not one left behind: the
  // tests wait for every vperf they start (a benchmark's vperf ftrace record beside a full run
  // made one appear in the middle of a test).
  std::string instances;
  for (const auto& entry : std::filesystem::directory_iterator(kTracefs / "instances")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("vperf-") && name.find_first_not_of("0123456789", 6) == std::string::npos && name.size() > 6 &&
        std::filesystem::exists("/proc/" + name.substr(6)))
      continue;
    instances += name + " ";
  }
  state["instances/"] = instances;
  return state;
}

std::string_view trim_newline(std::string_view text) { return text.substr(0, text.find('\n')); }

// Runs vperf-workload getppid N and returns its pid, so that a trace's lines of this run can be
// told from other tests' getppid calls meanwhile. The shell that execs it calls getppid once
// too, under the same pid: a run that counts must filter on comm (kWorkloadOnly).
std::string workload_calling_getppid(int n) {
  ProgramResult workload = run_program({"sh", "-c", std::string("echo $$; exec ") + VPERF_WORKLOAD + " getppid " + std::to_string(n)});
  EXPECT_EQ(workload.exit_code, 0) << workload.err;
  return workload.out.substr(0, workload.out.find('\n'));
}
const char* const kWorkloadOnly = "comm == \"vperf-workload\"";

// vperf ftrace report of `file` (as `-i FILE` when `with_i`), checked against what trace-cmd 3.1.6
// report prints for it, line for line, where trace-cmd is installed.
ProgramResult report_as_trace_cmd_does(const std::string& file, bool with_i = false) {
  ProgramResult mine = with_i ? run_vperf({"ftrace", "report", "-i", file}) : run_vperf({"ftrace", "report", file});
  EXPECT_EQ(mine.exit_code, 0) << mine.err;
  if (run_program({"trace-cmd", "--version"}).exit_code >= 0) {
    ProgramResult theirs = run_program({"trace-cmd", "report", file});
    EXPECT_EQ(theirs.exit_code, 0) << theirs.err;
    EXPECT_EQ(mine.out, theirs.out) << file;
  }
  return mine;
}

// A run's instance is ready once its event is enabled and then tracing is on: a new instance
// starts with tracing on, and vperf turns it off until its settings are in. Read in that order,
// the two say the settings are done.
bool instance_tracing(const std::filesystem::path& instance) {
  return slurp(instance / "events/syscalls/sys_enter_getppid/enable") == "1\n" && slurp(instance / "tracing_on") == "1\n";
}

bool has_tracefs_instances() {
  struct stat st{};
  return ::geteuid() == 0 && ::stat((kTracefs / "instances").c_str(), &st) == 0 &&
         ::stat((kTracefs / "events/syscalls/sys_enter_getppid").c_str(), &st) == 0;
}

bool function_tracing_allowed() {
  std::ifstream in(kTracefs / "available_filter_functions");
  char c;
  return in.good() && static_cast<bool>(in.get(c));
}

// A freshly booted kernel allocates the top-level ring buffer at the first enabling of an event
// by anyone, in any instance (buffer_size_kb reads "7 (expanded: 1408)" until then, the real
// size after), and nobody can undo that. The first test of a fresh machine (a CI run's) would
// see it as a change it made: the buffer is expanded before the state is taken, the same way,
// in an instance of the test's own, so what is compared is what vperf owns.
void expand_top_level_buffer() {
  if (slurp(kTracefs / "buffer_size_kb").find("(expanded:") == std::string::npos) return;
  const std::filesystem::path instance = kTracefs / "instances" / ("vperf-test-expand-" + std::to_string(::getpid()));
  std::error_code ec;
  std::filesystem::create_directory(instance, ec);
  std::ofstream(instance / "events/sched/sched_switch/enable") << "1";
  std::ofstream(instance / "events/sched/sched_switch/enable") << "0";
  std::filesystem::remove(instance, ec);
}

// Every test leaves tracefs as it found it.
class Ftrace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_tracefs_instances()) GTEST_SKIP() << "needs root, tracefs instances and the syscalls events";
    expand_top_level_buffer();
    before_ = tracefs_state();
    dir_ = std::filesystem::temp_directory_path() / ("vperf-ftrace-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (before_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    const std::map<std::string, std::string> after = tracefs_state();
    for (const auto& [file, text] : before_) EXPECT_EQ(after.at(file), text) << file << " changed";
    EXPECT_EQ(after.size(), before_.size());
  }
  std::map<std::string, std::string> before_;
  std::filesystem::path dir_;
};

// perf ftrace's way: the live trace of the workload's own task, exactly one line per call.
TEST_F(Ftrace, LiveEventTraceShowsEveryCallOfTheWorkload) {
  ProgramResult r = run_vperf({"ftrace", "-e", "syscalls:sys_enter_getppid", "--", VPERF_WORKLOAD, "getppid", "1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out, ": sys_getppid()"), 1000u) << r.out.substr(0, 2000);
  EXPECT_EQ(static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n')), 1000u) << "only the workload's events: " << r.out.substr(0, 2000);
}

// The command lines perf ftrace and trace-cmd record take: the command without "--", after
// several -e (a list option that took every following word used to swallow it: "no event
// matches 'vperf-workload'"), and an option's value that looks like a command word stays the
// option's.
TEST_F(Ftrace, TheCommandNeedsNoSeparator) {
  ProgramResult live = run_vperf({"ftrace", "-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid", VPERF_WORKLOAD,
                                  "getppid", "100"});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  EXPECT_EQ(count_lines_with(live.out, ": sys_getppid()"), 100u) << live.out.substr(0, 2000);
  EXPECT_EQ(count_lines_with(live.out, "sys_getppid ->"), 100u) << live.out.substr(0, 2000);
  const std::string file = (dir_ / "no-separator.dat").string();
  ProgramResult recorded = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", file, VPERF_WORKLOAD, "getppid", "200"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  ProgramResult report = run_vperf({"ftrace", "report", "-i", file});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(count_lines_with(report.out, "sys_enter_getppid:"), 200u) << report.out.substr(0, 2000);
  // An unknown option before the command is still an option error, not a command to run.
  ProgramResult unknown = run_vperf({"ftrace", "-e", "syscalls:sys_enter_getppid", "--no-such-option", VPERF_WORKLOAD, "getppid", "1"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("--no-such-option"), std::string::npos) << unknown.err;
}

// trace-cmd record's way: a trace.dat (version 6, 7 with --file-version 7, and 7 compressed
// with zstd as trace-cmd compresses by default) that trace-cmd report reads, printing exactly
// what vperf ftrace report prints, with exactly N events of the workload's pid.
TEST_F(Ftrace, RecordedTraceDatIsReadByTraceCmdLineForLine) {
  if (run_program({"trace-cmd", "--version"}).exit_code < 0) GTEST_SKIP() << "needs trace-cmd (apt-get install trace-cmd)";
  std::map<std::string, uintmax_t> sizes;
  for (const auto& [version, compression] : std::vector<std::pair<std::string, std::string>>{{"6", "none"}, {"7", "none"}, {"7", "zstd"}}) {
    SCOPED_TRACE("--file-version " + version + " --compression " + compression);
    const std::string file = (dir_ / ("getppid-v" + version + "-" + compression + ".dat")).string();
    std::vector<std::string> argv = {"ftrace", "record", "--file-version", version, "-e", "syscalls:sys_enter_getppid", "-o", file};
    if (version == "7") argv.insert(argv.end(), {"--compression", compression});
    argv.insert(argv.end(), {"--", VPERF_WORKLOAD, "getppid", "1000"});
    ProgramResult recorded = run_vperf(argv);
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
    sizes[version + compression] = std::filesystem::file_size(file);
    ProgramResult dump = run_program({"trace-cmd", "dump", "--summary", "-i", file});
    EXPECT_NE(dump.out.find("\t\t" + version + "\t[Version]"), std::string::npos) << dump.out << dump.err;
    if (compression == "zstd") {
      EXPECT_NE(dump.out.find("\t\tzstd\t[Compression algorithm]"), std::string::npos) << dump.out << dump.err;
    }
    ProgramResult mine = report_as_trace_cmd_does(file, true);
    EXPECT_EQ(count_lines_with(mine.out, " sys_enter_getppid: "), 1000u) << mine.out.substr(0, 2000);
    EXPECT_EQ(count_lines_with(mine.out, "vperf-workload-"), 1000u) << "every event is the workload's";
    EXPECT_EQ(mine.out.find("EVENTS DROPPED"), std::string::npos);
  }
  EXPECT_LT(sizes["7zstd"] * 3, sizes["7none"]) << "kallsyms and the pages compress";
}

// trace-cmd's own files, as trace-cmd 3.1.6 writes them: `trace-cmd extract -B` turns a
// prepared instance into a version 7 file (zstd-compressed sections and data), and trace-cmd
// convert makes an uncompressed one and a version 6 one; vperf ftrace report prints each as
// trace-cmd report does, with exactly the workload's N calls.
TEST_F(Ftrace, TraceCmdsOwnFilesReadAsTraceCmdReadsThem) {
  if (run_program({"trace-cmd", "--version"}).exit_code < 0) GTEST_SKIP() << "needs trace-cmd";
  const std::string name = "vperf-test-extract-" + std::to_string(::getpid());
  const std::filesystem::path instance = kTracefs / "instances" / name;
  std::filesystem::create_directory(instance);
  // Only this test's process and what it forks: the instance sees every task, and other tests
  // running beside it call getppid too.
  std::ofstream(instance / "options/event-fork") << "1";
  std::ofstream(instance / "set_event_pid") << ::getpid();
  std::ofstream(instance / "events/syscalls/sys_enter_getppid/enable") << "1";
  std::ofstream(instance / "events/sched/sched_switch/enable") << "1";
  std::ofstream(instance / "events/syscalls/sys_enter_getppid/trigger") << "stacktrace";
  ASSERT_EQ(run_program({VPERF_WORKLOAD, "getppid", "200"}).exit_code, 0);
  std::ofstream(instance / "tracing_on") << "0";
  const std::string v7 = (dir_ / "v7.dat").string(), plain = (dir_ / "plain.dat").string(), v6 = (dir_ / "v6.dat").string();
  ProgramResult extracted = run_program({"trace-cmd", "extract", "-B", name, "-o", v7});
  std::error_code ec;
  if (std::filesystem::exists(instance, ec)) {  // trace-cmd extract removes it; in case it did not
    std::ofstream(instance / "events/syscalls/sys_enter_getppid/trigger") << "!stacktrace";
    std::filesystem::remove(instance, ec);
  }
  ASSERT_EQ(extracted.exit_code, 0) << extracted.err;
  ASSERT_EQ(run_program({"trace-cmd", "convert", "--compression", "none", "-i", v7, "-o", plain}).exit_code, 0);
  ASSERT_EQ(run_program({"trace-cmd", "convert", "--file-version", "6", "-i", v7, "-o", v6}).exit_code, 0);
  // trace-cmd 3.1.6 extract -B also takes the top-level buffer (its -t is documented to add
  // it, but it is there without): what earlier tests left there (one full run had 25 getppid
  // calls of another test's workload) comes along, printed without a buffer prefix. The
  // instance's lines are those prefixed with its name.
  for (const std::string& file : {v7, plain, v6}) {
    SCOPED_TRACE(file);
    ProgramResult mine = report_as_trace_cmd_does(file);
    size_t own_calls = 0, own_stacks = 0;
    std::istringstream lines(mine.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with(name + ":")) continue;
      own_calls += line.find(" sys_enter_getppid: ") != std::string::npos;
      own_stacks += line.find(" kernel_stack: ") != std::string::npos;
    }
    EXPECT_EQ(own_calls, 200u) << mine.out.substr(0, 2000);
    EXPECT_EQ(own_stacks, 200u);
  }
}

// Loss is counted, never silent: a 300000-call storm into a one-page buffer per CPU loses
// events, and what the file holds plus what the ring buffer says it lost is exactly 300000.
// The report marks the gaps (trace-cmd's "EVENTS DROPPED" lines, the same as trace-cmd
// prints) and says on stderr that counts are lower bounds.
TEST_F(Ftrace, LostEventsAreCountedExactlyAndMarked) {
  const std::string file = (dir_ / "storm.dat").string();
  ProgramResult recorded = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-b", "4", "-o", file, "--", VPERF_WORKLOAD, "getppid", "300000"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  uint64_t lost = 0;
  std::istringstream err(recorded.err);
  for (std::string line; std::getline(err, line);)
    if (line.starts_with("CPU") && line.find(" events lost") != std::string::npos)
      lost += std::stoull(line.substr(line.find("recorded, ") + 10));
  EXPECT_NE(recorded.err.find("warning: CPU"), std::string::npos) << recorded.err;
  ProgramResult mine = report_as_trace_cmd_does(file);
  const size_t kept = count_lines_with(mine.out, " sys_enter_getppid: ");
  EXPECT_GT(lost, 0u) << "one page per CPU cannot keep up with 300000 events";
  EXPECT_EQ(kept + lost, 300000u) << kept << " kept, " << lost << " lost";
  EXPECT_GT(count_lines_with(mine.out, "EVENTS DROPPED]"), 0u);
  // report names each CPU's loss, from the file's stats: the same total as record's (the
  // workload may have run on both CPUs).
  uint64_t reported = 0;
  std::istringstream report_err(mine.err);
  for (std::string line; std::getline(report_err, line);)
    if (const size_t at = line.find(" lost "); at != std::string::npos && line.find(" events (") != std::string::npos)
      reported += std::stoull(line.substr(at + 6));
  EXPECT_EQ(reported, lost) << mine.err;
  EXPECT_NE(mine.err.find("lower bounds"), std::string::npos) << mine.err;
}

// A stacktrace trigger adds ftrace's kernel_stack events, whose addresses trace-cmd resolves
// through the file's kallsyms: both print the same frames.
TEST_F(Ftrace, StackTraceTriggersPrintTheSameFramesAsTraceCmd) {
  if (run_program({"trace-cmd", "--version"}).exit_code < 0) GTEST_SKIP() << "needs trace-cmd";
  const std::string file = (dir_ / "stacks.dat").string();
  ProgramResult recorded = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "--trigger", "stacktrace", "-o", file, "--",
                                      VPERF_WORKLOAD, "getppid", "20"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  ProgramResult mine = report_as_trace_cmd_does(file);
  EXPECT_EQ(count_lines_with(mine.out, " kernel_stack: "), 20u);
  EXPECT_EQ(count_lines_with(mine.out, "=> do_syscall_64 ("), 20u) << mine.out.substr(0, 2000);

  // The same stacks as a flame graph's folded lines: trace-cmd's frames of the first stack,
  // outermost first, 20 times (every call took the same path).
  std::vector<std::string> frames;
  std::istringstream report(mine.out);  // trace-cmd's, as report_as_trace_cmd_does checked
  bool in_stack = false;
  for (std::string line; std::getline(report, line);) {
    if (line.find(" kernel_stack: ") != std::string::npos) {
      if (in_stack) break;
      in_stack = true;
      continue;
    }
    if (in_stack && line.starts_with("=> ")) frames.insert(frames.begin(), line.substr(3, line.find(" (") - 3) + "_[k]");
    else if (in_stack) break;
  }
  ASSERT_FALSE(frames.empty()) << mine.out.substr(0, 2000);
  std::string expected = "vperf-workload";
  for (const std::string& frame : frames) expected += ";" + frame;
  ProgramResult folded = run_vperf({"flamegraph", "-i", file, "--folded", "-o", "-"});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_EQ(folded.out, expected + " 20\n");
}

// The lines of a report that are events, and whether their timestamps never go back (a trace
// read to its last whole page is each CPU's events from the start, merged in time order).
bool timestamps_in_order(const std::string& report) {
  double last = 0;
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    const size_t bracket = line.find("] ");
    const size_t colon = line.find(": ", bracket);
    if (bracket == std::string::npos || colon == std::string::npos) continue;
    const double at = std::stod(line.substr(bracket + 2, colon - bracket - 2));
    if (at < last) return false;
    last = at;
  }
  return true;
}

// Live processes whose command line has `word` as an argument.
std::vector<pid_t> processes_with_argument(const std::string& word) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = slurp(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(" " + word + " ") != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

// A SIGKILLed recording leaves a trace.dat that trace-cmd and vperf read alike, for each version
// vperf writes: the pages it had taken, so some of the workload's calls and never more than it
// made, in time order, every one the workload's. vperf is killed while the workload is still
// making calls, once its file has pages on disk.
TEST_F(Ftrace, KilledRecordingLeavesATraceDatBothReadersRead) {
  if (run_program({"trace-cmd", "--version"}).exit_code < 0) GTEST_SKIP() << "needs trace-cmd";
  constexpr int kCalls = 100000000;  // far more than are made before the kill
  for (const auto& [version, compression] : std::vector<std::pair<std::string, std::string>>{{"6", "none"}, {"7", "none"}, {"7", "zstd"}}) {
    SCOPED_TRACE("--file-version " + version + " --compression " + compression);
    const std::string file = (dir_ / ("killed-v" + version + "-" + compression + ".dat")).string();
    std::vector<std::string> argv = {VPERF_BINARY, "ftrace", "record", "--file-version", version, "-e", "syscalls:sys_enter_getppid", "-o", file};
    if (version == "7") argv.insert(argv.end(), {"--compression", compression});
    argv.insert(argv.end(), {"--", VPERF_WORKLOAD, "getppid", std::to_string(kCalls)});
    // The same recording of a single call: its file is the head and a page. The killed run is
    // killed once its file takes 256 KiB more on disk: pages are committed after every batch of
    // at most 64 KiB (uncompressed) or every chunk (compressed: at most 1 MiB of these pages,
    // which zstd makes 20 times smaller), so some are committed by then, and the file is small
    // enough to read quickly.
    std::vector<std::string> one_call = argv;
    one_call.back() = "1";
    one_call[std::find(one_call.begin(), one_call.end(), "-o") - one_call.begin() + 1] = file + ".one";
    ProgramResult small = run_program(one_call);
    ASSERT_EQ(small.exit_code, 0) << small.err;
    const uintmax_t head_and_a_page = std::filesystem::file_size(file + ".one");
    Background vperf(argv);
    ASSERT_GT(vperf.pid(), 0);
    auto disk_used = [&] {
      struct stat st{};
      return ::stat(file.c_str(), &st) == 0 ? static_cast<uintmax_t>(st.st_blocks) * 512 : 0;
    };
    ASSERT_TRUE(wait_until([&] { return disk_used() > head_and_a_page + (256 << 10); }, std::chrono::seconds(60)))
        << "the file never grew";
    const std::vector<pid_t> workload = children_named(vperf.pid(), "vperf-workload");
    ASSERT_EQ(workload.size(), 1u) << "the workload ended before the kill";
    ::kill(vperf.pid(), SIGKILL);
    vperf.wait();
    ::kill(workload.front(), SIGKILL);
    ASSERT_TRUE(std::filesystem::exists(file)) << "a killed recording must leave its file";
    ProgramResult mine = report_as_trace_cmd_does(file);
    const size_t events = count_lines_with(mine.out, " sys_enter_getppid: ");
    EXPECT_GT(events, 0u);
    EXPECT_LE(events, static_cast<size_t>(kCalls));
    EXPECT_EQ(count_lines_with(mine.out, "vperf-workload-" + std::to_string(workload.front()) + " "), events) << mine.out.substr(0, 2000);
    EXPECT_TRUE(timestamps_in_order(mine.out));
    EXPECT_EQ(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
  run_vperf({"ftrace", "list", "-t"});  // removes the killed runs' instances, as any ftrace command does
}

// A file system that fills up mid-recording (a small tmpfs): vperf stops, keeps the whole pages
// it had written as a trace.dat both readers read, says so in one line and exits 1; nothing else
// is left in the file system, and the workload does not outlive the run. A file system without
// room for the head gets no file at all, and one line.
TEST_F(Ftrace, FullDiskKeepsAReadableTraceDatAndSaysSoInOneLine) {
  if (run_program({"trace-cmd", "--version"}).exit_code < 0) GTEST_SKIP() << "needs trace-cmd";
  // The head (tracing data with kallsyms) of a file on this machine, to size the file system.
  const std::string small = (dir_ / "small.dat").string();
  ProgramResult sized = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", small, "--", VPERF_WORKLOAD, "getppid", "1"});
  ASSERT_EQ(sized.exit_code, 0) << sized.err;
  const uintmax_t head = std::filesystem::file_size(small);
  const std::filesystem::path mounted = dir_ / "small-fs";
  std::filesystem::create_directory(mounted);
  const std::string size = std::to_string(head / 1024 + 1024) + "k";  // the head and 1 MiB of pages
  ProgramResult mount = run_program({"mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", mounted.string()});
  if (mount.exit_code != 0) GTEST_SKIP() << "cannot mount a tmpfs: " << mount.err;
  struct Unmount {
    std::filesystem::path at;
    ~Unmount() { run_program({"umount", at.string()}); }
  } unmount{mounted};
  const std::string calls = "30000001";  // about 700 MB of events: far more than fit
  const std::string file = (mounted / "trace.dat").string();
  ProgramResult r = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", file, "--", VPERF_WORKLOAD, "getppid", calls});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("the disk filled up"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("free some space"), std::string::npos) << r.err;
  EXPECT_TRUE(processes_with_argument(calls).empty()) << "the workload outlived the run";
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(mounted)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"trace.dat"});
  ProgramResult mine = report_as_trace_cmd_does(file);
  const size_t events = count_lines_with(mine.out, " sys_enter_getppid: ");
  EXPECT_GT(events, 0u);
  EXPECT_LT(events, std::stoul(calls));
  EXPECT_TRUE(timestamps_in_order(mine.out));

  // No room for even the head: one line, and no file at all.
  const std::filesystem::path tiny = dir_ / "tiny-fs";
  std::filesystem::create_directory(tiny);
  ASSERT_EQ(run_program({"mount", "-t", "tmpfs", "-o", "size=" + std::to_string(head / 2048) + "k,mode=0700", "tmpfs", tiny.string()}).exit_code, 0);
  Unmount unmount_tiny{tiny};
  ProgramResult headless = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", (tiny / "trace.dat").string(), "--", "true"});
  EXPECT_EQ(headless.exit_code, 1);
  EXPECT_EQ(std::count(headless.err.begin(), headless.err.end(), '\n'), 1) << headless.err;
  EXPECT_NE(headless.err.find("no room for even the head"), std::string::npos) << headless.err;
  EXPECT_TRUE(std::filesystem::is_empty(tiny));
}

// trace.dat holds /proc/kallsyms and the kernel's addresses: it is 0600 whatever the umask, as
// perf.data is, also where it replaces a file that was readable by all.
TEST_F(Ftrace, TraceDatIsPrivateWhateverTheUmask) {
  const std::filesystem::path file = dir_ / "private.dat";
  std::ofstream(file) << "an older, public file";
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write | std::filesystem::perms::group_read |
                                         std::filesystem::perms::others_read);
  const mode_t umask_before = ::umask(0);
  ProgramResult recorded = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", file.string(), "--", VPERF_WORKLOAD, "getppid", "10"});
  ::umask(umask_before);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  EXPECT_EQ(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ProgramResult report = run_vperf({"ftrace", "report", file.string()});
  EXPECT_EQ(count_lines_with(report.out, " sys_enter_getppid: "), 10u) << report.err;
}

// Option values that select nothing (an empty event or function name, a pid no task has, a CPU
// mask without an online CPU, an empty trigger) are refused in one line, by every command that
// takes them, before anything is made: no instance, no output file.
TEST_F(Ftrace, OptionsThatSelectNothingAreRefusedInOneLine) {
  const std::string out = (dir_ / "nothing.dat").string();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"ftrace", "-e", "", "--", "true"}, "an empty event name selects no event"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "-p", "99999999"}, "no task has the pid 99999999"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "-p", "1,99999999"}, "no task has the pid 99999999"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "-C", "4095", "--", "true"}, "selects no online CPU"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "-C", "", "--", "true"}, "selects no online CPU"},
      {{"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", out, "-M", "", "--", "true"}, "selects no online CPU"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "--trigger", "", "--", "true"}, "an empty --trigger does nothing"},
      {{"ftrace", "-T", "", "--", "true"}, "an empty function name selects no function"},
      {{"ftrace", "record", "-e", "", "-o", out, "--", "true"}, "an empty event name selects no event"},
      {{"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", out, "-P", "99999999"}, "no task has the pid 99999999"},
      {{"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", out, "-M", "0", "--", "true"}, "selects no online CPU"},
      {{"ftrace", "record", "-p", "function", "-l", "", "-o", out, "--", "true"}, "an empty function name selects no function"},
      {{"ftrace", "latency", "-T", "", "--", "true"}, "an empty function name selects no function"},
      {{"ftrace", "latency", "-T", "sys_getppid", "-p", "99999999"}, "no task has the pid 99999999"},
      {{"ftrace", "start", "--instance", "vperf-test-nothing", "-e", ""}, "an empty event name selects no event"},
      {{"ftrace", "start", "--instance", "vperf-test-nothing", "-e", "syscalls:sys_enter_getppid", "-T", ""}, "an empty function name selects no function"},
  };
  for (const Case& c : cases) {
    ProgramResult r = run_vperf(c.args);
    std::string shown;
    for (const std::string& a : c.args) shown += "'" + a + "' ";
    EXPECT_EQ(r.exit_code, 1) << shown;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << shown << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << shown << r.err;
    EXPECT_EQ(r.out, "") << shown;
    EXPECT_FALSE(std::filesystem::exists(out)) << shown;
    EXPECT_FALSE(std::filesystem::exists(kTracefs / "instances/vperf-test-nothing")) << shown;
  }
}

// An event filter keeps exactly the workload's calls while another task makes the same call;
// a traceoff trigger stops the buffer at the first hit.
TEST_F(Ftrace, EventFilterAndTraceoffTriggerBehaveExactly) {
  HeldChild workload({VPERF_WORKLOAD, "getppid", "300"});
  HeldChild noise({VPERF_WORKLOAD, "getppid", "20000"});
  ASSERT_GT(workload.pid(), 0);
  const std::string file = (dir_ / "filtered.dat").string();
  Background recording({VPERF_BINARY, "ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-f",
                        "common_pid == " + std::to_string(workload.pid()), "-o", file, "-P",
                        std::to_string(workload.pid()) + "," + std::to_string(noise.pid())});
  const std::string instance = "vperf-" + std::to_string(recording.pid());
  ASSERT_TRUE(wait_until([&] { return instance_tracing(kTracefs / "instances" / instance); }, std::chrono::seconds(20)))
      << "the recording never started";
  noise.release();
  workload.release();
  EXPECT_EQ(workload.wait(), 0);
  EXPECT_EQ(noise.wait(), 0);
  ProgramResult ended = recording.wait();
  ASSERT_EQ(ended.exit_code, 0) << ended.err;
  ProgramResult report = run_vperf({"ftrace", "report", file});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(count_lines_with(report.out, " sys_enter_getppid: "), 300u);
  EXPECT_EQ(count_lines_with(report.out, "-" + std::to_string(workload.pid()) + " "), 300u);

  ProgramResult stopped = run_vperf({"ftrace", "-e", "syscalls:sys_enter_getppid", "--trigger", "traceoff", "--", VPERF_WORKLOAD, "getppid", "50"});
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(count_lines_with(stopped.out, ": sys_getppid()"), 1u) << stopped.out;
}

// Where the kernel locks the function tracers (this machine: EPERM on
// available_filter_functions), each way of asking for them is one line naming the locked file,
// never an empty trace; and nothing is left behind.
TEST_F(Ftrace, LockedFunctionTracersAreRefusedInOneLine) {
  if (function_tracing_allowed()) GTEST_SKIP() << "this kernel allows function tracing (the guest tests cover it)";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"ftrace", "--", "true"},
           {"ftrace", "-t", "function", "--", "true"},
           {"ftrace", "-e", "syscalls:sys_enter_getppid", "-T", "sys_getppid", "--", "true"},
           {"ftrace", "record", "-p", "function_graph", "-o", (dir_ / "f.dat").string(), "--", "true"},
           {"ftrace", "-F"},
           {"ftrace", "latency", "-T", "sys_getppid", "--", "true"},
           {"ftrace", "list", "-f"}}) {
    ProgramResult r = run_vperf(args);
    EXPECT_EQ(r.exit_code, 1) << args[1];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("available_filter_functions"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// Bad input: one line with a hint, exit 1 (2 for usage), tracefs untouched.
TEST_F(Ftrace, BadInputIsOneLineAndChangesNothing) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"ftrace", "-e", "nosuch:event", "--", "true"}, "no event matches 'nosuch:event'"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "--filter", "bogus == 1", "--", "true"}, "Field not found"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "--trigger", "frobnicate", "--", "true"}, "trigger"},
      {{"ftrace", "-t", "nosuchtracer", "--", "true"}, "no 'nosuchtracer' tracer"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "-O", "nosuchoption", "--", "true"}, "no trace option"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "--clock", "sundial", "--", "true"}, "trace_clock"},
      {{"ftrace", "-e", "syscalls:sys_enter_getppid", "--", "/nonexistent/program"}, "cannot run"},
      {{"ftrace", "report", "-i", "/nonexistent.dat"}, "/nonexistent.dat"},
      {{"ftrace", "stop", "--instance", "vperf-test-none"}, "no ftrace instance 'vperf-test-none'"},
  };
  for (const Case& c : cases) {
    ProgramResult r = run_vperf(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args[1];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

// Inline probes in -e work as in stat: the uprobe exists while the run does, then goes with
// the instance (the instance first: its enabled event holds the probe).
TEST_F(Ftrace, InlineUprobesTraceExactlyAndGoAway) {
  if (!std::filesystem::exists(kTracefs / "uprobe_events")) GTEST_SKIP() << "needs uprobes";
  ProgramResult r = run_vperf({"ftrace", "-e", std::string("uprobe:") + VPERF_WORKLOAD + ":probe_target", "--", VPERF_WORKLOAD, "probe-calls", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out, ": probe_target: ("), 40u) << r.out.substr(0, 2000);
}

// A trace clock changes the timestamps' unit: with "counter" both vperf and trace-cmd print the
// raw count ("%12d:"), in order; -C limits tracing to a CPU (the workload runs on another
// under taskset: nothing is traced).
TEST_F(Ftrace, ClockAndCpuMaskShapeTheTrace) {
  const std::string file = (dir_ / "counter.dat").string();
  ProgramResult recorded = run_vperf({"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-C", "counter", "-o", file, "--", VPERF_WORKLOAD, "getppid", "10"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  ProgramResult mine = report_as_trace_cmd_does(file);
  EXPECT_EQ(count_lines_with(mine.out, " sys_enter_getppid: "), 10u);
  EXPECT_EQ(mine.out.find(". "), std::string::npos) << "no seconds.micros with the counter clock: " << mine.out;
  if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
  ProgramResult elsewhere = run_vperf({"ftrace", "-a", "-C", "0", "-e", "syscalls:sys_enter_getppid", "--", "taskset", "-c", "1", VPERF_WORKLOAD, "getppid", "20"});
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  EXPECT_EQ(count_lines_with(elsewhere.out, "vperf-workload"), 0u) << elsewhere.out;
  ProgramResult here = run_vperf({"ftrace", "-C", "1", "-e", "syscalls:sys_enter_getppid", "--", "taskset", "-c", "1", VPERF_WORKLOAD, "getppid", "20"});
  ASSERT_EQ(here.exit_code, 0) << here.err;
  EXPECT_EQ(count_lines_with(here.out, ": sys_getppid()"), 20u) << here.out;
}

// Wherever tracefs is mounted (tracefs only, systemd's both places, only below debugfs) the
// same run counts the same; with none, one line says how to mount it. Private mount
// namespaces (tests/mount_states/in_mount_state.sh) make the states; the instances are the one
// kernel's, so these run here, under the lock, not with the other mount-state tests.
TEST_F(Ftrace, WorksWhereverTracefsIsMounted) {
  const std::string script = std::string(VPERF_SOURCE_DIR) + "/tests/mount_states/in_mount_state.sh";
  ProgramResult probe = run_program({script, "none", "true"});
  if (probe.exit_code == 77) GTEST_SKIP() << probe.err;
  for (const std::string state : {"tracefs-only", "systemd", "debugfs-only", "none"}) {
    SCOPED_TRACE(state);
    ProgramResult r = run_program({script, state, VPERF_BINARY, "ftrace", "-e", "syscalls:sys_enter_getppid", "--", VPERF_WORKLOAD, "getppid", "55"});
    if (state == "none") {
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find("mount -t tracefs"), std::string::npos) << r.err;
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count_lines_with(r.out, ": sys_getppid()"), 55u);
  }
}

// Without root, tracefs (mode 0700 here) is one line with the fix, for ftrace and for the other
// users of tracefs; report needs no tracefs and works.
TEST_F(Ftrace, WithoutRootItIsOneLine) {
  if (run_program({"setpriv", "--version"}).exit_code != 0) GTEST_SKIP() << "needs setpriv (util-linux)";
  struct stat st{};
  ASSERT_EQ(::stat(kTracefs.c_str(), &st), 0);
  if (st.st_mode & 0007) GTEST_SKIP() << "tracefs is open to everyone here";
  const std::vector<std::string> as_nobody = {"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", VPERF_BINARY};
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"ftrace", "-e", "syscalls:sys_enter_getppid", "--", "true"}, {"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", "/dev/null", "--", "true"},
           {"ftrace", "list", "-t"}, {"probe", "-l"}, {"stat", "-e", "uprobe:/bin/true:main", "--", "true"}}) {
    std::vector<std::string> argv = as_nobody;
    argv.insert(argv.end(), args.begin(), args.end());
    ProgramResult r = run_program(argv);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("no permission to use tracefs"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("run as root"), std::string::npos) << r.err;
  }
}

// A ^C the moment the instance appears, while vperf is still writing its settings, ends the run
// through the same clean-up (the signals are caught from the start of the run).
TEST_F(Ftrace, SignalDuringSetUpLeavesNothing) {
  for (int round = 0; round < 5; ++round) {
    Background vperf({VPERF_BINARY, "ftrace", "-e", "syscalls:sys_enter_*", "--", VPERF_WORKLOAD, "sleep", "600000"});
    ASSERT_GT(vperf.pid(), 0);
    const std::filesystem::path instance = kTracefs / "instances" / ("vperf-" + std::to_string(vperf.pid()));
    ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(instance); }, std::chrono::seconds(20)));
    ::kill(vperf.pid(), SIGINT);
    ProgramResult ended = vperf.wait();
    EXPECT_NE(ended.exit_code, -1) << "killed by the signal instead of ending the run";
    EXPECT_FALSE(std::filesystem::exists(instance)) << ended.err;
  }
}

// A second run cannot take a named instance in use; reset removes it.
// -D waits in vperf's run loop, not in a sleep: a stop signal during the delay ends the run at
// once (the workload gets it), nothing was traced, and the instance is gone.
TEST_F(Ftrace, StopSignalDuringTheDelayEndsTheRun) {
  Background vperf({VPERF_BINARY, "ftrace", "-D", "600000", "-e", "syscalls:sys_enter_getppid", "--", "sleep", "600"});
  ASSERT_GT(vperf.pid(), 0);
  ASSERT_TRUE(wait_until([&] { return children_named(vperf.pid(), "sleep").size() == 1 && blocked_in_wait(vperf.pid()); },
                         std::chrono::seconds(20)))
      << "the workload never started, or vperf is not waiting";
  const auto sent = std::chrono::steady_clock::now();
  ::kill(vperf.pid(), SIGTERM);
  ProgramResult r = vperf.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(10)) << "the delay was slept through";
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;  // the workload's end: the forwarded SIGTERM
  EXPECT_EQ(count_lines_with(r.out, "sys_enter_getppid"), 0u);
  EXPECT_FALSE(std::filesystem::exists("/sys/kernel/tracing/instances/vperf-" + std::to_string(vperf.pid())));
}

TEST_F(Ftrace, NamedInstanceLivesFromStartToReset) {
  const std::string name = "vperf-test-" + std::to_string(::getpid());
  ProgramResult started = run_vperf({"ftrace", "start", "--instance", name, "-e", "syscalls:sys_enter_getppid", "--filter", kWorkloadOnly});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  ProgramResult again = run_vperf({"ftrace", "start", "--instance", name, "-e", "syscalls:sys_enter_getppid"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("exists already"), std::string::npos) << again.err;
  const std::string traced = workload_calling_getppid(25);
  ASSERT_EQ(run_vperf({"ftrace", "marker", "--instance", name, "vperf-test-marker"}).exit_code, 0);
  ASSERT_EQ(run_vperf({"ftrace", "stop", "--instance", name}).exit_code, 0);
  const std::string untraced = workload_calling_getppid(25);  // stopped: not traced
  ProgramResult shown = run_vperf({"ftrace", "show", "--instance", name});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(count_lines_with(shown.out, "vperf-workload-" + traced + " "), 25u) << shown.out;
  EXPECT_EQ(count_lines_with(shown.out, "vperf-workload-" + untraced + " "), 0u) << shown.out;
  EXPECT_EQ(count_lines_with(shown.out, "vperf-test-marker"), 1u) << shown.out;
  ProgramResult reset = run_vperf({"ftrace", "reset", "--instance", name});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_FALSE(std::filesystem::exists(kTracefs / "instances" / name));
}

// The top level, asked for by name (--instance ''): start changes it until reset gives back
// every file it wrote (the fixture compares them all); a second start is refused meanwhile.
// The oops dump is set only when asked: where the kernel refuses the sysctl (this Firecracker
// guest does, even to root) that start is one line naming it, and nothing changes.
TEST_F(Ftrace, TopLevelIsHeldFromStartToResetAndTheOopsDumpOnlyWhenAsked) {
  const std::filesystem::path kept = "/run/vperf/ftrace-top-level";
  ASSERT_FALSE(std::filesystem::exists(kept)) << "a vperf ftrace start holds this machine's top level";
  const std::string oops_before = slurp("/proc/sys/kernel/ftrace_dump_on_oops");
  // The comm filter leaves out the getppid of the shell that execs the workload (dash asks its
  // parent's pid), which the trace would print under the workload's name (same pid, comm now).
  ProgramResult started = run_vperf({"ftrace", "start", "--instance", "", "-e", "syscalls:sys_enter_getppid", "--filter", kWorkloadOnly});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  EXPECT_NE(started.err.find("reset --instance ''"), std::string::npos) << started.err;
  EXPECT_EQ(slurp("/proc/sys/kernel/ftrace_dump_on_oops"), oops_before) << "the oops dump was not asked for";
  EXPECT_EQ(slurp(kTracefs / "events/syscalls/sys_enter_getppid/enable"), "1\n");
  ProgramResult again = run_vperf({"ftrace", "start", "--instance", "", "-e", "syscalls:sys_enter_getppid"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("holds the top-level buffer already"), std::string::npos) << again.err;
  const std::string pid = workload_calling_getppid(25);
  ASSERT_EQ(run_vperf({"ftrace", "stop", "--instance", ""}).exit_code, 0);
  EXPECT_EQ(slurp(kTracefs / "tracing_on"), "0\n");
  ProgramResult shown = run_vperf({"ftrace", "show", "--instance", ""});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(count_lines_with(shown.out, "vperf-workload-" + pid + " "), 25u) << shown.out;
  ProgramResult reset = run_vperf({"ftrace", "reset", "--instance", ""});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_FALSE(std::filesystem::exists(kept));
  ProgramResult reset_again = run_vperf({"ftrace", "reset", "--instance", ""});
  EXPECT_EQ(reset_again.exit_code, 1);
  EXPECT_NE(reset_again.err.find("does not hold the top-level buffer"), std::string::npos) << reset_again.err;

  ProgramResult dumping = run_vperf({"ftrace", "start", "--instance", "", "--dump-on-oops", "-e", "syscalls:sys_enter_getppid"});
  if (dumping.exit_code != 0) {
    EXPECT_EQ(dumping.exit_code, 1);
    EXPECT_EQ(std::count(dumping.err.begin(), dumping.err.end(), '\n'), 1) << dumping.err;
    EXPECT_NE(dumping.err.find("cannot write '" + std::string(trim_newline(oops_before)) + "' to /proc/sys/kernel/ftrace_dump_on_oops"), std::string::npos)
        << dumping.err;
    EXPECT_FALSE(std::filesystem::exists(kept));
  } else {
    // A kernel that lets root set it: all CPUs now, as before after reset.
    EXPECT_EQ(slurp("/proc/sys/kernel/ftrace_dump_on_oops").substr(0, 1), "1");
    ProgramResult undone = run_vperf({"ftrace", "reset", "--instance", ""});
    EXPECT_EQ(undone.exit_code, 0) << undone.err;
  }
  EXPECT_EQ(slurp("/proc/sys/kernel/ftrace_dump_on_oops"), oops_before);
}

// SIGINT and SIGTERM end a run normally, its instance removed; after SIGKILL the instance stays
// until the next vperf ftrace command, which removes it.
TEST_F(Ftrace, InstanceGoesOnSignalsAndAfterAKill) {
  for (int signal : {SIGINT, SIGTERM, SIGKILL}) {
    SCOPED_TRACE(strsignal(signal));
    Background vperf({VPERF_BINARY, "ftrace", "-e", "syscalls:sys_enter_getppid", "--", VPERF_WORKLOAD, "sleep", "600000"});
    ASSERT_GT(vperf.pid(), 0);
    const std::filesystem::path instance = kTracefs / "instances" / ("vperf-" + std::to_string(vperf.pid()));
    ASSERT_TRUE(wait_until([&] { return instance_tracing(instance) && !children_named(vperf.pid(), "vperf-workload").empty(); },
                           std::chrono::seconds(20)))
        << "vperf ftrace never started tracing";
    const std::vector<pid_t> workload = children_named(vperf.pid(), "vperf-workload");
    ::kill(vperf.pid(), signal);
    ProgramResult ended = vperf.wait();
    for (pid_t child : workload) ::kill(child, SIGKILL);
    if (signal != SIGKILL) {
      EXPECT_FALSE(std::filesystem::exists(instance)) << ended.err;
      continue;
    }
    EXPECT_TRUE(std::filesystem::exists(instance)) << "a killed vperf cannot clean up";
    ProgramResult next = run_vperf({"ftrace", "list", "-t"});
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_FALSE(std::filesystem::exists(instance)) << "any vperf ftrace command removes a killed run's instance";
  }
}

// Issue 30: `--instance ..` named the top level through instances/.., past the guard that keeps
// it to a `start --instance ''` (stop set its tracing_on to 0, show printed its trace). Every
// instance command refuses a name that leads out of instances/ in one line, and tracefs is as it
// was (the fixture compares tracing_on and every other top-level setting).
TEST_F(Ftrace, InstanceNamesThatLeadOutOfInstancesAreRefused) {
  const std::string tracing_on = slurp(kTracefs / "tracing_on");
  for (const std::string name : {"..", ".", "../..", "a/b", "../instances", "x\ny"}) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"ftrace", "stop", "--instance", name},
             {"ftrace", "show", "--instance", name},
             {"ftrace", "marker", "--instance", name, "vperf-test-marker"},
             {"ftrace", "snapshot", "--instance", name},
             {"ftrace", "reset", "--instance", name},
             {"ftrace", "start", "--instance", name, "-e", "syscalls:sys_enter_getppid"}}) {
      ProgramResult r = run_vperf(args);
      EXPECT_NE(r.exit_code, 0) << args[1] << " --instance " << name << ": " << r.out << r.err;
      EXPECT_EQ(r.out, "") << args[1] << " --instance " << name;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      // start's option parser refuses a '/' itself (a usage error); the rest is the library's.
      const bool said = r.err.find("is not an ftrace instance name") != std::string::npos ||
                        (args[1] == "start" && r.err.find("an instance name has no '/'") != std::string::npos);
      EXPECT_TRUE(said) << args[1] << " --instance " << name << ": " << r.err;
      EXPECT_EQ(slurp(kTracefs / "tracing_on"), tracing_on) << "vperf ftrace " << args[1] << " --instance " << name;
    }
  }
}

// A trace option is a file of the instance's options/: "-O no../../../tracing_on" wrote 0 to
// instances/vperf-PID/options/../../../tracing_on, the top level's tracing_on, and the run went
// on. Every ftrace setting is checked for its file before the first write: one line, nothing
// written.
TEST_F(Ftrace, TraceOptionsAreFilesOfOptionsOnly) {
  const std::string tracing_on = slurp(kTracefs / "tracing_on");
  for (const std::string option : {"no../../../tracing_on", "../../../tracing_on", "/tracing_on", "func_stack_trace\nx"}) {
    ProgramResult r = run_vperf({"ftrace", "-e", "syscalls:sys_enter_getppid", "-O", option, "--", "true"});
    EXPECT_EQ(r.exit_code, 1) << option << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("no trace option"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(kTracefs / "tracing_on"), tracing_on) << "-O " << option;
  }
}

}  // namespace
}  // namespace vperf::test
