// perf's build-id cache and build-id list against perf 6.1: the directories each tool writes
// are the same and each tool lists the other's; record fills the cache with what perf's record
// puts there; buildid-list prints perf's lines for perf's recordings and vperf's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

bool has_perf() { return !test::find_program("perf").empty(); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class BuildIdTest : public testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(has_perf(), "Linux perf on PATH");
    root_ = fs::path(testing::TempDir()) / ("vperf_buildid_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    root_ = fs::canonical(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // "vperf|perf --buildid-dir DIR ARGS"
  test::ProgramResult run(const std::string& tool, const fs::path& dir, std::vector<std::string> args) const {
    std::vector<std::string> argv{tool == "perf" ? std::string("perf") : std::string(VPERF_BINARY), "--buildid-dir", dir.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_program(argv, {{"LC_ALL", "C"}});
  }

  // The cache's files and links, relative to it (perf's SDT "probes" files left out: vperf
  // keeps no SDT cache).
  static std::set<std::string> tree(const fs::path& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const std::string rel = fs::relative(e.path(), dir).string();
      if (e.path().filename() == "probes") continue;
      out.insert(rel + (e.is_symlink() ? " -> " + fs::read_symlink(e.path()).string() : ""));
    }
    return out;
  }

  fs::path root_;
};

TEST_F(BuildIdTest, CacheDirectoriesAreThoseOfPerfAndEachListsTheOthers) {
  const fs::path program = root_ / "workload";
  fs::copy_file(VPERF_WORKLOAD, program);
  const fs::path mine = root_ / "vperf-cache", perfs = root_ / "perf-cache";
  test::ProgramResult added = run("vperf", mine, {"buildid-cache", "-v", "-a", program.string()});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_NE(added.err.find("Adding "), std::string::npos) << added.err;
  ASSERT_EQ(run("perf", perfs, {"buildid-cache", "-a", program.string()}).exit_code, 0);
  EXPECT_EQ(tree(mine), tree(perfs));
  const std::string listed = run("perf", perfs, {"buildid-cache", "-l"}).out;
  EXPECT_NE(listed.find(program.string()), std::string::npos) << listed;
  EXPECT_EQ(run("vperf", perfs, {"buildid-cache", "-l"}).out, listed);
  EXPECT_EQ(run("perf", mine, {"buildid-cache", "-l"}).out, listed);

  // perf removes what vperf added, and the other way round.
  ASSERT_EQ(run("perf", mine, {"buildid-cache", "-r", program.string()}).exit_code, 0);
  EXPECT_EQ(run("vperf", mine, {"buildid-cache", "-l"}).out, "");
  ASSERT_EQ(run("vperf", perfs, {"buildid-cache", "-r", program.string()}).exit_code, 0);
  EXPECT_EQ(run("perf", perfs, {"buildid-cache", "-l"}).out, "");
}

// perf record --buildid-all adds every mapped file to the cache: vperf's record adds the same
// files under the same build-ids (perf's kernel copy, [kernel.kallsyms]/ID/kallsyms, vperf does
// not make), and buildid-list prints each recording's table as perf prints it.
TEST_F(BuildIdTest, RecordFillsTheCacheAsPerfsRecordDoes) {
  VPERF_REQUIRE(test::running_as_root(), "root (perf record with kernel samples)");
  std::map<std::string, std::set<std::string>> caches;
  for (const std::string& tool : {std::string("vperf"), std::string("perf")}) {
    const fs::path dir = root_ / (tool + "-cache"), data = root_ / (tool + ".data");
    test::ProgramResult recorded =
        run(tool, dir, {"record", "-q", "-e", "cpu-clock", "--buildid-all", "-o", data.string(), VPERF_WORKLOAD, "spin", "20"});
    ASSERT_EQ(recorded.exit_code, 0) << tool << ": " << recorded.err;
    for (const std::string& line : lines_of(run("perf", dir, {"buildid-cache", "-l"}).out))
      if (line.find("[kernel.kallsyms]") == std::string::npos && line.find("[vdso]") == std::string::npos) caches[tool].insert(line);
    const std::string perfs_list = test::run_program({"perf", "buildid-list", "-i", data.string()}).out;
    EXPECT_EQ(test::run_program({VPERF_BINARY, "buildid-list", "-i", data.string()}).out, perfs_list) << tool << "'s recording";
    EXPECT_NE(perfs_list.find(VPERF_WORKLOAD), std::string::npos) << perfs_list;
  }
  EXPECT_EQ(caches["vperf"], caches["perf"]);
  EXPECT_EQ(caches["vperf"].size(), 6u) << "the workload and its five libraries (no samples needed with --buildid-all)";

  // -N: nothing cached.
  const fs::path none = root_ / "none";
  ASSERT_EQ(run("vperf", none, {"record", "-q", "-N", "-o", (root_ / "n.data").string(), VPERF_WORKLOAD, "spin", "10"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(none));
}

TEST_F(BuildIdTest, MistakesAreOneLine) {
  const fs::path dir = root_ / "cache";
  test::ProgramResult nothing = run("vperf", dir, {"buildid-cache"});
  EXPECT_EQ(nothing.exit_code, 2) << nothing.err;
  test::ProgramResult missing = run("vperf", dir, {"buildid-cache", "-a", (root_ / "missing").string()});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_FALSE(fs::exists(dir / ".build-id"));
  test::ProgramResult no_dir = test::run_program({VPERF_BINARY, "--buildid-dir"});
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir.err;
}

}  // namespace
}  // namespace vperf
