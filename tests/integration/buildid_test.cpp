// perf's build-id cache and build-id list against perf 6.1: the directories each tool writes
// are the same and each tool lists the other's; record fills the cache with what perf's record
// puts there; buildid-list prints perf's lines for perf's recordings and vperf's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

// A binary rebuilt after the recording: perf does not use the file now at its path (another
// build-id) and reads the copy its build-id cache kept. vperf's report and script of either
// tool's recording are perf's, with the cache (the recorded program's own functions) and
// without it (addresses only, as perf shows them).
TEST_F(BuildIdTest, ReportFindsARebuiltBinaryThroughTheCacheAsPerf) {
  VPERF_REQUIRE(test::running_as_root(), "root (perf record with kernel samples)");
  VPERF_REQUIRE(!test::find_program("gcc").empty(), "gcc");
  const fs::path source = root_ / "prog.c", program = root_ / "prog";
  auto build = [&](const std::string& step) {
    std::ofstream(source) << "#include <stdlib.h>\n"
                             "__attribute__((noinline)) long first_loop(long n) { long s = 0; for (long i = 0; i < n; ++i) s += i * "
                          << step << " % 13; return s; }\n"
                             "__attribute__((noinline)) long second_loop(long n) { long s = 0; for (long i = 0; i < n; ++i) s ^= i * 3 % 11; return s; }\n"
                             "int main(int argc, char** argv) { long n = atol(argv[1]); return (int)(first_loop(n) + second_loop(n)) & 1; }\n";
    ASSERT_EQ(test::run_program({"gcc", "-O1", "-o", program.string(), source.string()}).exit_code, 0);
  };
  build("7");
  for (const std::string& recorder : {std::string("vperf"), std::string("perf")}) {
    const fs::path cache = root_ / (recorder + "-cache"), data = root_ / (recorder + ".data");
    ASSERT_EQ(run(recorder, cache, {"record", "-q", "-e", "cpu-clock", "-o", data.string(), program.string(), "30000000"}).exit_code, 0);
  }
  build("5");  // another build-id at the same path
  auto without_comments = [](const std::string& text) {
    std::string out;
    for (const std::string& line : lines_of(text))
      if (!line.starts_with("#")) out += line + "\n";
    return out;
  };
  for (const std::string& recorder : {std::string("vperf"), std::string("perf")}) {
    const fs::path data = root_ / (recorder + ".data");
    for (const fs::path& cache : {root_ / (recorder + "-cache"), root_ / "empty-cache"}) {
      SCOPED_TRACE(recorder + "'s recording, cache " + cache.filename().string());
      const std::vector<std::string> report = {"report", "--stdio", "--sort", "dso,sym", "-i", data.string()};
      const std::string mine = without_comments(run("vperf", cache, report).out), theirs = without_comments(run("perf", cache, report).out);
      EXPECT_EQ(mine, theirs);
      EXPECT_EQ(run("vperf", cache, {"script", "-i", data.string()}).out, run("perf", cache, {"script", "-i", data.string()}).out);
      const bool cached = cache.filename() != "empty-cache";
      EXPECT_EQ(mine.find("first_loop") != std::string::npos, cached) << mine;
    }
  }
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
