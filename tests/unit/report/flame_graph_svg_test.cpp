#include "report/flame_graph_svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "report/folded_stacks.h"
#include "xml_dom.h"

namespace vperf::report {
namespace {

using test::XmlElement;
using test::XmlReader;

Frame user(std::string name) { return Frame{std::move(name), FrameKind::User}; }
Frame kernel(std::string name) { return Frame{std::move(name), FrameKind::Kernel}; }

StackProfile folded(std::string_view text) {
  auto parsed = parse_folded(text);
  if (!parsed.ok()) throw std::runtime_error(parsed.error().describe());
  return std::move(parsed).value();
}

XmlElement parse_svg(const std::string& svg) {
  try {
    return XmlReader::parse(svg);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not well-formed XML: " << e.what() << "\n" << svg.substr(0, 4000);
    return {};
  }
}

struct SvgFrame {
  std::string title;
  double x, y, width, height;
  std::string fill, label;
};
std::vector<SvgFrame> frames_of(const XmlElement& svg) {
  std::vector<SvgFrame> out;
  const XmlElement* frames = svg.find_id("frames");
  if (!frames) {
    ADD_FAILURE() << "no <g id=\"frames\">";
    return out;
  }
  for (const auto& g : frames->children) {
    EXPECT_EQ(g.name, "g");
    const XmlElement* title = g.child("title");
    const XmlElement* rect = g.child("rect");
    const XmlElement* text = g.child("text");
    if (!title || !rect || !text) {
      ADD_FAILURE() << "frame without title, rect or text";
      continue;
    }
    out.push_back({title->text, rect->number("x"), rect->number("y"), rect->number("width"),
                   rect->number("height"), rect->attribute("fill"), text->text});
  }
  return out;
}

const SvgFrame* find_frame(const std::vector<SvgFrame>& frames, std::string_view title_prefix) {
  for (const auto& f : frames) {
    if (f.title.starts_with(title_prefix)) return &f;
  }
  return nullptr;
}

// A profile with a wide range of counts: many boxes fall below 0.1 px at 1200 px.
StackProfile wide_profile() {
  StackProfile p;
  p.add(Stack{process_frame("app"), user("main"), user("hot")}, 100000);
  for (int i = 0; i < 200; ++i) {
    p.add(Stack{process_frame("app"), user("main"), user("cold" + std::to_string(i))}, static_cast<uint64_t>(i + 1));
  }
  p.add(Stack{process_frame("app"), user("main")}, 500);
  p.add(Stack{process_frame("app"), kernel("sys_read"), kernel("vfs_read")}, 20000);
  return p;
}

TEST(FlameGraphSvg, IsWellFormedWithOneGroupPerBoxAboveMinWidth) {
  const StackProfile p = wide_profile();
  const std::string svg = flame_graph_svg(p);
  XmlElement root = parse_svg(svg);
  EXPECT_EQ(root.name, "svg");
  auto frames = frames_of(root);

  // Count the nodes flamegraph.pl keeps: total * (1180 / all) >= 0.1 px.
  FlameTree tree = build_flame_tree(p);
  const double per_count = 1180.0 / static_cast<double>(p.total());
  size_t wide_enough = 0;
  std::function<void(const FlameNode&)> count = [&](const FlameNode& n) {
    if (static_cast<double>(n.total) * per_count < 0.1) return;
    ++wide_enough;
    for (const auto& c : n.children) count(c);
  };
  count(tree.root);
  EXPECT_EQ(frames.size(), wide_enough);
  EXPECT_LT(frames.size(), tree.root.node_count());  // some really were dropped
  EXPECT_EQ(layout_flame_graph(tree, {}).boxes.size(), wide_enough);
  for (const auto& f : frames) EXPECT_GE(f.width, 0.1 - 1e-9) << f.title;
}

TEST(FlameGraphSvg, WidthsAreProportionalToCounts) {
  const StackProfile p = wide_profile();
  auto frames = frames_of(parse_svg(flame_graph_svg(p)));
  const double per_count = 1180.0 / static_cast<double>(p.total());
  std::regex info(R"(^(.*) \(([\d,]+) samples, ([\d.]+)%\)$)");
  for (const auto& f : frames) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(f.title, m, info)) << f.title;
    std::string digits = m[2];
    std::erase(digits, ',');
    const double count = std::stod(digits);
    // Both ends are rounded to 0.1 px, so the width is within 0.1 px of the exact one.
    EXPECT_NEAR(f.width, count * per_count, 0.1 + 1e-9) << f.title;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.2f", 100.0 * count / static_cast<double>(p.total()));
    if (f.title.starts_with("all (")) {
      EXPECT_EQ(m[3], "100");
    } else {
      EXPECT_EQ(m[3], pct) << f.title;
    }
    EXPECT_EQ(f.height, 15.0);
  }
  const SvgFrame* root = find_frame(frames, "all (");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->title, "all (140,600 samples, 100%)");
  EXPECT_EQ(root->x, 10.0);
  EXPECT_EQ(root->width, 1180.0);
  const SvgFrame* hot = find_frame(frames, "hot (");
  ASSERT_NE(hot, nullptr);
  EXPECT_EQ(hot->title, "hot (100,000 samples, 71.12%)");
}

TEST(FlameGraphSvg, GeometryFollowsFlamegraphPl) {
  StackProfile p = folded("a;b;c 3\na;d 1\n");
  FlameTree tree = build_flame_tree(p);
  FlameGraphLayout layout = layout_flame_graph(tree, {});
  // (max depth 3 + 1) * 16 + ypad1 36 + ypad2 34
  EXPECT_EQ(layout.height, 4 * 16 + 36 + 34);
  ASSERT_EQ(layout.boxes.size(), 5u);
  const FrameBox& c = layout.boxes[3];
  EXPECT_EQ(c.node->name, "c");
  EXPECT_EQ(c.depth, 3);
  EXPECT_DOUBLE_EQ(c.x1, 10);
  EXPECT_DOUBLE_EQ(c.x2, 10 + 3 * 1180.0 / 4);
  EXPECT_EQ(c.y1, layout.height - 34 - 4 * 16 + 1);
  EXPECT_EQ(c.y2, layout.height - 34 - 3 * 16);
  const FrameBox& d = layout.boxes[4];
  EXPECT_DOUBLE_EQ(d.x1, 10 + 3 * 1180.0 / 4);

  FlameGraphOptions icicle;
  icicle.inverted = true;
  FlameGraphLayout inverted = layout_flame_graph(tree, icicle);
  EXPECT_EQ(inverted.boxes[3].y1, 36 + 3 * 16);
  EXPECT_EQ(inverted.boxes[3].y2, 36 + 4 * 16 - 1);

  FlameGraphOptions sub;
  sub.subtitle = "x";
  EXPECT_EQ(layout_flame_graph(tree, sub).height, layout.height + 24);

  FlameGraphOptions percent;
  percent.min_width_percent = 30;  // d (25%) goes
  EXPECT_EQ(layout_flame_graph(tree, percent).boxes.size(), 4u);
  FlameGraphOptions pixels;
  pixels.min_width = 300;  // 1180 / 4 = 295 px for d
  EXPECT_EQ(layout_flame_graph(tree, pixels).boxes.size(), 4u);
}

TEST(FlameGraphSvg, SelfCountComesBeforeChildren) {
  FlameTree tree = build_flame_tree(folded("a 1\na;b 1\n"));
  FlameGraphLayout layout = layout_flame_graph(tree, {});
  ASSERT_EQ(layout.boxes.size(), 3u);
  EXPECT_DOUBLE_EQ(layout.boxes[2].x1, 10 + 590);
}

TEST(FlameGraphSvg, OptionsReachTheDocument) {
  FlameGraphOptions options;
  options.title = "CPU <all>";
  options.subtitle = "run & done";
  options.count_name = "bytes";
  options.width = 800;
  options.frame_height = 20;
  options.font_size = 10;
  XmlElement svg = parse_svg(flame_graph_svg(folded("a;b 1000\n"), options));
  EXPECT_EQ(svg.attribute("width"), "800");
  EXPECT_EQ(svg.find_id("title")->text, "CPU <all>");
  EXPECT_EQ(svg.find_id("subtitle")->text, "run & done");
  EXPECT_EQ(svg.find_id("unzoom")->text, "Reset Zoom");
  EXPECT_EQ(svg.find_id("search")->text, "Search");
  auto frames = frames_of(svg);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[2].title, "b (1,000 bytes, 100.00%)");
  EXPECT_EQ(frames[2].height, 19.0);
  EXPECT_EQ(frames[2].width, 780.0);

  options.inverted = true;
  options.title.clear();
  EXPECT_EQ(parse_svg(flame_graph_svg(folded("a 1\n"), options)).find_id("title")->text, "Icicle Graph");
  EXPECT_EQ(parse_svg(flame_graph_svg(folded("a 1\n"))).find_id("title")->text, "Flame Graph");
}

TEST(FlameGraphSvg, EscapesNamesForXml) {
  const std::vector<std::string> names = {
      "std::vector<int, std::allocator<int> >::push_back",
      "operator<<(std::ostream&, char const*)",
      "say \"hi\" & 'bye'",
      "[unknown]",
      "</title><script>alert(1)</script>",
      "]]>",
  };
  StackProfile p;
  for (const auto& n : names) p.add(Stack{user("main"), user(n)}, 10);
  const std::string svg = flame_graph_svg(p, {.width = 4000});
  auto frames = frames_of(parse_svg(svg));
  for (const auto& n : names) {
    const SvgFrame* f = find_frame(frames, n + " (10 samples");
    ASSERT_NE(f, nullptr) << n;
    EXPECT_EQ(f->label, n);
  }
}

TEST(FlameGraphSvg, ReplacesWhatXmlCannotCarry) {
  EXPECT_EQ(xml_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
  EXPECT_EQ(xml_escape("tab\tok"), "tab\tok");
  EXPECT_EQ(xml_escape(std::string("nul\0x", 5)), "nul\xEF\xBF\xBDx");
  EXPECT_EQ(xml_escape("bell\x07"), "bell\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape("bad\xC3("), "bad\xEF\xBF\xBD(");
  EXPECT_EQ(xml_escape("\xE2\x82\xAC"), "\xE2\x82\xAC");   // euro sign stays
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  StackProfile p;
  p.add(Stack{user(std::string("ctl\x01\xFF", 5))}, 1);
  parse_svg(flame_graph_svg(p));
}

TEST(FlameGraphSvg, LabelsAreCutToFit) {
  // 1180 px * 1/100 = 11.8 px: one character (7.08 px) fits, so no label at all.
  // 1180 px * 10/100 = 118 px: 16 characters, the last two "..".
  StackProfile p;
  p.add(Stack{user("abcdefghijklmnopqrstuvwxyz")}, 10);
  p.add(Stack{user("narrow_function")}, 1);
  p.add(Stack{user("zzz")}, 89);
  auto frames = frames_of(parse_svg(flame_graph_svg(p)));
  EXPECT_EQ(find_frame(frames, "abcdefghijklmnopqrstuvwxyz (")->label, "abcdefghijklmn..");
  EXPECT_EQ(find_frame(frames, "narrow_function (")->label, "");
  EXPECT_EQ(find_frame(frames, "zzz (")->label, "zzz");
}

TEST(FrameColor, MatchesFlamegraphPlDefaultsAndHash) {
  // Computed with flamegraph.pl's own color() in perl 5.36.
  EXPECT_EQ(frame_color(Palette::Hot, ColorHash::Perl, "main", FrameKind::User), "rgb(243,179,42)");
  EXPECT_EQ(frame_color(Palette::Hot, ColorHash::Perl, "", FrameKind::User), "rgb(213,39,9)");
  EXPECT_EQ(frame_color(Palette::Hot, ColorHash::Weighted, "main", FrameKind::User), "rgb(247,83,46)");
  EXPECT_EQ(frame_color(Palette::Java, ColorHash::Perl, "do_sys_open_[k]", FrameKind::User), "rgb(194,94,0)");
}

TEST(FrameColor, KindPalettesColourKernelApart) {
  auto hue = [](std::string_view color) {
    int r, g, b;
    EXPECT_EQ(std::sscanf(std::string(color).c_str(), "rgb(%d,%d,%d)", &r, &g, &b), 3);
    return std::array<int, 3>{r, g, b};
  };
  for (Palette p : {Palette::Java, Palette::Js, Palette::Perl}) {
    auto k = hue(frame_color(p, ColorHash::Perl, "do_sys_open", FrameKind::Kernel));
    EXPECT_GE(k[0], 190);
    EXPECT_EQ(k[2], 0) << palette_name(p);  // orange
    auto gk = hue(frame_color(p, ColorHash::Perl, "do_sys_open", FrameKind::GuestKernel));
    EXPECT_EQ(gk[2], 0);
    auto u = hue(frame_color(p, ColorHash::Perl, "do_sys_open", FrameKind::User));
    EXPECT_NE(u[2], 0) << palette_name(p);  // red: r, x, x
  }
  auto jit = hue(frame_color(Palette::Java, ColorHash::Perl, "Interpreter", FrameKind::Jit));
  EXPECT_GT(jit[1], jit[0]);  // green
  auto cpp = hue(frame_color(Palette::Java, ColorHash::Perl, "std::sort", FrameKind::User));
  EXPECT_EQ(cpp[0], cpp[1]);  // yellow
  EXPECT_EQ(parse_palette("java"), Palette::Java);
  EXPECT_EQ(parse_palette("nope"), std::nullopt);
}

TEST(DiffFlameGraph, RedGrewBlueShrankWidthsFromAfter) {
  auto diff = parse_diff_folded("a;grew 1 11\na;shrank 10 5\na;same 4 4\n");
  ASSERT_TRUE(diff.ok());
  const std::string svg = diff_flame_graph_svg(diff->before, diff->after);
  auto frames = frames_of(parse_svg(svg));
  const SvgFrame* grew = find_frame(frames, "grew (");
  const SvgFrame* shrank = find_frame(frames, "shrank (");
  const SvgFrame* same = find_frame(frames, "same (");
  ASSERT_TRUE(grew && shrank && same);
  // max delta 10: +10 is full red, -5 is half blue.
  EXPECT_EQ(grew->fill, "rgb(255,0,0)");
  EXPECT_EQ(shrank->fill, "rgb(105,105,255)");
  EXPECT_EQ(same->fill, "rgb(255,255,255)");
  EXPECT_EQ(grew->title, "grew (11 samples, 55.00%; +50.00%)");
  EXPECT_EQ(shrank->title, "shrank (5 samples, 25.00%; -25.00%)");
  EXPECT_EQ(same->title, "same (4 samples, 20.00%; 0.00%)");
  EXPECT_NEAR(grew->width, 1180.0 * 11 / 20, 0.1);

  FlameGraphOptions negate;
  negate.negate = true;
  auto negated = frames_of(parse_svg(diff_flame_graph_svg(diff->before, diff->after, negate)));
  EXPECT_EQ(find_frame(negated, "grew (")->fill, "rgb(0,0,255)");
  EXPECT_EQ(find_frame(negated, "shrank (")->fill, "rgb(255,105,105)");
  EXPECT_EQ(find_frame(negated, "grew (")->title, "grew (11 samples, 55.00%; -50.00%)");

  EXPECT_EQ(diff_color(0, 10, false), "rgb(255,255,255)");
  EXPECT_EQ(diff_color(3, 10, false), "rgb(255,147,147)");
  EXPECT_EQ(diff_color(-3, 10, false), "rgb(147,147,255)");
}

TEST(FlameGraphSvg, SameInputSameBytes) {
  StackProfile a, b;
  const std::vector<std::pair<Stack, uint64_t>> stacks = {
      {{process_frame("x"), user("main"), user("f")}, 5},
      {{process_frame("x"), user("main"), kernel("sys")}, 7},
      {{process_frame("y"), user("g")}, 3},
  };
  for (const auto& [s, n] : stacks) a.add(s, n);
  for (auto it = stacks.rbegin(); it != stacks.rend(); ++it) b.add(it->first, it->second);
  FlameGraphOptions options;
  options.palette = Palette::Java;
  const std::string first = flame_graph_svg(a, options);
  EXPECT_EQ(first, flame_graph_svg(a, options));
  EXPECT_EQ(first, flame_graph_svg(b, options));
}

TEST(FlameGraphSvg, EmptyProfileIsStillAnSvg) {
  XmlElement svg = parse_svg(flame_graph_svg(StackProfile{}));
  EXPECT_EQ(svg.name, "svg");
  EXPECT_EQ(svg.find_id("frames"), nullptr);
}

TEST(FlameGraphSvg, ScriptIsCdataAndSettingsAreAttributes) {
  XmlElement svg = parse_svg(flame_graph_svg(folded("a 1\n")));
  const XmlElement* script = svg.child("script");
  ASSERT_NE(script, nullptr);
  EXPECT_NE(script->text.find("function zoom"), std::string::npos);
  const XmlElement* frames = svg.find_id("frames");
  EXPECT_EQ(frames->attribute("data-inner-width"), "1180");
  EXPECT_EQ(frames->attribute("data-char-width"), "7.08");
  EXPECT_EQ(frames->attribute("data-name-type"), "Function:");
}

}  // namespace
}  // namespace vperf::report
