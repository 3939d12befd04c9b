// Golden cases (tests/golden/<case>/): perf.data files written by perf 6.1, the symbols of the
// binary they recorded, and perf's own outputs for the commands in the case's cases.txt. vperf
// runs each command and must print what perf printed (less perf report's closing random tip).
// Nothing here needs perf, root or this machine's binaries; PROVENANCE.md in each case says how
// it was made and why its symbols resolve anywhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenRoot = fs::path(VPERF_SOURCE_DIR) / "tests" / "golden";

struct GoldenCommand {
  fs::path case_dir;
  std::string expected;            // file name in case_dir
  std::vector<std::string> words;  // the command after `vperf`
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every line of every tests/golden/*/cases.txt: "EXPECTED WORD..." ('#' starts a comment line).
std::vector<GoldenCommand> golden_commands() {
  std::vector<GoldenCommand> out;
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(kGoldenRoot))
    if (fs::exists(entry.path() / "cases.txt")) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  for (const fs::path& dir : cases) {
    std::istringstream lines(read_text(dir / "cases.txt"));
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream words(line);
      GoldenCommand command{dir, "", {}};
      words >> command.expected;
      for (std::string word; words >> word;) command.words.push_back(word);
      out.push_back(std::move(command));
    }
  }
  return out;
}

std::string test_name(const ::testing::TestParamInfo<GoldenCommand>& info) {
  std::string name = info.param.case_dir.filename().string() + "_" + fs::path(info.param.expected).stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Puts the case's binary (symbols only) back where the recordings say it was. Written to a
// temporary file and renamed, so parallel test processes never read half of it.
void install_recorded_binary(const fs::path& case_dir) {
  std::string build_id;
  std::istringstream(read_text(case_dir / "build-id")) >> build_id;
  ASSERT_FALSE(build_id.empty()) << case_dir / "build-id";
  const fs::path dir = fs::path("/tmp/vperf-golden") / build_id;
  fs::create_directories(dir);
  const fs::path temporary = dir / ("vperf-workload." + std::to_string(::getpid()));
  test::ProgramResult unpacked = test::run_program(
      {"sh", "-c", "gzip -dc \"$0\" > \"$1\" && chmod 755 \"$1\"", (case_dir / "vperf-workload.symbols.gz").string(),
       temporary.string()});
  ASSERT_EQ(unpacked.exit_code, 0) << unpacked.err;
  fs::rename(temporary, dir / "vperf-workload");
}

// perf report ends with "#\n# (Tip: ...)\n#\n", a random line vperf does not print.
std::string without_perf_tip(const std::string& text) {
  const size_t tip = text.find("#\n# (Tip:");
  return tip == std::string::npos ? text : text.substr(0, tip);
}

// `diff -u` of the two texts, for the failure message.
std::string unified_diff(const std::string& expected, const std::string& actual) {
  test::TempTree tree;
  tree.write("perf", expected);
  tree.write("vperf", actual);
  return test::run_program({"diff", "-u", (tree.root() / "perf").string(), (tree.root() / "vperf").string()}).out;
}

class Golden : public ::testing::TestWithParam<GoldenCommand> {};

TEST_P(Golden, VperfPrintsWhatPerfPrinted) {
  const GoldenCommand& command = GetParam();
  install_recorded_binary(command.case_dir);
  std::vector<std::string> args = command.words;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-i") args[i + 1] = (command.case_dir / args[i + 1]).string();
  test::ProgramResult r = test::run_vperf(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string expected = without_perf_tip(read_text(command.case_dir / command.expected));
  ASSERT_FALSE(expected.empty()) << command.expected;
  EXPECT_TRUE(r.out == expected) << "vperf " << command.words.front() << " differs from "
                                 << (command.case_dir.filename() / command.expected).string() << ":\n"
                                 << unified_diff(expected, r.out);
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(golden_commands()), test_name);

}  // namespace
}  // namespace vperf
