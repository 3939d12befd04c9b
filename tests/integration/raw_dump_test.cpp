// vperf script -D and vperf report -D against perf 6.1's on the same files, byte for byte:
// recordings by perf and by vperf, of cpu-clock with and without callchains, --call-graph dwarf
// (registers and user stacks), a tracepoint, a system-wide one (FORK and COMM of every task,
// several FINISHED_ROUNDs) and pipe streams (HEADER_ATTR, FEATURE, TRACING_DATA records).
// perf script -D prints each sample's script line after its dump; the lines are selected with
// -F to fields without symbol names (symbol naming is script_test's subject).
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf {
namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

// "line N differs: ..." for the first difference, empty when equal.
std::string first_difference(const std::string& expected, const std::string& actual) {
  if (expected == actual) return "";
  std::istringstream a(expected), b(actual);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "outputs differ only in the final newline";
    if (!more_a || !more_b || la != lb)
      return "line " + std::to_string(n) + " differs (of " + std::to_string(std::count(expected.begin(), expected.end(), '\n')) +
             " vs " + std::to_string(std::count(actual.begin(), actual.end(), '\n')) + " lines)\n perf:  " +
             (more_a ? la : "<end>") + "\n vperf: " + (more_b ? lb : "<end>");
  }
}

// perf 6.1 reading a pipe names the vdso by the copy it extracts ("/tmp/perf-vdso.so-XXXXXX", a
// new name each run) where it names it [vdso] in a file; vperf says [vdso] in both.
std::string vdso_named_as_in_a_file(std::string perf_output) {
  static const std::regex extracted_vdso(R"(dso: /tmp/perf-vdso\.so-\w{6}\n)");
  return std::regex_replace(perf_output, extracted_vdso, "dso: [vdso]\n");
}

// Script lines without symbols: what a -D comparison can hold perf to byte for byte.
const std::string kFields = "comm,tid,time,event,ip";

class RawDump : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::find_program("perf").empty()) GTEST_SKIP() << "needs Linux perf 6.1 as the reference";
  }

  std::string file(const std::string& name) const { return (scratch_.root() / name).string(); }

  void record(const std::string& program, const std::string& data, const std::string& args) {
    test::ProgramResult r = test::run_program(
        {"sh", "-c", program + " record -q -o " + quote(data) + " " + args + " >/dev/null 2>&1"});
    ASSERT_EQ(r.exit_code, 0) << program << " record " << args;
  }
  void record_pipe(const std::string& program, const std::string& stream, const std::string& args) {
    test::ProgramResult r =
        test::run_program({"sh", "-c", program + " record -q -o - " + args + " > " + quote(stream) + " 2>/dev/null"});
    ASSERT_EQ(r.exit_code, 0) << program << " record -o - " << args;
  }
  // `program` (perf or vperf) reading `data` with `arguments`; "-" reads `data` as a stream.
  static std::string run(const std::string& program, const std::string& data, const std::string& arguments,
                         bool piped) {
    const std::string input = piped ? "-i - < " + quote(data) : "-i " + quote(data);
    test::ProgramResult r = test::run_program({"sh", "-c", program + " " + arguments + " " + input + " 2>/dev/null"});
    EXPECT_EQ(r.exit_code, 0) << program << " " << arguments;
    return r.out;
  }

  // perf script -D and perf report -D print what vperf's do, on the file and (when `piped`) on
  // it as a pipe.
  void expect_same_dumps(const std::string& data, bool piped = false) {
    for (const std::string& command : {"script -D -F " + kFields, std::string("report -D")}) {
      const std::string theirs = vdso_named_as_in_a_file(run("perf", data, command, piped));
      ASSERT_NE(theirs.find("PERF_RECORD_SAMPLE"), std::string::npos) << "perf " << command << " dumped no sample";
      const std::string ours = run(quote(VPERF_BINARY), data, command, piped);
      EXPECT_EQ(first_difference(theirs, ours), "") << command << " -i " << data;
    }
  }

  test::TempTree scratch_;
};

TEST_F(RawDump, PerfsCpuClockRecordingDumpsAsPerf) {
  const std::string data = file("perf-plain.data");
  record("perf", data, "-e cpu-clock -c 100000 -- " + std::string(VPERF_WORKLOAD) + " getppid 100000");
  expect_same_dumps(data);
}

TEST_F(RawDump, VperfsCallchainRecordingDumpsAsPerf) {
  const std::string data = file("vperf-g.data");
  record(quote(VPERF_BINARY), data, "-g -e cpu-clock -- " + std::string(VPERF_WORKLOAD) + " spin 200");
  expect_same_dumps(data);
  const std::string theirs = file("perf-g.data");
  record("perf", theirs, "-g -e cpu-clock -- " + std::string(VPERF_WORKLOAD) + " spin 200");
  expect_same_dumps(theirs);
}

// record -s: the PERF_RECORD_READ of each exiting task, its count and read_format's fields.
TEST_F(RawDump, TaskCountRecordsOfRecordStatDumpAsPerf) {
  const std::string command = " -s -e cpu-clock -- sh -c '" + std::string(VPERF_WORKLOAD) + " spin 20; true'";
  const std::string mine = file("vperf-s.data"), theirs = file("perf-s.data");
  record(quote(VPERF_BINARY), mine, command);
  record("perf", theirs, command);
  for (const std::string& data : {mine, theirs}) {
    expect_same_dumps(data);
    EXPECT_NE(test::run_vperf({"report", "-D", "-i", data}).out.find("PERF_RECORD_READ: "), std::string::npos);
  }
}

TEST_F(RawDump, DwarfRegistersAndUserStacksDumpAsPerf) {
  const std::string data = file("dwarf.data");
  record("perf", data, "--call-graph dwarf,2048 -e cpu-clock -c 500000 -- " + std::string(VPERF_WORKLOAD) + " spin 100");
  const std::string theirs = run("perf", data, "report -D", false);
  ASSERT_NE(theirs.find("... user regs: mask 0xff0fff ABI 64-bit"), std::string::npos);
  ASSERT_NE(theirs.find("... ustack: size "), std::string::npos);
  EXPECT_EQ(first_difference(theirs, run(quote(VPERF_BINARY), data, "report -D", false)), "");
  const std::string ours = file("vperf-dwarf.data");
  record(quote(VPERF_BINARY), ours, "--call-graph dwarf,2048 -e cpu-clock -- " + std::string(VPERF_WORKLOAD) + " spin 100");
  EXPECT_EQ(first_difference(run("perf", ours, "report -D", false), run(quote(VPERF_BINARY), ours, "report -D", false)), "");
}

TEST_F(RawDump, TracepointRecordingsDumpAsPerf) {
  VPERF_REQUIRE(test::has_tracefs(), "tracefs for syscalls:sys_enter_getppid");
  const std::string data = file("tp.data");
  record("perf", data, "-e syscalls:sys_enter_getppid -- " + std::string(VPERF_WORKLOAD) + " getppid 5");
  expect_same_dumps(data);
  const std::string ours = file("vperf-tp.data");
  record(quote(VPERF_BINARY), ours, "-e syscalls:sys_enter_getppid -- " + std::string(VPERF_WORKLOAD) + " getppid 5");
  expect_same_dumps(ours);
}

TEST_F(RawDump, SystemWideRecordingsWithForksAndRoundsDumpAsPerf) {
  // perf synthesizes a FORK and a COMM for every task; vperf a COMM and the maps.
  const std::string theirs = file("perf-all.data");
  record("perf", theirs, "-a -e cpu-clock -c 1000000 -- " + std::string(VPERF_WORKLOAD) + " sleep 100");
  ASSERT_NE(run("perf", theirs, "report -D", false).find("PERF_RECORD_FORK("), std::string::npos);
  expect_same_dumps(theirs);
  const std::string ours = file("vperf-all.data");
  record(quote(VPERF_BINARY), ours, "-a -e cpu-clock -c 1000000 -- " + std::string(VPERF_WORKLOAD) + " sleep 100");
  ASSERT_NE(run("perf", ours, "report -D", false).find("PERF_RECORD_FINISHED_ROUND"), std::string::npos);
  expect_same_dumps(ours);
}

TEST_F(RawDump, PipeStreamsDumpAsPerf) {
  const std::string perf_stream = file("perf.pipe");
  record_pipe("perf", perf_stream, "-g -e cpu-clock -c 200000 -- " + std::string(VPERF_WORKLOAD) + " spin 100");
  const std::string theirs = run("perf", perf_stream, "report -D", true);
  ASSERT_NE(theirs.find("0@pipe ["), std::string::npos);
  ASSERT_NE(theirs.find("PERF_RECORD_FEATURE"), std::string::npos);
  expect_same_dumps(perf_stream, true);
  const std::string vperf_stream = file("vperf.pipe");
  record_pipe(quote(VPERF_BINARY), vperf_stream, "-g -e cpu-clock -- " + std::string(VPERF_WORKLOAD) + " spin 100");
  expect_same_dumps(vperf_stream, true);
  if (test::has_tracefs()) {
    const std::string tracepoints = file("tp.pipe");
    record_pipe("perf", tracepoints, "-e syscalls:sys_enter_getppid -- " + std::string(VPERF_WORKLOAD) + " getppid 5");
    ASSERT_NE(run("perf", tracepoints, "report -D", true).find("PERF_RECORD_TRACING_DATA"), std::string::npos);
    expect_same_dumps(tracepoints, true);
  }
}

}  // namespace
}  // namespace vperf
