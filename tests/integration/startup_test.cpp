// The real vperf under strace: the bundled Intel perfmon tables (pmc/perfmon_bundle.h) are
// read only when a command needs them, and then only the chosen model's files. `vperf
// --version` and `vperf stat -e task-clock -- true` must not even look for them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

// The paths of every file-system call vperf (and its children) made while running `args`.
std::vector<std::string> paths_touched(const std::vector<std::string>& args) {
  TempTree dir;
  std::filesystem::path log = dir.root() / "strace.log";
  std::vector<std::string> argv = {"strace", "-f", "-qq", "-e", "trace=%file", "-o", log.string(), VPERF_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  ProgramResult r = run_program(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> paths;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    size_t open = line.find('"');
    size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close != std::string::npos) paths.push_back(line.substr(open + 1, close - open - 1));
  }
  EXPECT_FALSE(paths.empty()) << "strace recorded nothing: the check would pass vacuously";
  return paths;
}

bool is_bundle_file(const std::string& path) {
  return path.ends_with("/mapfile.csv") || path.ends_with(".json.xz") || path.ends_with(".json");
}

TEST(PerfmonBundleStartup, VersionAndTaskClockStatReadNoTable) {
  VPERF_REQUIRE(!find_program("strace").empty(), "strace on PATH");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, std::vector<std::string>{"stat", "-e", "task-clock", "--", "true"}}) {
    for (const std::string& path : paths_touched(args))
      EXPECT_FALSE(is_bundle_file(path)) << "vperf " << args.front() << " touched " << path;
  }
}

// The control: a dotted name on --model ivb reads the bundle, and of it only Ivy Bridge's files.
TEST(PerfmonBundleStartup, ADottedNameReadsOnlyItsModelsTables) {
  VPERF_REQUIRE(!find_program("strace").empty(), "strace on PATH");
  std::vector<std::string> tables;
  bool mapfile = false;
  for (const std::string& path : paths_touched({"encode", "--model", "ivb", "MOVE_ELIMINATION.INT_ELIMINATED"})) {
    mapfile = mapfile || path.ends_with("/mapfile.csv");
    if (path.ends_with(".json.xz")) tables.push_back(path);
  }
  EXPECT_TRUE(mapfile);
  ASSERT_FALSE(tables.empty());
  for (const std::string& path : tables) EXPECT_NE(path.find("/IVB/events/ivybridge_"), std::string::npos) << path;
}

}  // namespace
}  // namespace vperf::test
