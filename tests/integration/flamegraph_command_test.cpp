// vperf flamegraph on real recordings (vperf's and perf's) against the pipeline it replaces:
// `perf script | stackcollapse-perf.pl --kernel` must fold to exactly the same lines, and the
// SVG must parse and show the workload's designed profile.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

class FlamegraphCommand : public ::testing::Test {
 protected:
  std::string file(const std::string& name) const { return (scratch_.root() / name).string(); }
  static std::string flamegraph_dir() {
    const char* d = std::getenv("FLAMEGRAPH_DIR");
    return d ? d : "";
  }
  std::string stackcollapse(const std::string& data) const {
    test::ProgramResult r = test::run_program(
        {"sh", "-c", "perf script -i " + data + " 2>/dev/null | " + flamegraph_dir() + "/stackcollapse-perf.pl --kernel"});
    return r.out;
  }
  std::string folded(const std::string& data) const {
    test::ProgramResult r = test::run_vperf({"flamegraph", "-i", data, "--folded", "-o", "-"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  test::TempTree scratch_;  // removed with everything in it
};

TEST_F(FlamegraphCommand, FoldsVperfsRecordingExactlyAsStackcollapsePerf) {
  VPERF_REQUIRE(!flamegraph_dir().empty(), "set FLAMEGRAPH_DIR to a FlameGraph checkout (fetch github:brendangregg/FlameGraph)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs perf script");
  std::string data = file("vperf.data");
  ASSERT_EQ(test::run_vperf({"record", "-q", "-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "300"}).exit_code, 0);
  std::string theirs = stackcollapse(data);
  ASSERT_FALSE(theirs.empty());
  EXPECT_EQ(folded(data), theirs);
}

TEST_F(FlamegraphCommand, FoldsPerfsRecordingExactlyAsStackcollapsePerf) {
  VPERF_REQUIRE(!flamegraph_dir().empty(), "set FLAMEGRAPH_DIR to a FlameGraph checkout (fetch github:brendangregg/FlameGraph)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs perf record");
  std::string data = file("perf.data");
  ASSERT_EQ(test::run_program({"perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "300"}).exit_code, 0);
  EXPECT_EQ(folded(data), stackcollapse(data));
}

TEST_F(FlamegraphCommand, SvgParsesAndShowsTheDesignedProfile) {
  std::string data = file("spin.data");
  ASSERT_EQ(test::run_vperf({"record", "-q", "-g", "-e", "cpu-clock", "-F", "2000", "-o", data, "--", VPERF_WORKLOAD, "spin", "400"}).exit_code, 0);
  std::string svg = file("spin.svg");
  test::ProgramResult r = test::run_vperf({"flamegraph", "-i", data, "-o", svg, "--title", "spin <test>"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("samples"), std::string::npos) << r.err;
  test::ProgramResult parsed = test::run_program(
      {"python3", "-c", "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1]); print('ok')", svg});
  EXPECT_EQ(parsed.out, "ok\n") << parsed.err;
  std::ifstream in(svg);
  std::stringstream content;
  content << in.rdbuf();
  std::smatch m;
  std::string text = content.str();
  EXPECT_NE(text.find("spin &lt;test&gt;"), std::string::npos) << "the title, escaped";
  std::regex hash_title(R"(<title>spin_leaf_hash \(([0-9,]+) samples, ([0-9.]+)%\)</title>)");
  std::regex math_title(R"(<title>spin_leaf_math \(([0-9,]+) samples, ([0-9.]+)%\)</title>)");
  ASSERT_TRUE(std::regex_search(text, m, hash_title)) << "a box for the hash leaf";
  double hash = std::stod(m[2]);
  ASSERT_TRUE(std::regex_search(text, m, math_title));
  double math = std::stod(m[2]);
  EXPECT_NEAR(hash / (hash + math), 0.65, 0.08) << hash << "% vs " << math << "%";
}

TEST_F(FlamegraphCommand, MissingOrEmptyInputIsOneErrorLine) {
  test::ProgramResult missing = test::run_vperf({"flamegraph", "-i", file("nope.data"), "-o", file("x.svg")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("vperf: error: cannot read"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(file("x.svg")));
  std::ofstream(file("garbage.data")) << "not a perf.data file at all";
  test::ProgramResult garbage = test::run_vperf({"flamegraph", "-i", file("garbage.data"), "-o", file("y.svg")});
  EXPECT_EQ(garbage.exit_code, 1) << garbage.err;
  EXPECT_FALSE(fs::exists(file("y.svg")));
  test::ProgramResult palette = test::run_vperf({"flamegraph", "--colors", "plaid"});
  EXPECT_EQ(palette.exit_code, 2) << palette.err;
}

}  // namespace
}  // namespace vperf
