// `vperf stat` end to end: the real binary counting the deterministic vperf-workload on the
// real kernel. Ground truth is the workload itself (exactly N getppid calls, exactly N KVM port
// writes), the process tree (exit statuses, signals) and the machine (online CPUs, a cgroup
// made for the test). Counts are read from -x, CSV, --json or the text table, never guessed.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/background.h"
#include "support/capability.h"
#include "support/processes.h"
#include "support/run_program.h"
#include "support/stat_output.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
using test::Background;
using test::HeldChild;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::children_named;
using test::wait_until;

constexpr const char* kGetppid = "syscalls:sys_enter_getppid";

// vperf stat ARGS..., in the C locale (no thousands grouping in the text table).
test::ProgramResult vperf_stat(std::vector<std::string> args) {
  args.insert(args.begin(), "stat");
  return test::run_vperf(args, {{"LC_ALL", "C"}});
}

std::string describe(const test::ProgramResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stderr:\n" + r.err + "--- stdout:\n" + r.out;
}

bool has_kvm() { return ::access("/dev/kvm", R_OK | W_OK) == 0; }
bool has_kvm_tracepoints() {
  return test::has_tracefs() && fs::exists("/sys/kernel/tracing/events/kvm/kvm_pio") &&
         fs::exists("/sys/kernel/tracing/events/kvm/kvm_userspace_exit");
}
bool can_count_tracepoints() { return test::has_tracefs() && test::running_as_root(); }

// The count of `event` in global -x, output (value in field 0, event in field 2).
std::optional<double> csv_count(const std::string& err, const std::string& event, std::string_view sep = ",") {
  auto line = test::find_csv_event(test::parse_csv(err, sep), event);
  if (!line) return std::nullopt;
  return test::parse_number(line->fields[0]);
}

#define EXPECT_CSV_COUNT(result, event, expected)                                                         \
  do {                                                                                                    \
    std::optional<double> count_ = csv_count((result).err, (event));                                     \
    ASSERT_TRUE(count_.has_value()) << "no count for " << (event) << "\n" << describe(result);           \
    EXPECT_EQ(*count_, static_cast<double>(expected)) << (event) << "\n" << describe(result);            \
  } while (0)

std::set<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string text;
  std::getline(in, text);
  std::set<int> cpus;
  for (const std::string& range : test::split_fields(text, ",")) {
    if (range.empty()) continue;
    size_t dash = range.find('-');
    int first = std::stoi(range.substr(0, dash));
    int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
    for (int c = first; c <= last; ++c) cpus.insert(c);
  }
  return cpus;
}

// Runs `vperf stat ATTACH_OPTION <held child's pid> -x, -e getppid`, releases the child once
// vperf holds its counters, and returns what vperf printed. vperf must end by itself when the
// child ends.
test::ProgramResult attach_and_count(const std::string& option, uint64_t calls, std::chrono::milliseconds* vperf_tail) {
  HeldChild child({VPERF_WORKLOAD, "getppid", std::to_string(calls)});
  EXPECT_GT(child.pid(), 0);
  Background vperf({VPERF_BINARY, "stat", "-x,", "-e", kGetppid, option, std::to_string(child.pid())});
  EXPECT_GT(vperf.pid(), 0);
  // vperf opens, enables, then waits: blocked in its wait loop with counters open, it counts.
  EXPECT_TRUE(wait_until([&] { return test::counting_and_waiting(vperf.pid()); }, 10s))
      << "vperf never opened a counter and reached its wait loop";
  child.release();
  EXPECT_EQ(child.wait(), 0);
  const auto child_end = Clock::now();
  test::ProgramResult r = vperf.wait();
  *vperf_tail = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - child_end);
  return r;
}

// ---------------------------------------------------------------------------------------------
// 1. Exact counts

TEST(StatCounts, GetppidIsExact) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  test::ProgramResult r = vperf_stat({"-x,", "-e", kGetppid, "--", VPERF_WORKLOAD, "getppid", "12345"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_CSV_COUNT(r, kGetppid, 12345);
  auto line = test::find_csv_event(test::parse_csv(r.err), kGetppid);
  ASSERT_TRUE(line);
  ASSERT_GE(line->fields.size(), 5u);
  EXPECT_EQ(line->fields[4], "100.00") << "a tracepoint is never multiplexed";
  EXPECT_EQ(r.out, "") << "the counts go to stderr; stdout is the workload's";
}

TEST(StatCounts, GlobCountsEachMatchByItsFullName) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  test::ProgramResult r =
      vperf_stat({"-x,", "-e", "syscalls:sys_enter_getpp*", "--", VPERF_WORKLOAD, "getppid", "321"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // Ground truth: the tracefs directories the glob matches.
  std::set<std::string> expected;
  for (const auto& entry : fs::directory_iterator("/sys/kernel/tracing/events/syscalls")) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("sys_enter_getpp")) expected.insert("syscalls:" + name);
  }
  std::set<std::string> got;
  for (const test::CsvLine& l : test::parse_csv(r.err))
    if (l.fields.size() > 2) got.insert(l.fields[2]);
  EXPECT_EQ(got, expected) << describe(r);
  EXPECT_CSV_COUNT(r, kGetppid, 321);
}

TEST(StatCounts, KvmPioIsExact) {
  VPERF_REQUIRE(has_kvm(), "/dev/kvm (read-write)");
  VPERF_REQUIRE(has_kvm_tracepoints() && test::running_as_root(), "the kvm tracepoints in tracefs, and root");
  test::ProgramResult r =
      vperf_stat({"-x,", "-e", "kvm:kvm_pio,kvm:kvm_userspace_exit", "--", VPERF_WORKLOAD, "kvm-pio", "1000"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_CSV_COUNT(r, "kvm:kvm_pio", 1000);
  EXPECT_CSV_COUNT(r, "kvm:kvm_userspace_exit", 1000);
}

TEST(StatCounts, GroupWithPageFaultsKeepsGetppidExact) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  test::ProgramResult r = vperf_stat(
      {"-x,", "-e", std::string("{") + kGetppid + ",page-faults}", "--", VPERF_WORKLOAD, "getppid", "4321"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_CSV_COUNT(r, kGetppid, 4321);
  std::optional<double> faults = csv_count(r.err, "page-faults");
  ASSERT_TRUE(faults) << describe(r);
  EXPECT_GT(*faults, 0) << "the dynamic loader alone takes page faults";
  auto lines = test::parse_csv(r.err);
  auto a = test::find_csv_event(lines, kGetppid), b = test::find_csv_event(lines, "page-faults");
  ASSERT_TRUE(a && b && a->fields.size() > 3 && b->fields.size() > 3);
  EXPECT_EQ(a->fields[3], b->fields[3]) << "one group, read at once: the same run time";
}

// ---------------------------------------------------------------------------------------------
// 2. Targets

TEST(StatTargets, ExitStatusIsTheCommands) {
  test::ProgramResult r = vperf_stat({"-x,", "-e", "task-clock", "--", VPERF_WORKLOAD, "exit", "7"});
  EXPECT_EQ(r.exit_code, 7) << describe(r);
  EXPECT_TRUE(csv_count(r.err, "task-clock")) << "counts are printed whatever the status\n" << describe(r);
  test::ProgramResult ok = vperf_stat({"-x,", "-e", "task-clock", "--", VPERF_WORKLOAD, "exit", "0"});
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);
}

TEST(StatTargets, CommandKilledBySigkillGives137) {
  test::ProgramResult r = vperf_stat({"-x,", "-e", "task-clock", "--", "sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << describe(r);
  EXPECT_TRUE(csv_count(r.err, "task-clock")) << describe(r);
  EXPECT_NE(r.err.find(std::string("sh: ") + ::strsignal(SIGKILL)), std::string::npos) << describe(r);
}

TEST(StatTargets, MissingProgramIsOneErrorLine) {
  test::ProgramResult r = vperf_stat({"-e", "task-clock", "--", "vperf-no-such-program-xyz"});
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_GT(r.exit_code, 0) << "an exit, not a crash\n" << describe(r);
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(r);
  EXPECT_NE(r.err.find("vperf-no-such-program-xyz"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("task-clock"), std::string::npos) << "no counts for a command that never ran\n" << describe(r);
}

TEST(StatTargets, SigtermIsForwardedAndCountsArePrinted) {
  Background vperf({VPERF_BINARY, "stat", "-x,", "-e", "task-clock", "--", "sleep", "10"});
  ASSERT_GT(vperf.pid(), 0);
  ASSERT_TRUE(wait_until([&] { return !children_named(vperf.pid(), "sleep").empty(); }, 10s))
      << "vperf never started sleep";
  const auto t0 = Clock::now();
  ASSERT_EQ(::kill(vperf.pid(), SIGTERM), 0);
  test::ProgramResult r = vperf.wait();
  const auto took = Clock::now() - t0;
  EXPECT_LT(took, 3s) << "vperf must end soon after SIGTERM";
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << "sleep got the signal: 143\n" << describe(r);
  EXPECT_TRUE(csv_count(r.err, "task-clock")) << "the counts are still printed\n" << describe(r);
}

TEST(StatTargets, TimeoutEndsTheCommand) {
  const auto t0 = Clock::now();
  test::ProgramResult r = vperf_stat({"-x,", "-e", "task-clock", "--timeout", "200", "--", "sleep", "10"});
  const auto took = Clock::now() - t0;
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 3s) << "--timeout 200 must not wait for sleep 10";
  EXPECT_TRUE(csv_count(r.err, "task-clock")) << describe(r);
  // cmd_stat.h: --timeout ends the command with SIGTERM; the status is the command's.
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << describe(r);
}

TEST(StatTargets, AttachToPidCountsExactlyAndEndsWithIt) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  std::chrono::milliseconds tail{};
  test::ProgramResult r = attach_and_count("-p", 5000, &tail);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_CSV_COUNT(r, kGetppid, 5000);
  EXPECT_LT(tail, 2s) << "vperf must end by itself once the process has ended";
}

// perf's attach idiom: a COMMAND given with -p only times the counting. It runs uncounted: the
// held task never runs while the command makes 1000 calls, so the counter never ran, and both
// perf and vperf print it "<not counted>" (a count of the command's calls would be 1000).
TEST(StatTargets, CommandWithPidOnlyTimesTheCountingAsPerf) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf stat as the reference");
  HeldChild idle({VPERF_WORKLOAD, "getppid", "10"});
  const std::vector<std::string> line{"stat", "-x,", "-e", kGetppid, "-p", std::to_string(idle.pid()), "--",
                                      VPERF_WORKLOAD, "getppid", "1000"};
  test::ProgramResult r = vperf_stat(std::vector<std::string>(line.begin() + 1, line.end()));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, std::string("<not counted>,,") + kGetppid + ",0,100.00,,\n");
  std::vector<std::string> perf_line{"perf"};
  perf_line.insert(perf_line.end(), line.begin(), line.end());
  test::ProgramResult perf = test::run_program(perf_line);
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  EXPECT_EQ(r.err, perf.err);
  test::ProgramResult text = vperf_stat({"-e", kGetppid, "-p", std::to_string(idle.pid()), "--", "true"});
  ASSERT_EQ(text.exit_code, 0) << describe(text);
  EXPECT_NE(text.err.find("Performance counter stats for process id '" + std::to_string(idle.pid()) + "':"), std::string::npos)
      << text.err;
  EXPECT_EQ(text.err.find("seconds user"), std::string::npos) << "perf shows no user/sys times of a timing command";
}

// The counted task ending ends the run: the timing command is ended (it was only a timer, so the
// exit status is 0) and the count is the task's, exactly.
TEST(StatTargets, CommandWithPidEndsWhenTheTasksEnd) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  HeldChild child({VPERF_WORKLOAD, "getppid", "4000"});
  Background vperf({VPERF_BINARY, "stat", "-x,", "-e", kGetppid, "-p", std::to_string(child.pid()), "--", "sleep", "60"});
  ASSERT_GT(vperf.pid(), 0);
  ASSERT_TRUE(wait_until([&] { return test::counting_and_waiting(vperf.pid()); }, 10s));
  child.release();
  EXPECT_EQ(child.wait(), 0);
  const auto child_end = Clock::now();
  test::ProgramResult r = vperf.wait();
  EXPECT_LT(Clock::now() - child_end, 2s) << "the run must end with the task, not with the sleep";
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_CSV_COUNT(r, kGetppid, 4000);
}

TEST(StatTargets, AttachToTidCountsExactlyAndEndsWithIt) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  std::chrono::milliseconds tail{};
  test::ProgramResult r = attach_and_count("-t", 6000, &tail);  // single-threaded: TID == PID
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_CSV_COUNT(r, kGetppid, 6000);
  EXPECT_LT(tail, 2s) << "vperf must end by itself once the thread has ended";
}

TEST(StatTargets, SystemWideSeesAtLeastTheWorkload) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  test::ProgramResult r = vperf_stat({"-x,", "-a", "-e", kGetppid, "--", VPERF_WORKLOAD, "getppid", "7000"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::optional<double> count = csv_count(r.err, kGetppid);
  ASSERT_TRUE(count) << describe(r);
  EXPECT_GE(*count, 7000) << describe(r);
}

TEST(StatTargets, NoAggrPrintsOneLinePerOnlineCpu) {
  const std::set<int> cpus = online_cpus();
  ASSERT_FALSE(cpus.empty());
  test::ProgramResult r = vperf_stat({"-x,", "-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::multiset<std::string> prefixes;
  for (const test::CsvLine& l : test::parse_csv(r.err)) {
    ASSERT_GE(l.fields.size(), 4u) << l.line;
    EXPECT_EQ(l.fields[3], "cpu-clock") << l.line;
    EXPECT_TRUE(test::parse_number(l.fields[1])) << l.line;
    prefixes.insert(l.fields[0]);
  }
  std::multiset<std::string> expected;
  for (int c : cpus) expected.insert("CPU" + std::to_string(c));
  EXPECT_EQ(prefixes, expected) << describe(r);
  // The text table too: "CPU<n>" starts each row.
  test::ProgramResult text = vperf_stat({"-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.1"});
  std::multiset<std::string> text_prefixes;
  for (const test::TextRow& row : test::parse_text_rows(text.err)) text_prefixes.insert(row.prefix);
  EXPECT_EQ(text_prefixes, expected) << describe(text);
}

TEST(StatTargets, CpuListCountsOnlyThoseCpus) {
  test::ProgramResult r = vperf_stat({"-x,", "-C", "0", "-A", "-e", "cpu-clock", "--", "sleep", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto lines = test::parse_csv(r.err);
  ASSERT_EQ(lines.size(), 1u) << describe(r);
  EXPECT_EQ(lines[0].fields.at(0), "CPU0") << describe(r);
  test::ProgramResult text = vperf_stat({"-C", "0", "-e", "cpu-clock", "--", "sleep", "0.1"});
  EXPECT_NE(text.err.find("Performance counter stats for 'CPU(s) 0'"), std::string::npos) << describe(text);

  // Which CPU the events happen on: the workload pinned to CPU 1 is seen from -C 1, not -C 0.
  VPERF_REQUIRE(online_cpus().count(1), "a second online CPU");
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  VPERF_REQUIRE(!test::find_program("taskset").empty(), "taskset(1)");
  // Large next to every other test's getppid calls together, should they run at once on CPU 0.
  constexpr int kCalls = 200000;
  test::ProgramResult on1 = vperf_stat({"-x,", "-C", "1", "-e", kGetppid, "--", "taskset", "-c", "1", VPERF_WORKLOAD,
                                        "getppid", std::to_string(kCalls)});
  test::ProgramResult on0 = vperf_stat({"-x,", "-C", "0", "-e", kGetppid, "--", "taskset", "-c", "1", VPERF_WORKLOAD,
                                        "getppid", std::to_string(kCalls)});
  ASSERT_EQ(on1.exit_code, 0) << describe(on1);
  ASSERT_EQ(on0.exit_code, 0) << describe(on0);
  std::optional<double> c1 = csv_count(on1.err, kGetppid), c0 = csv_count(on0.err, kGetppid);
  ASSERT_TRUE(c1 && c0) << describe(on1) << describe(on0);
  EXPECT_GE(*c1, kCalls) << "CPU 1 ran the workload";
  EXPECT_LT(*c0, kCalls) << "CPU 0 did not run it; -C 0 must not count other CPUs";
}

// A child cgroup for the test, removed at the end.
class TestCgroup {
 public:
  TestCgroup() {
    // The hierarchy vperf (and perf) use: a v1 perf_event hierarchy if mounted, else cgroup2.
    std::ifstream mounts("/proc/mounts");
    std::string device, dir, type, opts;
    while (mounts >> device >> dir >> type >> opts) {
      std::string rest;
      std::getline(mounts, rest);
      if (type == "cgroup" && opts.find("perf_event") != std::string::npos) {
        root_ = dir;
        break;
      }
      if (type == "cgroup2" && root_.empty()) root_ = dir;
    }
    if (root_.empty()) {
      why_ = "no cgroup2 or perf_event cgroup mount in /proc/mounts";
      return;
    }
    name_ = "vperf-stat-test-" + std::to_string(::getpid());
    path_ = root_ + "/" + name_;
    if (::mkdir(path_.c_str(), 0755) != 0) {
      why_ = "mkdir " + path_ + ": " + std::strerror(errno);
      path_.clear();
    }
  }
  ~TestCgroup() {
    if (path_.empty()) return;
    // Members have all been reaped by now; rmdir may still need a moment for the kernel to
    // let go of them.
    wait_until([&] { return ::rmdir(path_.c_str()) == 0 || errno == ENOENT; }, 2s);
  }
  bool ok() const { return !path_.empty(); }
  const std::string& why() const { return why_; }
  const std::string& name() const { return name_; }
  bool add(pid_t pid) const {
    std::ofstream procs(path_ + "/cgroup.procs");
    procs << pid << '\n';
    procs.flush();
    return static_cast<bool>(procs);
  }

 private:
  std::string root_, name_, path_, why_;
};

TEST(StatTargets, CgroupCountsOnlyItsMembers) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  TestCgroup cgroup;
  VPERF_REQUIRE(cgroup.ok(), "a child cgroup (" + cgroup.why() + ")");
  constexpr int kInside = 4000, kOutside = 3000;
  HeldChild inside({VPERF_WORKLOAD, "getppid", std::to_string(kInside)});
  HeldChild outside({VPERF_WORKLOAD, "getppid", std::to_string(kOutside)});
  ASSERT_TRUE(cgroup.add(inside.pid())) << "cannot move a task into the cgroup";

  // vperf's command says when counting is on (system-wide counters are enabled before it
  // execs) and keeps it on until the test says it is done: no timing guesses.
  const fs::path dir = fs::temp_directory_path() / ("vperf-stat-cgroup-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string ready = (dir / "ready").string(), done = (dir / "done").string();
  Background vperf({VPERF_BINARY, "stat", "-x,", "-a", "-G", cgroup.name(), "-e", kGetppid, "--", "sh", "-c",
                    "touch " + ready + "; while [ ! -e " + done + " ]; do sleep 0.05; done"});
  ASSERT_GT(vperf.pid(), 0);
  const bool started = wait_until([&] { return fs::exists(ready); }, 10s);
  inside.release();
  outside.release();
  EXPECT_EQ(inside.wait(), 0);
  EXPECT_EQ(outside.wait(), 0);
  std::ofstream(done).put('\n');
  test::ProgramResult r = vperf.wait();
  fs::remove_all(dir);
  ASSERT_TRUE(started) << describe(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_CSV_COUNT(r, kGetppid, kInside);  // the concurrent 3000 outside must not leak in
}

// ---------------------------------------------------------------------------------------------
// 3. Options

TEST(StatOptions, RepeatPrintsRunsAndNoise) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  test::ProgramResult r = vperf_stat(
      {"-r", "3", "-e", std::string(kGetppid) + ",task-clock", "--", VPERF_WORKLOAD, "getppid", "100"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find(" (3 runs):"), std::string::npos) << describe(r);
  std::vector<test::TextRow> rows = test::parse_text_rows(r.err);
  ASSERT_EQ(rows.size(), 2u) << describe(r);
  for (const test::TextRow& row : rows) {
    if (row.event == kGetppid) {
      // Three exact runs: the mean is exact, and perf prints no "( +- 0.00% )".
      EXPECT_EQ(row.value, "100") << row.line;
      EXPECT_FALSE(row.has_noise) << row.line;
    } else {
      EXPECT_EQ(row.event, "task-clock");
      EXPECT_TRUE(row.has_noise) << "task-clock varies between runs: " << row.line;
    }
  }
  EXPECT_NE(r.err.find(" seconds time elapsed  ( +- "), std::string::npos) << describe(r);
  // CSV: a noise column after the event name.
  test::ProgramResult csv = vperf_stat(
      {"-x,", "-r", "3", "-e", std::string(kGetppid) + ",task-clock", "--", VPERF_WORKLOAD, "getppid", "100"});
  auto line = test::find_csv_event(test::parse_csv(csv.err), kGetppid);
  ASSERT_TRUE(line) << describe(csv);
  ASSERT_GE(line->fields.size(), 4u);
  EXPECT_EQ(line->fields[0], "100");
  EXPECT_EQ(line->fields[3], "0.00%") << line->line;
}

TEST(StatOptions, IntervalCountPrintsExactlyThatManyBlocks) {
  test::ProgramResult r =
      vperf_stat({"-x,", "-I", "100", "--interval-count", "3", "-a", "-e", "cpu-clock"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<test::CsvLine> lines = test::parse_csv(r.err);
  std::set<std::string> stamps;
  for (const test::CsvLine& l : lines) {
    ASSERT_GE(l.fields.size(), 4u) << l.line;
    EXPECT_EQ(l.fields[3], "cpu-clock") << l.line;
    stamps.insert(l.fields[0]);
  }
  EXPECT_EQ(lines.size(), 3u) << "perf 6.1 prints 3 blocks for --interval-count 3\n" << describe(r);
  EXPECT_EQ(stamps.size(), lines.size()) << describe(r);
  // The text form: one header, 3 rows.
  test::ProgramResult text = vperf_stat({"-I", "100", "--interval-count", "3", "-a", "-e", "cpu-clock"});
  EXPECT_EQ(test::parse_text_rows(text.err).size(), 3u) << describe(text);
}

TEST(StatOptions, IntervalWithCommandPrintsTheFinalPartialInterval) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  // The workload ends long before the first 1 s tick: only the partial interval has its count.
  test::ProgramResult r =
      vperf_stat({"-x,", "-I", "1000", "-e", kGetppid, "--", VPERF_WORKLOAD, "getppid", "2500"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<test::CsvLine> lines = test::parse_csv(r.err);
  ASSERT_EQ(lines.size(), 1u) << describe(r);
  ASSERT_GE(lines[0].fields.size(), 4u);
  EXPECT_EQ(lines[0].fields[1], "2500") << lines[0].line;
  EXPECT_EQ(lines[0].fields[3], kGetppid);
  std::optional<double> stamp = test::parse_number(test::split_fields(lines[0].fields[0], " ").back());
  ASSERT_TRUE(stamp) << lines[0].line;
  EXPECT_LT(*stamp, 1.0) << "the partial interval ends when the command does";

  // Several intervals: full ones, then the partial one, each no longer than the period.
  test::ProgramResult spin = vperf_stat({"-x,", "-I", "100", "-e", "task-clock", "--", VPERF_WORKLOAD, "spin", "250"});
  ASSERT_EQ(spin.exit_code, 0) << describe(spin);
  std::vector<double> stamps;
  double total_msec = 0;
  for (const test::CsvLine& l : test::parse_csv(spin.err)) {
    ASSERT_GE(l.fields.size(), 4u) << l.line;
    std::optional<double> t = test::parse_number(test::split_fields(l.fields[0], " ").back());
    std::optional<double> v = test::parse_number(l.fields[1]);
    ASSERT_TRUE(t && v) << l.line;
    stamps.push_back(*t);
    total_msec += *v;
  }
  ASSERT_GE(stamps.size(), 3u) << describe(spin);
  const double last_gap = stamps.back() - stamps[stamps.size() - 2];
  EXPECT_GT(last_gap, 0) << describe(spin);
  EXPECT_LT(last_gap, 0.1) << "the last interval is the partial one\n" << describe(spin);
  EXPECT_GE(total_msec, 250) << "the intervals add up to the whole run\n" << describe(spin);
}

TEST(StatOptions, OutputFileGetsEverythingAndStderrNothing) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  const fs::path file = fs::temp_directory_path() / ("vperf-stat-o-" + std::to_string(::getpid()) + ".txt");
  test::ProgramResult r = vperf_stat({"-o", file.string(), "-e", kGetppid, "--", VPERF_WORKLOAD, "getppid", "777"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "") << "with -o nothing goes to stderr";
  std::ifstream in(file);
  std::stringstream content;
  content << in.rdbuf();
  fs::remove(file);
  const std::string text = content.str();
  EXPECT_TRUE(text.starts_with("# started on ")) << text;
  std::vector<test::TextRow> rows = test::parse_text_rows(text);
  ASSERT_EQ(rows.size(), 1u) << text;
  EXPECT_EQ(rows[0].event, kGetppid);
  EXPECT_EQ(rows[0].value, "777");
  EXPECT_LT(text.find("# started on"), text.find(kGetppid));
}

TEST(StatOptions, JsonLinesParseAndCarryPerfsKeys) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  test::ProgramResult r = vperf_stat(
      {"--json", "-e", std::string(kGetppid) + ",task-clock,page-faults", "--", VPERF_WORKLOAD, "getppid", "999"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<boost::json::value> lines = test::parse_json_lines(r.err);
  ASSERT_EQ(lines.size(), 3u) << describe(r);
  const std::set<std::string> perf_keys{"counter-value", "unit",         "event",      "event-runtime",
                                        "pcnt-running",  "metric-value", "metric-unit"};
  std::map<std::string, boost::json::object> by_event;
  for (const boost::json::value& v : lines) {
    ASSERT_TRUE(v.is_object()) << "a line that is not a JSON object\n" << describe(r);
    std::set<std::string> keys;
    for (const auto& kv : v.as_object()) keys.insert(std::string(kv.key()));
    EXPECT_EQ(keys, perf_keys) << boost::json::serialize(v);
    ASSERT_TRUE(v.as_object().contains("event") && v.at("event").is_string());
    by_event[std::string(v.at("event").as_string())] = v.as_object();
  }
  ASSERT_TRUE(by_event.count(kGetppid)) << describe(r);
  const boost::json::object& g = by_event[kGetppid];
  ASSERT_TRUE(g.at("counter-value").is_string()) << "perf writes the count as a string";
  EXPECT_EQ(std::string(g.at("counter-value").as_string()), "999.000000");
  EXPECT_TRUE(g.at("event-runtime").is_number());
  EXPECT_TRUE(g.at("pcnt-running").is_number());
  ASSERT_TRUE(by_event.count("task-clock")) << describe(r);
  EXPECT_EQ(std::string(by_event["task-clock"].at("unit").as_string()), "msec");
  EXPECT_EQ(std::string(by_event["task-clock"].at("metric-unit").as_string()), "CPUs utilized");
}

TEST(StatOptions, CsvSeparatorIsUsed) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  test::ProgramResult r = vperf_stat(
      {"-x", ";", "-e", std::string(kGetppid) + ",task-clock", "--", VPERF_WORKLOAD, "getppid", "1234"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<test::CsvLine> lines = test::parse_csv(r.err, ";");
  ASSERT_EQ(lines.size(), 2u) << describe(r);
  for (const test::CsvLine& l : lines) {
    EXPECT_EQ(l.line.find(','), std::string::npos) << l.line;
    EXPECT_GE(l.fields.size(), 7u) << l.line;
  }
  EXPECT_EQ(csv_count(r.err, kGetppid, ";"), 1234.0) << describe(r);
  auto tc = test::find_csv_event(lines, "task-clock");
  ASSERT_TRUE(tc) << describe(r);
  EXPECT_EQ(tc->fields[1], "msec");
  EXPECT_EQ(tc->fields.back(), "CPUs utilized");
}

// perf's tool events are the run's own times: duration_time is the elapsed time printed below
// it to the nanosecond, user_time and system_time the command's rusage lines (a zero is
// "<not counted>", as perf prints it).
TEST(StatOptions, ToolEventsAreTheRunsOwnTimes) {
  test::ProgramResult r = vperf_stat({"-e", "duration_time,user_time,system_time", "--", VPERF_WORKLOAD, "spin", "50"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::map<std::string, std::string> value;
  for (const test::TextRow& row : test::parse_text_rows(r.err)) {
    value[row.event] = row.value;
    EXPECT_EQ(row.unit, "ns") << row.line;
  }
  auto footer_ns = [&](const std::string& what) -> std::string {
    std::smatch m;
    if (!std::regex_search(r.err, m, std::regex("([0-9]+)\\.([0-9]{9}) seconds " + what))) return "missing";
    std::string ns = m[1].str() == "0" ? m[2].str() : m[1].str() + m[2].str();
    ns.erase(0, std::min(ns.find_first_not_of('0'), ns.size() - 1));
    return ns == "0" ? "<not counted>" : ns;
  };
  EXPECT_EQ(value["duration_time"], footer_ns("time elapsed")) << describe(r);
  EXPECT_EQ(value["user_time"], footer_ns("user")) << describe(r);
  EXPECT_EQ(value["system_time"], footer_ns("sys")) << describe(r);
  test::ProgramResult record = test::run_vperf({"record", "-e", "duration_time", "-o", "-", "--", "true"});
  EXPECT_EQ(record.exit_code, 2) << describe(record);
  EXPECT_NE(record.err.find("vperf stat -e duration_time"), std::string::npos) << describe(record);
}

// -M names the events of vperf's metrics: the same lines as those events given with -e,
// except that a metric's own line is labelled with its name, as perf labels the metrics it
// computes (perf's stat_all_metrics test looks for the name). An event this machine's PMUs do
// not publish (msr/aperf/ where the msr PMU has only tsc) says <not supported>, as a hidden
// counter does, and the rest still count.
TEST(StatOptions, MetricsCountTheirEventsAsDashE) {
  test::ProgramResult by_metric = vperf_stat({"-x", ",", "-M", "CPUs_utilized,IPC", "--", VPERF_WORKLOAD, "spin", "30"});
  test::ProgramResult by_event = vperf_stat({"-x", ",", "-e", "task-clock,cycles,instructions", "--", VPERF_WORKLOAD, "spin", "30"});
  ASSERT_EQ(by_metric.exit_code, 0) << describe(by_metric);
  ASSERT_EQ(by_event.exit_code, 0) << describe(by_event);
  std::vector<test::CsvLine> mine = test::parse_csv(by_metric.err, ","), theirs = test::parse_csv(by_event.err, ",");
  ASSERT_EQ(mine.size(), theirs.size()) << describe(by_metric);
  for (size_t i = 0; i < mine.size(); ++i) {
    ASSERT_EQ(mine[i].fields.size(), theirs[i].fields.size()) << mine[i].line;
    EXPECT_EQ(mine[i].fields[1], theirs[i].fields[1]) << mine[i].line;  // unit
    EXPECT_EQ(mine[i].fields[2], theirs[i].fields[2]) << mine[i].line;  // event
    if (mine[i].fields[2] == "task-clock") continue;
    const std::string ipc = theirs[i].fields.back() == "insn per cycle" ? "IPC" : theirs[i].fields.back();
    EXPECT_EQ(mine[i].fields.back(), ipc) << mine[i].line;  // metric unit
  }
  auto tc = test::find_csv_event(mine, "task-clock");
  ASSERT_TRUE(tc) << describe(by_metric);
  EXPECT_EQ(tc->fields.back(), "CPUs_utilized");
  auto plain = test::find_csv_event(theirs, "task-clock");
  ASSERT_TRUE(plain) << describe(by_event);
  EXPECT_EQ(plain->fields.back(), "CPUs utilized");

  test::ProgramResult msr = vperf_stat({"-x", ",", "-M", "msr_turbo_ratio", "--", "true"});
  ASSERT_EQ(msr.exit_code, 0) << describe(msr);
  for (const char* event : {"aperf", "mperf"}) {
    auto line = test::find_csv_event(test::parse_csv(msr.err, ","), std::string("msr/") + event + "/");
    ASSERT_TRUE(line) << describe(msr);
    if (!std::filesystem::exists(std::string("/sys/bus/event_source/devices/msr/events/") + event)) {
      EXPECT_EQ(line->fields[0], "<not supported>") << describe(msr);
    }
  }

  test::ProgramResult unknown = vperf_stat({"-M", "TopdownL1", "--", "true"});
  EXPECT_EQ(unknown.exit_code, 2) << describe(unknown);
  EXPECT_NE(unknown.err.find("unknown metric 'TopdownL1' (hint: vperf list metrics"), std::string::npos) << describe(unknown);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(StatErrors, MisspelledEventSuggestsTheRightOne) {
  test::ProgramResult r = vperf_stat({"-e", "cyclse", "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(r);
  EXPECT_NE(r.err.find("did you mean"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("cycles"), std::string::npos) << describe(r);
}

TEST(StatErrors, ConflictingTargetsAreUsageErrors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-e", "task-clock", "-r", "2"},                          // nothing to repeat (no command: system-wide)
           {"-e", "task-clock", "-p", "1", "-a"},                    // -p with -a
           {"-e", "task-clock", "-A", "--", "true"},                 // -A without -a
           {"-e", "task-clock", "--interval-count", "2", "--", "true"},  // without -I
       }) {
    test::ProgramResult r = vperf_stat(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(r);
  }
}

TEST(StatErrors, MissingTargetsAreOneLineEach) {
  // A PID/TID far above pid_max (4194304 at most) cannot exist; a CPU far above the online ones.
  const std::string missing = "99999999";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-e", "task-clock", "-p", missing},
           {"-e", "task-clock", "-t", missing},
           {"-e", "task-clock", "-a", "-G", "vperf-no-such-cgroup", "--", "true"},
           {"-e", "task-clock", "-C", "4095", "--", "true"},
       }) {
    test::ProgramResult r = vperf_stat(args);
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_GT(r.exit_code, 0) << "an exit, not a crash\n" << describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(r);
    EXPECT_TRUE(r.err.starts_with("vperf: error: ")) << describe(r);
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Hardware counters (need a PMU; KVM guests without one skip these)

TEST(StatHardware, InstructionsPerCycle) {
  VPERF_REQUIRE(test::has_hardware_pmu(), "a hardware PMU (cycles, instructions)");
  test::ProgramResult r = vperf_stat({"-e", "cycles,instructions", "--", VPERF_WORKLOAD, "spin", "100"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<test::TextRow> rows = test::parse_text_rows(r.err);
  ASSERT_EQ(rows.size(), 2u) << describe(r);
  EXPECT_EQ(rows[1].event, "instructions");
  EXPECT_NE(rows[1].line.find("insn per cycle"), std::string::npos) << describe(r);
  EXPECT_GT(std::stod(rows[0].value), 0);
}

TEST(StatHardware, GroupCountsTogether) {
  VPERF_REQUIRE(test::has_hardware_pmu(), "a hardware PMU (cycles, instructions)");
  test::ProgramResult r = vperf_stat({"-x,", "-e", "{cycles,instructions}", "--", VPERF_WORKLOAD, "spin", "100"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto lines = test::parse_csv(r.err);
  auto c = test::find_csv_event(lines, "cycles"), i = test::find_csv_event(lines, "instructions");
  ASSERT_TRUE(c && i) << describe(r);
  EXPECT_GT(test::parse_number(c->fields[0]).value_or(0), 0);
  EXPECT_GT(test::parse_number(i->fields[0]).value_or(0), 0);
  EXPECT_EQ(c->fields[3], i->fields[3]) << "a group runs together: the same run time";
  EXPECT_EQ(c->fields[4], "100.00");
  EXPECT_EQ(i->fields[4], "100.00");
}

TEST(StatHardware, UserModifierCountsLessThanAll) {
  VPERF_REQUIRE(test::has_hardware_pmu(), "a hardware PMU (cycles, instructions)");
  test::ProgramResult r =
      vperf_stat({"-x,", "-e", "instructions:u,instructions", "--", VPERF_WORKLOAD, "getppid", "20000"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::optional<double> user = csv_count(r.err, "instructions:u"), all = csv_count(r.err, "instructions");
  ASSERT_TRUE(user && all) << describe(r);
  EXPECT_GT(*user, 0);
  EXPECT_LT(*user, *all) << "20000 system calls run kernel instructions that :u leaves out";
}

TEST(StatHardware, MultiplexingShowsTheRunningShare) {
  VPERF_REQUIRE(test::has_hardware_pmu(), "a hardware PMU (cycles, instructions)");
  std::string events;
  for (int i = 0; i < 6; ++i) events += std::string(events.empty() ? "" : ",") + "cycles,instructions,branches,branch-misses";
  test::ProgramResult r = vperf_stat({"-e", events, "--", VPERF_WORKLOAD, "spin", "300"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  int multiplexed = 0;
  for (const test::TextRow& row : test::parse_text_rows(r.err)) {
    size_t open = row.line.rfind("  (");
    if (open != std::string::npos && row.line.ends_with("%)") && row.line.find("( +-") == std::string::npos) ++multiplexed;
  }
  EXPECT_GT(multiplexed, 0) << "24 hardware events cannot all be on the counters at once\n" << describe(r);
}

}  // namespace
}  // namespace vperf
