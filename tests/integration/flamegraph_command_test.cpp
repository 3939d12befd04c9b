// vperf flamegraph on real recordings (vperf's and perf's) against the pipeline it replaces:
// `perf script | stackcollapse-perf.pl --kernel` must fold to exactly the same lines, and the
// SVG must parse and show the workload's designed profile. --diff against `difffolded.pl A B`
// (the same lines) and `| flamegraph.pl` (the same boxes).
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"
#include "unit/report/xml_dom.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A drawn box of a flame graph SVG: hover title, geometry, fill.
struct Box {
  std::string title;
  double x, width, y;
  std::string fill;
  bool same_as(const Box& o) const {
    return title == o.title && std::abs(x - o.x) <= 0.1 + 1e-9 && std::abs(width - o.width) <= 0.1 + 1e-9 && y == o.y &&
           fill == o.fill;
  }
};

std::vector<Box> boxes_of(const std::string& svg) {
  std::vector<Box> boxes;
  const report::test::XmlElement root = report::test::XmlReader::parse(svg);
  const report::test::XmlElement* frames = root.find_id("frames");
  if (!frames) return boxes;
  for (const auto& g : frames->children) {
    const auto* title = g.child("title");
    const auto* rect = g.child("rect");
    if (title && rect)
      boxes.push_back({title->text, rect->number("x"), rect->number("width"), rect->number("y"), rect->attribute("fill")});
  }
  return boxes;
}

// Every box of flamegraph.pl's graph is in vperf's, drawn the same; returns how many vperf has
// beyond them (flamegraph.pl loses boxes when a stack only in BEFORE, drawn zero wide, shares
// its key "name;depth;end" with a real box; see flamegraph_test.cpp).
size_t expect_reference_boxes_in(const std::string& reference_svg, const std::string& vperf_svg) {
  std::vector<Box> expected = boxes_of(reference_svg), actual = boxes_of(vperf_svg);
  EXPECT_FALSE(expected.empty());
  std::vector<bool> used(actual.size());
  int reported = 0;
  for (const Box& e : expected) {
    bool found = false;
    for (size_t k = 0; k < actual.size() && !found; ++k)
      if (!used[k] && e.same_as(actual[k])) used[k] = found = true;
    if (!found && reported++ < 10)
      ADD_FAILURE() << "vperf lacks flamegraph.pl's box \"" << e.title << "\" x=" << e.x << " w=" << e.width << " y=" << e.y
                    << " " << e.fill;
  }
  return actual.size() >= expected.size() ? actual.size() - expected.size() : 0;
}

class FlamegraphCommand : public ::testing::Test {
 protected:
  std::string file(const std::string& name) const { return (scratch_.root() / name).string(); }
  std::string stackcollapse(const std::string& data) const {
    test::ProgramResult r = test::run_program(
        {"sh", "-c", "perf script -i " + data + " 2>/dev/null | " + test::flamegraph_dir() + "/stackcollapse-perf.pl --kernel"});
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
  VPERF_REQUIRE(!test::flamegraph_dir().empty(), "the FlameGraph scripts (../shared/tools/FlameGraph, or FLAMEGRAPH_DIR)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs perf script");
  std::string data = file("vperf.data");
  ASSERT_EQ(test::run_vperf({"record", "-q", "-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "300"}).exit_code, 0);
  std::string theirs = stackcollapse(data);
  ASSERT_FALSE(theirs.empty());
  EXPECT_EQ(folded(data), theirs);
}

TEST_F(FlamegraphCommand, FoldsPerfsRecordingExactlyAsStackcollapsePerf) {
  VPERF_REQUIRE(!test::flamegraph_dir().empty(), "the FlameGraph scripts (../shared/tools/FlameGraph, or FLAMEGRAPH_DIR)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs perf record");
  std::string data = file("perf.data");
  ASSERT_EQ(test::run_program({"perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "300"}).exit_code, 0);
  EXPECT_EQ(folded(data), stackcollapse(data));
}

TEST_F(FlamegraphCommand, FoldsCodeRunFromAMemfdAsStackcollapsePerf) {
  VPERF_REQUIRE(!test::flamegraph_dir().empty(), "the FlameGraph scripts (../shared/tools/FlameGraph, or FLAMEGRAPH_DIR)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs perf record");
  // perf script prints such frames as "3 [unknown] (/memfd:vperf-jit (deleted))", which the
  // script's greedy regex splits inside the dso's name: the frame is "[unknown] ".
  std::string data = file("memfd.data");
  ASSERT_EQ(test::run_program({"perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "memfd-jit", "300"})
                .exit_code,
            0);
  std::string theirs = stackcollapse(data);
  ASSERT_NE(theirs.find(";vperf::workloads::run_memfd_jit;[unknown]  "), std::string::npos) << theirs;
  EXPECT_EQ(folded(data), theirs);
}

// The leaves' boxes weigh what perf script shows of the same file: the periods of every sample
// whose stack holds the leaf, summed over the leaf's boxes (a sample whose chain was cut short puts the leaf
// under another parent). The workload's split between them is by rounds, its time share
// depends on the CPU (0.56-0.75 of the hash leaf seen on one AMD host), so perf's count of the
// file, not the design, is what the graph must show.
TEST_F(FlamegraphCommand, SvgParsesAndShowsTheDesignedProfile) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs perf script");
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
  std::string text = content.str();
  EXPECT_NE(text.find("spin &lt;test&gt;"), std::string::npos) << "the title, escaped";
  auto drawn = [&text](const std::string& leaf) {
    std::regex title("<title>" + leaf + R"( \(([0-9,]+) samples?, ([0-9.]+)%\)</title>)");
    uint64_t sum = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), title); it != std::sregex_iterator(); ++it) {
      std::string count = (*it)[1];
      std::erase(count, ',');
      sum += std::stoull(count);
    }
    return sum;
  };
  test::ProgramResult script = test::run_program({"perf", "script", "-i", data});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  // The weight stackcollapse-perf.pl gives a sample: the period perf script prints before the
  // event's name.
  auto in_perf_script = [&script](const std::string& leaf) {
    const std::regex header(R"(: +([0-9]+) [^ ]+: *$)");
    uint64_t weight = 0, period = 0;
    bool counted = false;  // this sample's already
    std::istringstream lines(script.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (line.empty()) {
        counted = false;
      } else if (line[0] != '\t') {
        period = std::regex_search(line, m, header) ? std::stoull(m[1]) : 0;
        EXPECT_GT(period, 0u) << "a sample's line with its period: " << line;
      } else if (!counted && (line.find(" " + leaf + "+0x") != std::string::npos || line.find(" " + leaf + " (") != std::string::npos)) {
        weight += period;
        counted = true;
      }
    }
    return weight;
  };
  for (const std::string leaf : {"spin_leaf_hash", "spin_leaf_math"}) {
    SCOPED_TRACE(leaf);
    const uint64_t expected = in_perf_script(leaf);
    EXPECT_GT(expected, 0u) << "the leaf has samples of its own";
    EXPECT_EQ(drawn(leaf), expected);
  }
}

// Two different recordings (a CPU spin, then a page-fault loop that lives in the kernel) through
// the Perl pipeline: perf script | stackcollapse-perf.pl --kernel for each, difffolded.pl, and
// flamegraph.pl; vperf flamegraph --diff must give the same two-count lines and draw every box.
// Diffing a recording against itself has no stacks on one side only, so there the graphs must
// be box for box the same.
TEST_F(FlamegraphCommand, DiffIsDifffoldedPlAndFlamegraphPl) {
  VPERF_REQUIRE(!test::flamegraph_dir().empty(), "the FlameGraph scripts (../shared/tools/FlameGraph, or FLAMEGRAPH_DIR)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs perf script");
  std::string before = file("before.data"), after = file("after.data");
  ASSERT_EQ(test::run_vperf({"record", "-q", "-g", "-e", "cpu-clock", "-F", "2000", "-o", before, "--", VPERF_WORKLOAD,
                             "spin", "300"}).exit_code, 0);
  std::string workload = VPERF_WORKLOAD;
  ASSERT_EQ(test::run_vperf({"record", "-q", "-g", "-e", "cpu-clock", "-F", "2000", "-o", after, "--", "sh", "-c",
                             workload + " spin 150 && " + workload + " page-faults 20000"}).exit_code, 0);
  std::string before_folded = file("before.folded"), after_folded = file("after.folded");
  std::ofstream(before_folded) << stackcollapse(before);
  std::ofstream(after_folded) << stackcollapse(after);
  auto difffolded = [&](const std::string& a, const std::string& b) {
    test::ProgramResult r = test::run_program({"perl", test::flamegraph_dir() + "/difffolded.pl", a, b});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::ofstream(file("diff.folded")) << r.out;
    return r.out;
  };
  auto flamegraph_pl = [&](const std::vector<std::string>& options) {
    std::vector<std::string> argv = {"perl", test::flamegraph_dir() + "/flamegraph.pl"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back(file("diff.folded"));
    test::ProgramResult r = test::run_program(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  auto vperf_diff = [&](const std::string& a, const std::string& b, const std::vector<std::string>& options) {
    std::vector<std::string> args = {"flamegraph", "--diff", a, b, "-o", "-"};
    args.insert(args.end(), options.begin(), options.end());
    test::ProgramResult r = test::run_vperf(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };

  // difffolded.pl prints in perl's hash order; flamegraph.pl sorts what it reads.
  std::string two_counts = difffolded(before_folded, after_folded);
  ASSERT_FALSE(two_counts.empty());
  EXPECT_EQ(sorted_lines(vperf_diff(before, after, {"--folded"})), sorted_lines(two_counts));
  size_t only_before = 0;
  for (const std::string& line : sorted_lines(two_counts)) only_before += line.ends_with(" 0");
  EXPECT_GT(only_before, 0u) << "the test means to have stacks that vanished";
  size_t extra = expect_reference_boxes_in(flamegraph_pl({}), vperf_diff(before, after, {}));
  EXPECT_LE(extra, only_before) << "vperf's extra boxes can only be ones flamegraph.pl lost to stacks only in BEFORE";
  expect_reference_boxes_in(flamegraph_pl({"--negate"}), vperf_diff(before, after, {"--negate"}));

  difffolded(after_folded, after_folded);
  std::string reference = flamegraph_pl({});
  std::string mine = vperf_diff(after, after, {});
  EXPECT_EQ(expect_reference_boxes_in(reference, mine), 0u);
  EXPECT_EQ(boxes_of(mine).size(), boxes_of(reference).size());

  // Written to a file, with the summary line.
  test::ProgramResult to_file = test::run_vperf({"flamegraph", "--diff", before, after, "-o", file("diff.svg")});
  EXPECT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_NE(to_file.err.find("diff.svg"), std::string::npos) << to_file.err;
  EXPECT_TRUE(fs::exists(file("diff.svg")));
}

TEST_F(FlamegraphCommand, DiffNeedsTwoRecordings) {
  std::string data = file("one.data");
  ASSERT_EQ(test::run_vperf({"record", "-q", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "50"}).exit_code, 0);
  test::ProgramResult one = test::run_vperf({"flamegraph", "--diff", data});
  EXPECT_EQ(one.exit_code, 2) << one.err;
  test::ProgramResult with_input = test::run_vperf({"flamegraph", "-i", data, "--diff", data, data});
  EXPECT_EQ(with_input.exit_code, 2) << with_input.err;
  test::ProgramResult negate = test::run_vperf({"flamegraph", "-i", data, "--negate", "-o", file("n.svg")});
  EXPECT_EQ(negate.exit_code, 2) << negate.err;
  test::ProgramResult missing = test::run_vperf({"flamegraph", "--diff", data, file("nope.data"), "-o", file("d.svg")});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find("vperf: error: cannot read"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(file("d.svg")));
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
