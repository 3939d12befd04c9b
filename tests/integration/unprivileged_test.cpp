// Every command as a user without privileges (nobody, through setpriv), at
// kernel.perf_event_paranoid 2 and 3, beside perf as the same user: each either works or fails
// with one clear line ("vperf: error: ..."; never "this is a bug in vperf", never a C++
// exception's text), never exits 0 after failing, and works wherever perf works. tracefs is
// mounted as the README tells users to (mode 0700: closed to them). The sysctls are set for the
// test and restored after; the settings used are invisible to the root processes of the other
// tests that share this kernel (root has CAP_PERFMON and CAP_SYSLOG).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/kernel_setting.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

constexpr int kNobody = 65534;

// A scratch directory that nobody owns, with a copy of the bundled workload in it (the build
// tree may be closed to other users).
class NobodysDirectory {
 public:
  NobodysDirectory() {
    std::filesystem::copy_file(VPERF_WORKLOAD, workload());
    std::filesystem::copy_file(VPERF_WORKLOAD_DWARF, file("vperf-workload-dwarf"));
    // A trace.dat that vperf ftrace record made (the trace_dat fuzz seed).
    std::filesystem::copy_file(std::string(VPERF_SOURCE_DIR) + "/tests/fuzz/corpus/trace_dat/v6-getppid-stacktrace", file("trace.dat"));
    for (const std::filesystem::path& path : {tree_.root(), workload(), file("vperf-workload-dwarf"), file("trace.dat")})
      if (::chown(path.c_str(), kNobody, kNobody) != 0) throw std::runtime_error("cannot give " + path.string() + " to nobody");
  }
  std::filesystem::path file(const std::string& name) const { return tree_.root() / name; }
  std::filesystem::path workload() const { return tree_.root() / "vperf-workload"; }
  std::string path() const { return tree_.root().string(); }

 private:
  TempTree tree_;
};

std::vector<std::string> as_nobody(const std::vector<std::string>& argv) {
  std::vector<std::string> all = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  all.insert(all.end(), argv.begin(), argv.end());
  return all;
}

ProgramResult vperf_as_nobody(const NobodysDirectory& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {VPERF_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(as_nobody(argv), {{"HOME", dir.path()}});
}

ProgramResult perf_as_nobody(const NobodysDirectory& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"perf"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(as_nobody(argv), {{"HOME", dir.path()}});
}

std::string joined(const std::vector<std::string>& words) {
  std::string text = "vperf";
  for (const std::string& w : words) text += " " + w;
  return text;
}

// What a user must never see, whatever the outcome.
void expect_no_internal_text(const std::string& what, const ProgramResult& r) {
  for (const char* text : {"this is a bug in vperf", "filesystem error", "std::", "basic_string", "bad_alloc", "terminate called",
                           "what():"})
    EXPECT_EQ(r.err.find(text), std::string::npos) << what << " printed '" << text << "':\n" << r.err;
}

// Works (status 0, no error line), or fails with exactly one error line, the last one printed.
void expect_works_or_one_clear_line(const std::string& what, const ProgramResult& r) {
  ASSERT_GE(r.exit_code, 0) << what << " died of a signal:\n" << r.err;
  expect_no_internal_text(what, r);
  const size_t errors = count_lines_with(r.err, "vperf: error:");
  if (r.exit_code == 0) {
    EXPECT_EQ(errors, 0u) << what << " exited 0 after an error:\n" << r.err;
    return;
  }
  EXPECT_EQ(errors, 1u) << what << " exited " << r.exit_code << " with " << errors << " error lines:\n" << r.err;
  std::string last;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) last = line;
  EXPECT_TRUE(last.starts_with("vperf: error: ")) << what << ": the error is not the last line:\n" << r.err;
}

enum class Outcome { works, fails, either };

struct CommandCase {
  std::vector<std::string> args;
  Outcome outcome;
  std::string in_error = {};  // the error line names this (the cause, not a symptom)
};

// The table of commands, as a user runs them; `dir` holds their inputs and outputs.
std::vector<CommandCase> every_command(const NobodysDirectory& dir) {
  const std::string data = dir.file("user.data").string(), w = dir.workload().string();
  const std::string missing = dir.file("missing.data").string();
  return {
      {{"list"}, Outcome::works},
      {{"list", "sw"}, Outcome::works},
      {{"encode", "r13c"}, Outcome::works},
      {{"decode", "r13c"}, Outcome::works},
      {{"check"}, Outcome::works},
      {{"stat", "-e", "task-clock", "--", "true"}, Outcome::works},
      {{"stat", "--", "true"}, Outcome::works},
      {{"stat", "-e", "task-clock", "--max-overhead", "1", "--", "true"}, Outcome::works},
      {{"stat", "-a", "-e", "task-clock", "--", "true"}, Outcome::fails, "perf_event_paranoid"},
      {{"stat", "-e", "uprobe:" + w + ":probe_target", "--", "true"}, Outcome::fails, "tracefs"},
      {{"record", "-o", data, "--", w, "spin", "20"}, Outcome::works},
      {{"report", "-i", data}, Outcome::works},
      {{"script", "-i", data}, Outcome::works},
      {{"annotate", "-i", data}, Outcome::either},
      {{"flamegraph", "-i", data, "-o", dir.file("user.svg").string()}, Outcome::works},
      {{"report", "-i", missing}, Outcome::fails, "missing.data"},
      {{"record", "-a", "-o", dir.file("all.data").string(), "--", "true"}, Outcome::fails, "perf_event_paranoid"},
      {{"probe", "-l"}, Outcome::fails, "tracefs"},
      {{"probe", "-x", w, "probe_target"}, Outcome::fails, "tracefs"},
      {{"probe", "-d", "probe_vperf_workload:*"}, Outcome::fails, "tracefs"},
      {{"probe", "-F", "-x", w}, Outcome::works},
      {{"probe", "-L", "probe_target", "-x", dir.file("vperf-workload-dwarf").string()}, Outcome::works},
      {{"probe", "-V", "probe_target", "-x", dir.file("vperf-workload-dwarf").string()}, Outcome::works},
      {{"probe", "--list-sdt", "-x", w}, Outcome::works},
      {{"probe", "-n", "-x", dir.file("vperf-workload-dwarf").string(), "probe_target"}, Outcome::fails, "tracefs"},
      {{"probe", "--calibrate"}, Outcome::fails, "tracefs"},
      {{"ftrace", "--", "true"}, Outcome::fails, "tracefs"},
      {{"ftrace", "-F"}, Outcome::fails, "tracefs"},
      {{"ftrace", "latency", "-T", "schedule", "--", "true"}, Outcome::fails, "tracefs"},
      {{"ftrace", "record", "-e", "syscalls:sys_enter_getppid", "-o", dir.file("t.dat").string(), "--", "true"}, Outcome::fails, "tracefs"},
      {{"ftrace", "report", "-i", dir.file("missing.dat").string()}, Outcome::fails, "missing.dat"},
      {{"ftrace", "start", "-e", "sched:sched_switch"}, Outcome::fails, "tracefs"},
      {{"ftrace", "stop"}, Outcome::fails, "tracefs"},
      {{"ftrace", "show"}, Outcome::fails, "tracefs"},
      {{"ftrace", "reset"}, Outcome::fails, "tracefs"},
      {{"ftrace", "marker", "hello"}, Outcome::fails, "tracefs"},
      {{"ftrace", "list", "-t"}, Outcome::fails, "tracefs"},
      {{"ftrace", "list", "-e"}, Outcome::fails, "tracefs"},
      {{"ftrace", "pipe"}, Outcome::fails, "tracefs"},
      {{"ftrace", "snapshot"}, Outcome::fails, "tracefs"},
      {{"ftrace", "report", "-i", dir.file("trace.dat").string()}, Outcome::works},
      {{"flamegraph", "-i", dir.file("trace.dat").string(), "-o", dir.file("trace.svg").string()}, Outcome::works},
      {{"kvm", "list"}, Outcome::either},
      {{"kvm", "stat", "record", "-o", dir.file("kvm.data").string(), "--", "true"}, Outcome::fails, "permission"},
      {{"kvm", "stat", "live", "-d", "0.1"}, Outcome::fails, "permission"},
      {{"kvm", "stat", "report", "-i", missing}, Outcome::fails, "missing.data"},
      {{"kvm", "record", "-o", dir.file("guest.data").string(), "--", "true"}, Outcome::works},
      {{"kvm", "report", "-i", dir.file("guest.data").string()}, Outcome::either},
      {{"msr", "read", "0x10"}, Outcome::fails, "msr"},
      {{"turbo"}, Outcome::either},
  };
}

void run_every_command(const char* paranoid) {
  VPERF_REQUIRE(running_as_root(), "root (to run commands as nobody and set kernel.perf_event_paranoid)");
  VPERF_REQUIRE(!find_program("setpriv").empty(), "setpriv on PATH");
  VPERF_REQUIRE(has_tracefs(), "tracefs");
  KernelSetting setting("perf_event_paranoid", paranoid);
  VPERF_REQUIRE(setting.applied(), std::string("a writable kernel.perf_event_paranoid (to set ") + paranoid + ")");
  NobodysDirectory dir;
  for (const CommandCase& c : every_command(dir)) {
    const std::string what = joined(c.args) + " (paranoid " + paranoid + ")";
    ProgramResult r = vperf_as_nobody(dir, c.args);
    expect_works_or_one_clear_line(what, r);
    if (c.outcome == Outcome::works) {
      EXPECT_EQ(r.exit_code, 0) << what << ":\n" << r.err;
    }
    if (c.outcome == Outcome::fails) {
      EXPECT_NE(r.exit_code, 0) << what << " worked:\n" << r.out << r.err;
      EXPECT_NE(r.err.find(c.in_error), std::string::npos) << what << " does not name '" << c.in_error << "':\n" << r.err;
    }
  }
}

TEST(Unprivileged, EveryCommandWorksOrFailsInOneClearLineAtParanoid2) { run_every_command("2"); }
TEST(Unprivileged, EveryCommandWorksOrFailsInOneClearLineAtParanoid3) { run_every_command("3"); }

// The reported case, beside perf: perf stat counts task-clock for a user and exits 0 at
// paranoid 2 and 3 (a kernel without Debian's patch treats 3 as 2), so vperf must too.
TEST(Unprivileged, StatCountsAndExitsAsPerfStatDoes) {
  VPERF_REQUIRE(running_as_root(), "root (to run commands as nobody and set kernel.perf_event_paranoid)");
  VPERF_REQUIRE(!find_program("perf").empty(), "perf on PATH");
  VPERF_REQUIRE(has_tracefs(), "tracefs (the failure was reading it)");
  NobodysDirectory dir;
  for (const char* paranoid : {"2", "3"}) {
    KernelSetting setting("perf_event_paranoid", paranoid);
    VPERF_REQUIRE(setting.applied(), std::string("a writable kernel.perf_event_paranoid (to set ") + paranoid + ")");
    const std::vector<std::string> args = {"stat", "-e", "task-clock", "--", "true"};
    ProgramResult perf = perf_as_nobody(dir, args);
    ProgramResult vperf = vperf_as_nobody(dir, args);
    EXPECT_EQ(vperf.exit_code, perf.exit_code) << "paranoid " << paranoid << "\nperf:\n" << perf.err << "vperf:\n" << vperf.err;
    EXPECT_EQ(count_lines_with(vperf.err, "task-clock"), count_lines_with(perf.err, "task-clock")) << vperf.err;
    EXPECT_EQ(vperf.err.find("vperf: error"), std::string::npos) << vperf.err;
  }
}

// perf 6.1's report warns that the kernel's address maps were restricted when the recording's
// events sample the kernel but the recording holds no kernel map (perf record could not read
// _text's address): it decides from the recording, so it warns for root too, and not with -q
// nor for a user-space-only recording. kernel.kptr_restrict 1 with paranoid 1 gives nobody
// kernel samples but no kernel addresses (2 would hide them from root as well, and from the
// other tests that share this kernel).
TEST(UnprivilegedReport, RestrictedKernelMapsAreWarnedAboutAsPerfReportDoes) {
  VPERF_REQUIRE(running_as_root(), "root (to run commands as nobody and set the sysctls)");
  VPERF_REQUIRE(!find_program("perf").empty(), "perf on PATH");
  NobodysDirectory dir;
  const std::string vperf_data = dir.file("vperf.data").string(), perf_data = dir.file("perf.data").string();
  const std::string user_data = dir.file("user.data").string();
  const std::vector<std::string> workload = {"dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=20000"};
  {
    KernelSetting paranoid("perf_event_paranoid", "1");
    KernelSetting kptr("kptr_restrict", "1");
    VPERF_REQUIRE(paranoid.applied() && kptr.applied(), "writable kernel.perf_event_paranoid and kernel.kptr_restrict");
    std::vector<std::string> args = {"record", "-e", "cpu-clock", "-o", vperf_data, "--"};
    args.insert(args.end(), workload.begin(), workload.end());
    // perf record warns as it records, and so does vperf record (on one line).
    ProgramResult r = vperf_as_nobody(dir, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count_lines_with(r.err, "vperf: warning: Kernel address maps (/proc/{kallsyms,modules}) are restricted"), 1u) << r.err;
    args[4] = perf_data;
    r = perf_as_nobody(dir, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_NE(r.err.find("WARNING: Kernel address maps (/proc/{kallsyms,modules}) are restricted"), std::string::npos) << r.err;
    args = {"record", "-e", "cpu-clock:u", "-o", user_data, "--"};
    args.insert(args.end(), workload.begin(), workload.end());
    r = vperf_as_nobody(dir, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("Kernel address maps"), std::string::npos) << "a user-space recording needs no kernel map:\n" << r.err;
  }
  const std::string perfs_warning = "Kernel address maps (/proc/{kallsyms,modules}) were restricted.";
  const std::string vperfs_warning = "vperf: warning: Kernel address maps (/proc/{kallsyms,modules}) were restricted.";
  // perf's own words, so the two are compared, not assumed.
  ProgramResult perf = perf_as_nobody(dir, {"report", "--stdio", "-i", perf_data});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  ASSERT_NE(perf.err.find(perfs_warning), std::string::npos) << perf.err;
  ASSERT_NE(perf.err.find("As no suitable kallsyms nor vmlinux was found, kernel samples\ncan't be resolved."), std::string::npos)
      << perf.err;
  EXPECT_EQ(perf_as_nobody(dir, {"report", "--stdio", "-q", "-i", perf_data}).err.find(perfs_warning), std::string::npos);
  EXPECT_EQ(perf_as_nobody(dir, {"report", "--stdio", "-i", user_data}).err.find(perfs_warning), std::string::npos);
  for (const std::string& data : {vperf_data, perf_data}) {
    ProgramResult as_nobody = vperf_as_nobody(dir, {"report", "-i", data});
    EXPECT_EQ(as_nobody.exit_code, 0) << as_nobody.err;
    EXPECT_EQ(count_lines_with(as_nobody.err, vperfs_warning), 1u) << data << ":\n" << as_nobody.err;
    EXPECT_NE(as_nobody.err.find("As no suitable kallsyms nor vmlinux was found, kernel samples can't be resolved."), std::string::npos)
        << as_nobody.err;
    // From the recording, not the reader: root, who reads real addresses, is told too.
    ProgramResult as_root = run_vperf({"report", "-i", data});
    EXPECT_EQ(count_lines_with(as_root.err, vperfs_warning), 1u) << data << " as root:\n" << as_root.err;
    EXPECT_EQ(vperf_as_nobody(dir, {"report", "-q", "-i", data}).err.find(vperfs_warning), std::string::npos);
  }
  EXPECT_EQ(vperf_as_nobody(dir, {"report", "-i", user_data}).err.find(vperfs_warning), std::string::npos);
  // A recording with the kernel's map (root's, at kptr_restrict 0 here) gets no warning from either.
  VPERF_REQUIRE(kallsyms_shows_addresses(), "kernel addresses in /proc/kallsyms for root (kptr_restrict < 2)");
  const std::string root_data = dir.file("root.data").string();
  std::vector<std::string> args = {"record", "-e", "cpu-clock", "-o", root_data, "--"};
  args.insert(args.end(), workload.begin(), workload.end());
  ProgramResult recorded = run_vperf(args);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  EXPECT_EQ(recorded.err.find("Kernel address maps"), std::string::npos) << recorded.err;
  ProgramResult rooted = run_vperf({"report", "-i", root_data});
  EXPECT_EQ(rooted.exit_code, 0) << rooted.err;
  EXPECT_EQ(rooted.err.find(vperfs_warning), std::string::npos) << rooted.err;
}

}  // namespace
}  // namespace vperf::test
