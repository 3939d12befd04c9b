// What the real vperf loads and reads at startup, under strace. The bundled Intel perfmon
// tables (pmc/perfmon_bundle.h) are read only when a command needs them, and then only the
// chosen model's files: `vperf --version` and `vperf stat -e task-clock -- true` must not even
// look for them. libvirt and capstone (and their dependencies) are loaded only by the commands
// that call them (core/shared_library.h), never at startup.
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

bool is_loaded_on_use_library(const std::string& path) {
  return path.find("libvirt") != std::string::npos || path.find("libcapstone") != std::string::npos ||
         path.find("libgnutls") != std::string::npos || path.find("libxml2") != std::string::npos;
}

TEST(LibrariesLoadedOnUse, StatAndReportNeverLoadLibvirtOrCapstone) {
  VPERF_REQUIRE(!find_program("strace").empty(), "strace on PATH");
  TempTree dir;
  const std::string data = (dir.root() / "perf.data").string();
  const std::vector<std::vector<std::string>> commands = {
      {"--version"},
      {"stat", "-e", "task-clock", "--", "true"},
      {"record", "-q", "-e", "cpu-clock", "-o", data, "--", "true"},
      {"report", "--stdio", "-i", data}};
  for (const std::vector<std::string>& args : commands) {
    for (const std::string& path : paths_touched(args))
      EXPECT_FALSE(is_loaded_on_use_library(path)) << "vperf " << args.front() << " opened " << path;
  }
}

// The controls: the commands that need them do load them, so the check above can fail.
TEST(LibrariesLoadedOnUse, KvmListLoadsLibvirtAndAnnotateLoadsCapstone) {
  VPERF_REQUIRE(!find_program("strace").empty(), "strace on PATH");
  auto opened = [](const std::vector<std::string>& args, std::string_view library) {
    for (const std::string& path : paths_touched(args))
      if (path.find(library) != std::string::npos) return true;
    return false;
  };
  // libvirt's in-process test driver: no daemon needed.
  EXPECT_TRUE(opened({"kvm", "list", "-c", "test:///default"}, "libvirt.so.0"));
  EXPECT_TRUE(opened({"kvm", "list", "-c", "test:///default"}, "libvirt-qemu.so.0"));
  TempTree dir;
  const std::string data = (dir.root() / "perf.data").string();
  ProgramResult recorded = run_program({VPERF_BINARY, "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", data, "--",
                                        VPERF_WORKLOAD, "spin", "100"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  EXPECT_TRUE(opened({"annotate", "--stdio", "-i", data, "spin_leaf_hash"}, "libcapstone.so"));
}

}  // namespace
}  // namespace vperf::test
