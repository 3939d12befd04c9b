// vperf's flame graphs against the reference, Brendan Gregg's FlameGraph scripts, and in a real
// browser:
//  - with the FlameGraph scripts (the pinned ../shared/tools/FlameGraph, or $FLAMEGRAPH_DIR), the same folded
//    stacks go through flamegraph.pl (and difffolded.pl) and through vperf's SVG writer; both
//    SVGs are parsed and every box must agree: the same names and counts (the hover titles,
//    percentages and deltas included), x and width within 0.1 px, and the same fill colour;
//  - with Debian's chromium, the SVG is loaded headless, a frame is clicked and a search run
//    from a script, and the resulting DOM (dumped with --dump-dom) shows the zoom and the
//    highlighted frames.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

#include "report/flame_graph_svg.h"
#include "report/folded_stacks.h"
#include "support/capability.h"
#include "support/run_program.h"
#include "unit/report/xml_dom.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
using report::FlameGraphOptions;
using report::StackProfile;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "vperf-flamegraph-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path file(const std::string& name, const std::string& content) const {
    fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

#define REQUIRE_FLAMEGRAPH_DIR()                                                                    \
  VPERF_REQUIRE(!test::flamegraph_dir().empty() && !test::find_program("perl").empty(),                   \
                "the FlameGraph scripts (../shared/tools/FlameGraph, or FLAMEGRAPH_DIR), and perl")

// Folded stacks from a fixed pseudo-random tree: shared prefixes, wide and narrow boxes, and the
// names that break naive writers (C++ templates, XML specials, "[unknown]", a name that another
// extends with a byte below ';', spaces, UTF-8), with kernel frames annotated "_[k]".
std::string synthetic_folded(uint64_t seed, int lines) {
  static const std::vector<std::string> names = {
      "main", "std::vector<int, std::allocator<int> >::push_back", "operator<<", "[unknown]", "foo",
      "foo.cold", "a b", "R&D \"quoted\" 'x'", "naïve_λ", "compute", "helper", "io_loop",
      "std::map<std::string, int>::find", "Lcom/example/App:::run", "-", "__libc_start_main"};
  static const std::vector<std::string> kernel = {"entry_SYSCALL_64_[k]", "do_syscall_64_[k]",
                                                  "ksys_read_[k]", "vfs_read_[k]", "schedule_[k]"};
  static const std::vector<std::string> comms = {"app", "java", "swapper", "V8_WorkerThread"};
  uint64_t state = seed;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  std::map<std::string, uint64_t> folded;
  for (int i = 0; i < lines; ++i) {
    std::string stack = comms[next() % comms.size()];
    const uint64_t depth = 1 + next() % 10;
    for (uint64_t d = 0; d < depth; ++d) {
      // Low levels draw from few names so stacks share prefixes.
      stack += ';' + names[next() % std::min<uint64_t>(names.size(), 2 + 2 * d)];
    }
    if (next() % 3 == 0) {
      const uint64_t kdepth = 1 + next() % kernel.size();
      for (uint64_t k = 0; k < kdepth; ++k) stack += ';' + kernel[k];
    }
    const uint64_t r = next() % 100;
    folded[stack] += r < 60 ? 1 + next() % 5 : r < 95 ? 10 + next() % 200 : 1000 + next() % 20000;
  }
  std::string text;
  for (const auto& [stack, count] : folded) text += stack + ' ' + std::to_string(count) + '\n';
  return text;
}

StackProfile parse(const std::string& text) {
  auto parsed = report::parse_folded(text);
  if (!parsed.ok()) throw std::runtime_error(parsed.error().describe());
  return std::move(parsed).value();
}

struct Box {
  std::string title;
  double x, width, y;
  std::string fill;
};

std::vector<Box> boxes_of(const std::string& svg, const std::string& what) {
  std::vector<Box> boxes;
  report::test::XmlElement root;
  try {
    root = report::test::XmlReader::parse(svg);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " is not well-formed XML: " << e.what();
    return boxes;
  }
  const report::test::XmlElement* frames = root.find_id("frames");
  if (!frames) {
    ADD_FAILURE() << what << " has no frames";
    return boxes;
  }
  for (const auto& g : frames->children) {
    const auto* title = g.child("title");
    const auto* rect = g.child("rect");
    if (!title || !rect) continue;
    boxes.push_back(
        {title->text, rect->number("x"), rect->number("width"), rect->number("y"), rect->attribute("fill")});
  }
  std::sort(boxes.begin(), boxes.end(), [](const Box& a, const Box& b) {
    return std::tie(a.title, a.y, a.x) < std::tie(b.title, b.y, b.x);
  });
  return boxes;
}

bool same_box(const Box& e, const Box& a) {
  return e.title == a.title && std::abs(e.x - a.x) <= 0.1 + 1e-9 && std::abs(e.width - a.width) <= 0.1 + 1e-9 &&
         e.y == a.y && e.fill == a.fill;
}

std::string describe(const Box& b) {
  std::ostringstream out;
  out << '"' << b.title << "\" x=" << b.x << " w=" << b.width << " y=" << b.y << " " << b.fill;
  return out.str();
}

void expect_same_boxes(const std::string& reference_svg, const std::string& vperf_svg) {
  auto expected = boxes_of(reference_svg, "flamegraph.pl's SVG");
  auto actual = boxes_of(vperf_svg, "vperf's SVG");
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(actual.size(), expected.size());
  int reported = 0;
  for (size_t i = 0; i < expected.size() && reported < 10; ++i) {
    if (!same_box(expected[i], actual[i])) {
      ++reported;
      ADD_FAILURE() << "box " << i << ": flamegraph.pl " << describe(expected[i]) << "\n       vperf "
                    << describe(actual[i]);
    }
  }
}

// Every box flamegraph.pl draws, vperf draws the same; vperf may draw more.
size_t expect_reference_boxes_present(const std::string& reference_svg, const std::string& vperf_svg) {
  auto expected = boxes_of(reference_svg, "flamegraph.pl's SVG");
  auto actual = boxes_of(vperf_svg, "vperf's SVG");
  std::vector<bool> used(actual.size());
  int reported = 0;
  for (const Box& e : expected) {
    auto first = std::lower_bound(actual.begin(), actual.end(), e.title,
                                  [](const Box& b, const std::string& t) { return b.title < t; });
    bool found = false;
    for (auto it = first; it != actual.end() && it->title == e.title; ++it) {
      size_t k = static_cast<size_t>(it - actual.begin());
      if (!used[k] && same_box(e, *it)) {
        used[k] = found = true;
        break;
      }
    }
    if (!found && reported++ < 10) ADD_FAILURE() << "vperf lacks flamegraph.pl's box " << describe(e);
  }
  return actual.size() - expected.size();
}

std::string run_script(const std::vector<std::string>& argv) {
  test::ProgramResult r = test::run_program(argv);
  EXPECT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
  return r.out;
}

std::string flamegraph_pl(const std::vector<std::string>& options, const fs::path& input) {
  std::vector<std::string> argv{"perl", test::flamegraph_dir() + "/flamegraph.pl"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(input.string());
  return run_script(argv);
}

TEST(FlameGraphVsFlamegraphPl, SameBoxesWithDefaults) {
  REQUIRE_FLAMEGRAPH_DIR();
  TempDir dir;
  const std::string text = synthetic_folded(1, 3000);
  const fs::path input = dir.file("in.folded", text);
  FlameGraphOptions options;
  options.annotations = report::Annotations::all();  // the input carries "_[k]", sorted as such
  expect_same_boxes(flamegraph_pl({}, input), report::flame_graph_svg(parse(text), options));
}

TEST(FlameGraphVsFlamegraphPl, SameBoxesWithJavaColoursInvertedHashAndOtherGeometry) {
  REQUIRE_FLAMEGRAPH_DIR();
  TempDir dir;
  const std::string text = synthetic_folded(2, 2000);
  const fs::path input = dir.file("in.folded", text);
  const StackProfile profile = parse(text);
  FlameGraphOptions java;
  java.annotations = report::Annotations::all();
  java.palette = report::Palette::Java;
  expect_same_boxes(flamegraph_pl({"--colors=java"}, input), report::flame_graph_svg(profile, java));

  FlameGraphOptions odd = java;
  odd.palette = report::Palette::Hot;
  odd.inverted = true;
  odd.color_hash = report::ColorHash::Weighted;
  odd.width = 900;
  odd.frame_height = 14;
  odd.font_size = 10.5;
  odd.min_width = 1;
  odd.subtitle = "sub";
  expect_same_boxes(flamegraph_pl({"--inverted", "--hash", "--width=900", "--height=14", "--fontsize=10.5",
                                   "--minwidth=1", "--subtitle=sub"},
                                  input),
                    report::flame_graph_svg(profile, odd));
}

TEST(FlameGraphVsFlamegraphPl, SameBoxesReversedAndWithPercentMinWidth) {
  REQUIRE_FLAMEGRAPH_DIR();
  TempDir dir;
  const std::string text = synthetic_folded(3, 2000);
  const fs::path input = dir.file("in.folded", text);
  const StackProfile profile = parse(text);
  FlameGraphOptions reversed;
  reversed.annotations = report::Annotations::all();
  reversed.reversed = true;
  expect_same_boxes(flamegraph_pl({"--reverse"}, input), report::flame_graph_svg(profile, reversed));
  FlameGraphOptions percent;
  percent.annotations = report::Annotations::all();
  percent.min_width_percent = 0.5;
  expect_same_boxes(flamegraph_pl({"--minwidth=0.5%"}, input), report::flame_graph_svg(profile, percent));
}

// difffolded.pl lists stacks only in the first profile with a second count of 0. flamegraph.pl
// gives them zero-width boxes keyed "name;depth;end time", and such a key can equal that of a real
// box that ended at the same time, which it then overwrites: real boxes vanish from its graph.
// So the graphs must agree exactly without those stacks, and with them, vperf must draw every box
// flamegraph.pl draws (and the ones it lost).
TEST(FlameGraphVsFlamegraphPl, SameDifferentialGraphAsDifffoldedPl) {
  REQUIRE_FLAMEGRAPH_DIR();
  TempDir dir;
  const std::string before_text = synthetic_folded(4, 1500);
  const std::string after_text = synthetic_folded(5, 1500);
  const StackProfile before = parse(before_text), after = parse(after_text);
  StackProfile before_in_after;
  for (const auto& [stack, count] : before.stacks()) {
    if (after.count(stack)) before_in_after.add(stack, count);
  }
  const fs::path after_file = dir.file("after.folded", after_text);
  auto difffolded = [&](const fs::path& first) {
    return dir.file("diff.folded",
                    run_script({"perl", test::flamegraph_dir() + "/difffolded.pl", first.string(), after_file.string()}));
  };
  FlameGraphOptions options;
  options.annotations = report::Annotations::all();
  const report::FoldedOptions as_is{.annotations = report::Annotations::all(), .tidy = false};
  const fs::path common = difffolded(dir.file("before_in_after.folded", report::folded_text(before_in_after, as_is)));
  expect_same_boxes(flamegraph_pl({}, common), report::diff_flame_graph_svg(before_in_after, after, options));
  options.negate = true;
  expect_same_boxes(flamegraph_pl({"--negate"}, common),
                    report::diff_flame_graph_svg(before_in_after, after, options));

  options.negate = false;
  const fs::path all = difffolded(dir.file("before.folded", before_text));
  const size_t extra =
      expect_reference_boxes_present(flamegraph_pl({}, all), report::diff_flame_graph_svg(before, after, options));
  std::cout << "[          ] flamegraph.pl lost " << extra << " boxes to zero-width key collisions\n";
}

TEST(FlameGraphVsFlamegraphPl, SameBoxesForTheRepositorysPerfExample) {
  REQUIRE_FLAMEGRAPH_DIR();
  const fs::path example = fs::path(test::flamegraph_dir()) / "example-perf-stacks.txt.gz";
  VPERF_REQUIRE(fs::exists(example), "example-perf-stacks.txt.gz beside the FlameGraph scripts");
  TempDir dir;
  const std::string folded = run_script(
      {"sh", "-c", "zcat '" + example.string() + "' | perl '" + test::flamegraph_dir() + "/stackcollapse-perf.pl' --all"});
  ASSERT_FALSE(folded.empty());
  const StackProfile profile = parse(folded);
  // stackcollapse-perf.pl's own output reads back and prints the same.
  EXPECT_EQ(report::folded_text(profile, {.annotations = report::Annotations::all(), .tidy = false}), folded);
  const fs::path input = dir.file("in.folded", folded);
  FlameGraphOptions options;
  options.annotations = report::Annotations::all();
  expect_same_boxes(flamegraph_pl({}, input), report::flame_graph_svg(profile, options));
  options.palette = report::Palette::Java;
  expect_same_boxes(flamegraph_pl({"--colors=java"}, input), report::flame_graph_svg(profile, options));
}

// ---- in a browser -----------------------------------------------------------------------------

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string path = test::find_program(name);
    if (!path.empty()) return path;
  }
  return "";
}

// Loads `page` in headless chromium and returns the JSON the page's script left in
// <pre id="result">.
boost::json::value run_in_chromium(const TempDir& dir, const fs::path& page) {
  test::ProgramResult r = test::run_program(
      {"timeout", "120", find_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
       "--allow-file-access-from-files", "--user-data-dir=" + (dir.path() / "profile").string(),
       "--virtual-time-budget=5000", "--dump-dom", "file://" + page.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string open = "<pre id=\"result\">";
  size_t start = r.out.find(open);
  size_t end = r.out.find("</pre>", start);
  if (start == std::string::npos || end == std::string::npos) {
    ADD_FAILURE() << "no result in the dumped DOM:\n" << r.out.substr(0, 2000) << "\n" << r.err.substr(0, 2000);
    return nullptr;
  }
  std::string json = r.out.substr(start + open.size(), end - start - open.size());
  // --dump-dom prints text escaped as HTML.
  for (auto [from, to] : {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (size_t p = 0; (p = json.find(from, p)) != std::string::npos; p += std::string_view(to).size()) {
      json.replace(p, std::string_view(from).size(), to);
    }
  }
  return boost::json::parse(json);
}

StackProfile browser_profile() {
  return parse(
      "app;main;compute;inner_loop 600\n"
      "app;main;compute;helper 200\n"
      "app;main;io;read 150\n"
      "app;main;io;write 50\n"
      "app;other;needle<T> 100\n");
}

// The page's checks, run against `doc` (the document holding the SVG). Clicks "io", reads the
// boxes, searches via the Search button with prompt() answered, resets the zoom.
const char* kBrowserChecks = R"JS(
function runChecks(doc, win) {
  var out = {errors: []};
  try {
    var click = function (el) { el.dispatchEvent(new win.MouseEvent("click", {bubbles: true})); };
    var group = function (name) {
      var gs = doc.querySelectorAll("#frames > g");
      for (var i = 0; i < gs.length; i++)
        if (gs[i].querySelector("title").textContent.indexOf(name + " (") === 0) return gs[i];
      return null;
    };
    var rect = function (name) { return group(name).querySelector("rect"); };
    var state = function (name) {
      var g = group(name), r = g.querySelector("rect");
      return {x: parseFloat(r.getAttribute("x")), width: parseFloat(r.getAttribute("width")),
              hidden: g.classList.contains("hide"), parent: g.classList.contains("parent"),
              label: g.querySelector("text").textContent};
    };
    var names = ["all", "app", "main", "compute", "inner_loop", "helper", "io", "read", "write", "other", "needle<T>"];
    var snapshot = function () { var s = {}; names.forEach(function (n) { s[n] = state(n); }); return s; };

    out.before = snapshot();
    group("io").querySelector("rect").dispatchEvent(new win.MouseEvent("mouseover", {bubbles: true}));
    out.details = doc.getElementById("details").textContent;
    click(group("io").querySelector("text"));
    out.zoomed = snapshot();
    out.unzoomShown = !doc.getElementById("unzoom").classList.contains("hide");

    win.prompt = function () { return "^(helper|write|needle)"; };
    click(doc.getElementById("search"));
    out.highlighted = [];
    var gs = doc.querySelectorAll("#frames > g");
    for (var i = 0; i < gs.length; i++) {
      if (gs[i].querySelector("rect").getAttribute("fill") === "rgb(230,0,230)") {
        var t = gs[i].querySelector("title").textContent;
        out.highlighted.push(t.substring(0, t.lastIndexOf(" (")));
      }
    }
    out.matched = doc.getElementById("matched").textContent;
    out.searchButton = doc.getElementById("search").textContent;

    click(doc.getElementById("unzoom"));
    out.reset = snapshot();
    click(doc.getElementById("search"));  // "Reset Search"
    out.fillAfterReset = rect("helper").getAttribute("fill");

    win.prompt = function () { return "NEEDLE"; };
    doc.dispatchEvent(new win.KeyboardEvent("keydown", {key: "i", ctrlKey: true, bubbles: true}));
    doc.dispatchEvent(new win.KeyboardEvent("keydown", {key: "f", ctrlKey: true, bubbles: true}));
    out.ignoreCaseMatched = doc.getElementById("matched").textContent;
  } catch (e) {
    out.errors.push(String(e && e.stack || e));
  }
  return out;
}
)JS";

void expect_browser_results(const boost::json::value& result) {
  ASSERT_TRUE(result.is_object()) << result;
  const auto& r = result.as_object();
  EXPECT_TRUE(r.at("errors").as_array().empty()) << r.at("errors");
  auto num = [&](const char* snap, const char* name, const char* field) {
    return r.at(snap).at(name).at(field).to_number<double>();
  };
  auto flag = [&](const char* snap, const char* name, const char* field) {
    return r.at(snap).at(name).at(field).as_bool();
  };
  // 1100 samples over 1180 px; io is 200 of them.
  EXPECT_NEAR(num("before", "io", "width"), 1180.0 * 200 / 1100, 0.1);
  EXPECT_EQ(r.at("details").as_string(), "Function: io (200 samples, 18.18%)");
  // Zoom: io takes the full width, its ancestors too (dimmed), its children scale, the rest hide.
  EXPECT_DOUBLE_EQ(num("zoomed", "io", "width"), 1180);
  EXPECT_DOUBLE_EQ(num("zoomed", "io", "x"), 10);
  EXPECT_FALSE(flag("zoomed", "io", "hidden"));
  for (const char* ancestor : {"all", "app", "main"}) {
    EXPECT_TRUE(flag("zoomed", ancestor, "parent")) << ancestor;
    EXPECT_DOUBLE_EQ(num("zoomed", ancestor, "width"), 1180) << ancestor;
  }
  EXPECT_NEAR(num("zoomed", "read", "width"), 1180.0 * 150 / 200, 0.2);
  EXPECT_NEAR(num("zoomed", "write", "x"), 10 + 1180.0 * 150 / 200, 0.2);
  EXPECT_FALSE(flag("zoomed", "read", "hidden"));
  for (const char* off_path : {"compute", "inner_loop", "helper", "other", "needle<T>"}) {
    EXPECT_TRUE(flag("zoomed", off_path, "hidden")) << off_path;
  }
  EXPECT_EQ(r.at("zoomed").at("io").at("label").as_string(), "io");
  EXPECT_TRUE(r.at("unzoomShown").as_bool());
  // Search: exactly the matching frames, and their share of all samples.
  std::vector<std::string> highlighted;
  for (const auto& v : r.at("highlighted").as_array()) highlighted.emplace_back(v.as_string());
  std::sort(highlighted.begin(), highlighted.end());
  EXPECT_EQ(highlighted, (std::vector<std::string>{"helper", "needle<T>", "write"}));
  EXPECT_EQ(r.at("matched").as_string(), "Matched: 31.8%");  // (200 + 50 + 100) / 1100
  EXPECT_EQ(r.at("searchButton").as_string(), "Reset Search");
  // Reset Zoom restores every box.
  for (const char* name : {"all", "io", "read", "compute", "needle<T>"}) {
    EXPECT_DOUBLE_EQ(num("reset", name, "width"), num("before", name, "width")) << name;
    EXPECT_DOUBLE_EQ(num("reset", name, "x"), num("before", name, "x")) << name;
    EXPECT_FALSE(flag("reset", name, "hidden")) << name;
    EXPECT_EQ(r.at("reset").at(name).at("label"), r.at("before").at(name).at("label")) << name;
  }
  EXPECT_NE(r.at("fillAfterReset").as_string(), "rgb(230,0,230)");
  // Ctrl-I then Ctrl-F: a case-insensitive search for NEEDLE.
  EXPECT_EQ(r.at("ignoreCaseMatched").as_string(), "Matched: 9.1%");
}

TEST(FlameGraphInBrowser, ZoomAndSearchWorkInlineInAPage) {
  VPERF_REQUIRE(!find_chromium().empty(), "chromium (apt-get install chromium)");
  TempDir dir;
  std::string svg = report::flame_graph_svg(browser_profile());
  svg = svg.substr(svg.find("<svg"));  // an HTML page takes the <svg> element itself
  const fs::path page = dir.file("page.html", std::string("<!DOCTYPE html><html><body>\n") + svg +
                                                  "<pre id=\"result\"></pre>\n<script>" + kBrowserChecks +
                                                  "document.getElementById('result').textContent = "
                                                  "JSON.stringify(runChecks(document, window));</script>\n"
                                                  "</body></html>\n");
  expect_browser_results(run_in_chromium(dir, page));
}

TEST(FlameGraphInBrowser, ZoomAndSearchWorkInTheStandaloneSvg) {
  VPERF_REQUIRE(!find_chromium().empty(), "chromium (apt-get install chromium)");
  TempDir dir;
  dir.file("graph.svg", report::flame_graph_svg(browser_profile()));
  // The page drives the SVG document in an iframe (same origin with --allow-file-access-from-files).
  const fs::path page = dir.file(
      "page.html", std::string("<!DOCTYPE html><html><body>\n<iframe id=\"f\" src=\"graph.svg\" width=\"1200\" "
                               "height=\"400\"></iframe>\n<pre id=\"result\"></pre>\n<script>") +
                       kBrowserChecks +
                       "window.addEventListener('load', function () {\n"
                       "  var frame = document.getElementById('f');\n"
                       "  var out = frame.contentDocument ? runChecks(frame.contentDocument, frame.contentWindow)\n"
                       "                                  : {errors: ['no access to the SVG document']};\n"
                       "  out.contentType = frame.contentDocument ? frame.contentDocument.contentType : '';\n"
                       "  document.getElementById('result').textContent = JSON.stringify(out);\n"
                       "});</script>\n</body></html>\n");
  boost::json::value result = run_in_chromium(dir, page);
  ASSERT_TRUE(result.is_object());
  EXPECT_EQ(result.at("contentType").as_string(), "image/svg+xml");
  expect_browser_results(result);
}

}  // namespace
}  // namespace vperf
