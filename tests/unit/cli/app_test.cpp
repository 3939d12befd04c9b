// The CLI contract every command shares: exit status 0 ok, 1 runtime failure, 2 usage error;
// errors are one line "vperf: error: WHAT (hint: WHAT TO DO)".
#include "cli/app.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "unit/cli/run_cli.h"

namespace vperf::cli {
namespace {

using in_process::Outcome;
using in_process::run_cli;

bool is_one_error_line(const std::string& err) {
  return err.rfind("vperf: error: ", 0) == 0 && err.find("(hint: ") != std::string::npos &&
         err.find('\n') == err.size() - 1;
}

TEST(Cli, VersionPrintsProjectVersion) {
  auto r = run_cli({"--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, std::string("vperf ") + VPERF_VERSION + "\n");
}

// perf version's command and its --build-options table: perf 6.1's names in its order and
// format (from `perf version --build-options` of Debian's linux-perf 6.1), then vperf's own;
// what vperf lacks (BPF, perf trace's syscall table) says OFF.
TEST(Cli, VersionCommandAndBuildOptionsInPerfsFormat) {
  EXPECT_EQ(run_cli({"version"}).out, std::string("vperf version ") + VPERF_VERSION + "\n");
  Outcome r = run_cli({"version", "--build-options"});
  ASSERT_EQ(r.status, 0);
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  std::vector<std::string> names;
  while (std::getline(lines, line)) {
    ASSERT_EQ(line.size() > 24 ? line.substr(22, 4) : "", ": [ ") << line;
    ASSERT_TRUE(line.substr(26, 5) == "on  ]" || line.substr(26, 5) == "OFF ]") << line;
    names.push_back(line.substr(0, 22).substr(line.find_first_not_of(' ')));
  }
  const std::vector<std::string> perfs = {"dwarf", "dwarf_getlocations", "glibc", "syscall_table", "libbfd", "debuginfod",
                                          "libelf", "libnuma", "numa_num_possible_cpus", "libperl", "libpython", "libslang",
                                          "libcrypto", "libunwind", "libdw-dwarf-unwind", "zlib", "lzma", "get_cpuid", "bpf",
                                          "aio", "zstd", "libpfm4"};
  ASSERT_GE(names.size(), perfs.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + static_cast<long>(perfs.size())), perfs);
  EXPECT_NE(r.out.find("                   bpf: [ OFF ]  # HAVE_LIBBPF_SUPPORT\n"), std::string::npos);
  EXPECT_NE(r.out.find("                  zstd: [ on  ]  # HAVE_ZSTD_SUPPORT\n"), std::string::npos);
}

TEST(Cli, HelpListsEveryCommand) {
  auto r = run_cli({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* cmd : {"list", "encode", "decode", "check", "msr", "help"})
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd << " missing from:\n" << r.out;
}

// An option vperf does not know, before the command, is a usage error naming it (CLI11 would
// otherwise end the options there and run "-M" as the command); perf's own are "not supported
// yet". Nothing runs.
TEST(Cli, UnknownOptionBeforeTheCommandIsAUsageError) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  for (const Case& c : std::vector<Case>{
           {{"stat", "-S", "--", "true"}, "perf stat's option -S is not supported by vperf yet"},
           {{"stat", "--topdown", "--", "true"}, "perf stat's option --topdown is not supported by vperf yet"},
           {{"stat", "--metric-only", "true"}, "perf stat's option --metric-only is not supported by vperf yet"},
           {{"record", "--per-thread", "--", "true"}, "perf record's option --per-thread is not supported by vperf yet"},
           {{"record", "--branch-filter=any", "--", "true"}, "perf record's option --branch-filter=any is not supported by vperf yet"},
           {{"stat", "--frobnicate", "--", "true"}, "unknown option --frobnicate"},
           {{"record", "-Z", "true"}, "unknown option -Z"},
           // The readers of perf.data say the same of the options perf has there.
           {{"report", "-i", "x.data", "--mem-mode"}, "perf report's option --mem-mode is not supported by vperf yet"},
           {{"report", "--no-demangle"}, "perf report's option --no-demangle is not supported by vperf yet"},
           {{"script", "-L"}, "perf script's option -L is not supported by vperf yet"},
           {{"annotate", "--stdio2"}, "perf annotate's option --stdio2 is not supported by vperf yet"},
           {{"kvm", "report", "--tui"}, "perf report's option --tui is not supported by vperf yet"},
           {{"script", "--frobnicate"}, "unknown option --frobnicate"},
           // ftrace's subcommands are trace-cmd's: perf record's -a is not theirs.
           {{"ftrace", "record", "-a", "--", "true"}, "unknown option -a"},
       }) {
    auto r = run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args[1];
    EXPECT_TRUE(is_one_error_line(r.err)) << r.err;
    // The help named is the command's own, nested ones by their path ("vperf help kvm report").
    const std::string command = c.args[0] == "kvm" || c.args[0] == "ftrace" ? c.args[0] + " " + c.args[1] : c.args[0];
    EXPECT_EQ(r.err.rfind("vperf: error: " + c.said + " (hint: run 'vperf help " + command + "'", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(Cli, HelpCommandShowsOneCommandsOptions) {
  auto r = run_cli({"help", "list"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--json"), std::string::npos) << r.out;
  auto same = run_cli({"list", "--help"});
  EXPECT_EQ(same.status, 0);
  EXPECT_EQ(same.out, r.out);
}

TEST(Cli, UnknownHelpTopicIsAUsageError) {
  auto r = run_cli({"help", "frobnicate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(is_one_error_line(r.err)) << r.err;
  auto nested = run_cli({"help", "ftrace", "frobnicate"});
  EXPECT_EQ(nested.status, 2);
  EXPECT_TRUE(is_one_error_line(nested.err)) << nested.err;
  EXPECT_NE(nested.err.find("vperf help ftrace"), std::string::npos) << nested.err;
}

// A subcommand's subcommand, as perf users ask for it: "vperf help ftrace record".
TEST(Cli, HelpOfANestedCommandIsItsOwn) {
  auto r = run_cli({"help", "ftrace", "record"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: vperf ftrace record"), std::string::npos) << r.out;
  auto same = run_cli({"ftrace", "record", "--help"});
  EXPECT_EQ(same.status, 0);
  EXPECT_EQ(same.out, r.out);
}

TEST(Cli, MissingOrUnknownCommandIsAUsageError) {
  auto none = run_cli({});
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(is_one_error_line(none.err)) << none.err;
  auto unknown = run_cli({"frobnicate"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_TRUE(is_one_error_line(unknown.err)) << unknown.err;
}

TEST(Cli, UnknownCommandIsNamedWithSuggestions) {
  auto r = run_cli({"chek"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(is_one_error_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("'chek'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean check?"), std::string::npos) << r.err;
}

// perf's commands vperf lacks are said to be perf's, not matched to a neighbour ("mem" is not
// "kvm or msr").
TEST(Cli, PerfsCommandsVperfLacksAreSaidToBePerfs) {
  for (const std::string command : {"mem", "sched", "c2c", "top", "trace"}) {
    auto r = run_cli({command});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "vperf: error: perf's command '" + command + "' is not in vperf yet (hint: run 'vperf --help' for the list of commands)\n");
  }
}

// perf kvm's -i/-o before the subcommand names its file (perf kvm -i FILE stat report); the
// subcommand's own -i wins.
TEST(Cli, KvmInputBeforeTheSubcommandNamesItsFile) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"kvm", "-i", "/nonexistent/kvm.data", "stat", "report"}, {"kvm", "--input", "/nonexistent/kvm.data", "report"},
        {"kvm", "-i", "/nonexistent/other.data", "stat", "report", "-i", "/nonexistent/kvm.data"}}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("vperf: error: cannot read /nonexistent/kvm.data: ", 0), 0u) << r.err;
  }
}

TEST(Cli, EmptyOptionValuesAreUsageErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"encode", "--model", "", "cycles"}, {"list", "--perfmon", ""}, {"check", "--cpuid-dump", ""}}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args[1];
    EXPECT_TRUE(is_one_error_line(r.err)) << r.err;
  }
}

TEST(Cli, FailedWriteIsARuntimeFailure) {
  std::vector<const char*> argv{"vperf", "list", "sw"};
  std::ostringstream out, err;
  out.setstate(std::ios::badbit);  // what a write to a full disk leaves behind
  EXPECT_EQ(run(static_cast<int>(argv.size()), argv.data(), out, err), 1);
  EXPECT_TRUE(is_one_error_line(err.str())) << err.str();
}

TEST(Cli, UnknownOptionNamesTheCommandsHelp) {
  auto r = run_cli({"list", "--no-such-option"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(is_one_error_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("vperf help list"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace vperf::cli
