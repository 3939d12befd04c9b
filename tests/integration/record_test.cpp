// vperf record against ground truth: perf 6.1's own report and script read vperf's perf.data,
// exact sample counts from tracepoints sampled at every hit, the bundled workload's known
// profile, pipe mode, perf.data.old, and a recording ended by SIGINT.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

class Record : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(!test::find_program("perf").empty(), "needs Linux perf (apt-get install linux-perf) as the reference reader");
  }
  std::string file(const std::string& name) const { return (scratch_.root() / name).string(); }

  test::TempTree scratch_;  // removed with everything in it
};

size_t count_lines(const std::string& text, const std::string& needle) {
  size_t n = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) ++n;
  return n;
}

// "  65.12%  vperf-workload  vperf-workload  [.] spin_leaf_hash" -> symbol -> percent
std::map<std::string, double> perf_report_percent_by_symbol(const std::string& data) {
  test::ProgramResult r = test::run_program({"perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "sym", "-q"});
  std::map<std::string, double> out;
  std::regex row(R"(^\s*([0-9.]+)%\s+\[[.k]\]\s+(\S+))");
  std::istringstream in(r.out);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, row)) out[m[2]] += std::stod(m[1]);
  return out;
}

TEST_F(Record, TracepointSamplesAreExactAndPerfScriptReadsThem) {
  VPERF_REQUIRE(test::has_tracefs(), "needs tracefs for syscalls:sys_enter_getppid");
  std::string data = file("getppid.data");
  test::ProgramResult rec = test::run_vperf(
      {"record", "-e", "syscalls:sys_enter_getppid", "-o", data, "--", VPERF_WORKLOAD, "getppid", "5000"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_TRUE(std::regex_search(rec.err, std::regex(R"(\[ vperf record: Captured and wrote [0-9.]+ MB \S+ \(5000 samples\) \])")))
      << rec.err;
  test::ProgramResult script = test::run_program({"perf", "script", "-i", data});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  EXPECT_EQ(count_lines(script.out, "syscalls:sys_enter_getppid"), 5000u) << script.out.substr(0, 2000);
  EXPECT_NE(script.out.find("vperf-workload"), std::string::npos) << "samples carry the workload's comm";
}

TEST_F(Record, AFilterKeepsOnlyMatchingHits) {
  VPERF_REQUIRE(test::has_tracefs(), "needs tracefs");
  std::string data = file("filtered.data");
  test::ProgramResult rec = test::run_vperf({"record", "-e", "syscalls:sys_enter_getppid", "--filter", "common_pid == 1",
                                             "-o", data, "--", VPERF_WORKLOAD, "getppid", "3000"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find("(0 samples)"), std::string::npos) << rec.err;
  test::ProgramResult bad = test::run_vperf({"record", "-e", "syscalls:sys_enter_getppid", "--filter", "no_such_field == 1",
                                             "-o", file("bad.data"), "--", VPERF_WORKLOAD, "getppid", "1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(count_lines(bad.err, "vperf: error:"), 1u) << bad.err;
}

TEST_F(Record, WorkloadProfileHasTheDesignedShapeInPerfReport) {
  std::string data = file("spin.data");
  test::ProgramResult rec =
      test::run_vperf({"record", "-e", "cpu-clock", "-F", "2000", "-g", "-o", data, "--", VPERF_WORKLOAD, "spin", "500"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  std::map<std::string, double> percent = perf_report_percent_by_symbol(data);
  ASSERT_TRUE(percent.count("spin_leaf_hash") && percent.count("spin_leaf_math")) << rec.err;
  // spin.cpp gives the hash phase about twice the math phase's work (65% / 34% measured with perf record).
  double hash = percent["spin_leaf_hash"], math = percent["spin_leaf_math"];
  EXPECT_GT(hash + math, 80.0);
  EXPECT_NEAR(hash / (hash + math), 0.65, 0.08) << "hash " << hash << "% math " << math << "%";
  test::ProgramResult callers = test::run_program({"perf", "report", "-i", data, "--stdio", "--children", "--sort", "sym", "-q", "-g", "none"});
  EXPECT_NE(callers.out.find("spin_phase_outer"), std::string::npos) << "frame-pointer chains reach the callers";
}

TEST_F(Record, NoPmuFallsBackToCpuClockAndSaysSo) {
  VPERF_REQUIRE(!test::has_hardware_pmu(), "checks the fallback that only happens without hardware cycles");
  std::string data = file("default.data");
  test::ProgramResult rec = test::run_vperf({"record", "-o", data, "--", VPERF_WORKLOAD, "spin", "200"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find("sampling cpu-clock instead"), std::string::npos) << rec.err;
  test::ProgramResult header = test::run_program({"perf", "report", "-i", data, "--header-only"});
  EXPECT_NE(header.out.find("cpu-clock"), std::string::npos) << header.out;
}

TEST_F(Record, PipeModeIsReadByPerf) {
  VPERF_REQUIRE(test::has_tracefs(), "needs tracefs");
  test::ProgramResult piped = test::run_program(
      {"sh", "-c",
       std::string(VPERF_BINARY) + " record -q -e syscalls:sys_enter_getppid -o - -- " + VPERF_WORKLOAD +
           " getppid 777 | perf script -i - | grep -c sys_enter_getppid"});
  EXPECT_EQ(piped.out, "777\n") << piped.err;
}

TEST_F(Record, AnExistingFileBecomesDotOld) {
  std::string data = file("perf.data");
  ASSERT_EQ(test::run_vperf({"record", "-q", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "exit", "0"}).exit_code, 0);
  auto first_size = fs::file_size(data);
  test::ProgramResult again = test::run_vperf({"record", "-q", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "exit", "3"});
  EXPECT_EQ(again.exit_code, 3) << "the command's exit status";
  ASSERT_TRUE(fs::exists(data + ".old"));
  EXPECT_EQ(fs::file_size(data + ".old"), first_size);
}

TEST_F(Record, SigintEndsARecordingWithAReadableFile) {
  std::string data = file("sigint.data");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(VPERF_BINARY, VPERF_BINARY, "record", "-q", "-e", "cpu-clock", "-a", "-o", data.c_str(), nullptr);
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  test::ProgramResult report = test::run_program({"perf", "report", "-i", data, "--stdio", "--sort", "comm", "-q"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("%"), std::string::npos) << report.out << report.err;
}

TEST_F(Record, BadInputIsOneErrorLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"record", "-e", "cyclse", "--", "true"},
           {"record", "-m", "3", "--", "true"},
           {"record", "--call-graph", "lbr", "--", "true"},
           {"record", "-p", "999999999"},
           {"record"}}) {
    test::ProgramResult r = test::run_vperf(args);
    EXPECT_NE(r.exit_code, 0) << args[1];
    EXPECT_EQ(count_lines(r.err, "vperf: error:"), 1u) << r.err;
  }
  EXPECT_FALSE(fs::exists("perf.data.old")) << "a refused command renames nothing";
}

}  // namespace
}  // namespace vperf
