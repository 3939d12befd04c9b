// Issue 14, hostile input and privilege, through the real binary: paths that input names are
// opened only when they are regular files (a FIFO would hang vperf, a device node must never be
// read as root because a file said so), numeric options are range-checked where they are
// parsed, output files are replaced whole and never written through a symlink, and repeated
// event modifiers are refused as perf refuses them. Each case ran into the defect before the fix:
// a hang (bounded here by timeout(1), exit 124), endless output, or a write through a link.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

// Every command here ends at once when correct; timeout(1) turns a hang into exit 124.
test::ProgramResult vperf_bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"timeout", "-s", "KILL", "60", VPERF_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_program(argv);
}

size_t line_count(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

void expect_one_error_line(const test::ProgramResult& r, int exit_code, const std::string& says) {
  EXPECT_EQ(r.exit_code, exit_code) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("vperf: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class HostilePathsAndOptions : public ::testing::Test {
 protected:
  fs::path path(const std::string& name) const { return scratch_.root() / name; }
  fs::path fifo(const std::string& name) const {
    fs::path p = path(name);
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p;
  }
  test::TempTree scratch_;
};

TEST_F(HostilePathsAndOptions, FifosNamedAsInputFilesAreRefusedNotOpened) {
  fs::path f = fifo("input.fifo");
  expect_one_error_line(vperf_bounded({"check", "--cpuid-dump", f.string()}), 1, "not a regular file");
  expect_one_error_line(vperf_bounded({"list", "--pmc", "--model", "skx", "--perfmon", f.string()}), 1,
                        "not a regular file");
  expect_one_error_line(vperf_bounded({"encode", "--model", "skx", "--perfmon", f.string(), "INST_RETIRED.ANY_P"}), 1,
                        "not a regular file");
}

// A recording whose mapped binary is replaced by a FIFO, and whose pid has a FIFO for its JIT
// map in /tmp: report, script, annotate and flamegraph must finish, the frames unresolved.
TEST_F(HostilePathsAndOptions, FifosNamedByAPerfDataAreNotOpened) {
  fs::path binary = path("workload-copy");
  fs::copy_file(VPERF_WORKLOAD, binary);
  fs::permissions(binary, fs::perms::owner_all);
  fs::path data = path("fifo-mapping.data");
  test::ProgramResult rec = test::run_vperf({"record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data.string(),
                                             "--", binary.string(), "spin", "150"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  test::ProgramResult pids = test::run_vperf({"script", "-i", data.string(), "-F", "pid"});
  ASSERT_EQ(pids.exit_code, 0) << pids.err;
  const std::string pid = std::string(pids.out.substr(0, pids.out.find('\n')));
  fs::remove(binary);
  ASSERT_EQ(::mkfifo(binary.c_str(), 0600), 0);
  const fs::path jit_map = "/tmp/perf-" + std::to_string(std::stoi(pid)) + ".map";
  bool made_jit_fifo = !fs::exists(jit_map) && ::mkfifo(jit_map.c_str(), 0600) == 0;

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "-i", data.string(), "--stdio"}, {"script", "-i", data.string()},
        {"annotate", "-i", data.string(), "--stdio"},
        {"flamegraph", "-i", data.string(), "-o", path("fifo.svg").string()}}) {
    test::ProgramResult r = vperf_bounded(args);
    SCOPED_TRACE(args[0]);
    EXPECT_NE(r.exit_code, 124) << "hung on a FIFO";
    EXPECT_NE(r.exit_code, -1) << "killed: " << r.err;
    if (args[0] != "annotate") {
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
  if (made_jit_fifo) fs::remove(jit_map);
}

TEST_F(HostilePathsAndOptions, NumericOptionsOutsideTheirRangeAreUsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"kvm", "stat", "live", "-d", "inf"},         {"kvm", "stat", "live", "-d", "nan"},
      {"kvm", "stat", "live", "-d", "1e300"},       {"kvm", "stat", "live", "-d", "-1"},
      {"kvm", "stat", "report", "--vcpu", "-1"},    {"record", "-F", "inf", "--", "true"},
      {"record", "-F", "0", "--", "true"},          {"record", "-c", "18446744073709551616", "--", "true"},
      {"record", "-m", "1e9", "--", "true"},        {"stat", "-I", "nan", "--", "true"},
      {"stat", "-r", "0", "--", "true"},            {"stat", "--timeout", "-5", "--", "true"},
      {"report", "--percent-limit", "101"},         {"report", "--percent-limit", "nan"},
      {"script", "--max-stack", "99999999999"},     {"flamegraph", "--width", "1e9"},
      {"flamegraph", "--min-width", "inf"},         {"turbo", "-I", "0"},
      {"turbo", "--count", "0x10"},                 {"check", "--cpuid-dump", "x", "--cpu", "-1"},
  };
  for (const std::vector<std::string>& args : cases) {
    test::ProgramResult r = vperf_bounded(args);
    SCOPED_TRACE(args[args.size() > 3 ? args.size() - 2 : 1] + " " + args.back());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("must be a"), std::string::npos) << "names the range: " << r.err;
    EXPECT_LT(r.out.size(), 4096u) << "printed without end";
  }
}

// flamegraph -o and stat -o replace the file whole: a symlink at the path is replaced, its target
// left alone; a path that cannot take a file says why.
TEST_F(HostilePathsAndOptions, OutputFilesAreReplacedNeverWrittenThroughASymlink) {
  fs::path victim = path("victim");
  std::ofstream(victim) << "precious\n";
  fs::path data = path("small.data");
  ASSERT_EQ(test::run_vperf({"record", "-q", "-e", "cpu-clock", "-o", data.string(), "--", VPERF_WORKLOAD, "spin", "50"})
                .exit_code,
            0);
  fs::path svg_link = path("out.svg");
  fs::create_symlink(victim, svg_link);
  test::ProgramResult fg = vperf_bounded({"flamegraph", "-i", data.string(), "-o", svg_link.string()});
  ASSERT_EQ(fg.exit_code, 0) << fg.err;
  EXPECT_FALSE(fs::is_symlink(svg_link));
  EXPECT_NE(slurp(svg_link).find("<svg"), std::string::npos);
  EXPECT_EQ(slurp(victim), "precious\n");

  fs::path stat_link = path("counts.txt");
  fs::create_symlink(victim, stat_link);
  test::ProgramResult st = vperf_bounded({"stat", "-e", "task-clock", "-o", stat_link.string(), "--", "true"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  EXPECT_FALSE(fs::is_symlink(stat_link));
  EXPECT_NE(slurp(stat_link).find("task-clock"), std::string::npos);
  EXPECT_EQ(slurp(victim), "precious\n");

  for (const std::string& where : {std::string("/proc/version"), fifo("out.fifo").string(), scratch_.root().string()}) {
    SCOPED_TRACE(where);
    test::ProgramResult bad = vperf_bounded({"flamegraph", "-i", data.string(), "-o", where});
    expect_one_error_line(bad, 1, "cannot write " + where);
    EXPECT_EQ(bad.err.find("No such file"), std::string::npos) << "misleading: " << bad.err;
    expect_one_error_line(vperf_bounded({"stat", "-e", "task-clock", "-o", where, "--", "true"}), 1,
                          "cannot write " + where);
  }
  for (const fs::directory_entry& e : fs::directory_iterator(scratch_.root()))
    EXPECT_EQ(e.path().filename().string().find(".vperf-"), std::string::npos) << "left behind: " << e.path();
}

TEST_F(HostilePathsAndOptions, RepeatedEventModifiersAreRefusedAsPerfRefusesThem) {
  expect_one_error_line(vperf_bounded({"stat", "-e", "cycles:uu", "--", "true"}), 2, "modifier 'u' repeated");
  expect_one_error_line(vperf_bounded({"stat", "-e", "task-clock:" + std::string(5000, 'k'), "--", "true"}), 2,
                        "repeated");
  if (!test::find_program("perf").empty()) {
    test::ProgramResult perf = test::run_program({"perf", "stat", "-e", "cycles:uu", "true"});
    EXPECT_NE(perf.exit_code, 0) << "perf 6.1 refuses it too";
  }
}

}  // namespace
}  // namespace vperf
