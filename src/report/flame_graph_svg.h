#pragma once
// Interactive flame graph SVG, laid out by flamegraph.pl's rules so that the same stacks give
// the same boxes (x and width to its 0.1 px, its colours, its hover text), with vperf's own
// script for the interactivity.
//
// Geometry (flamegraph.pl, all defaults here):
//   xpad = 10; ypad1 = 3 * font_size (top, with the title); ypad2 = 2 * font_size + 10 (bottom,
//   with the details line); ypad3 = 2 * font_size more when there is a subtitle.
//   width_per_count = (width - 2 * xpad) / total. A box starts at xpad + start * width_per_count
//   where start is the sum of the counts of the boxes left of it under its parent, plus the
//   parent's start. Boxes narrower than min_width pixels (or min_width_percent of the total)
//   are left out, and so is everything above them. height = (max depth + 1) * frame_height +
//   ypad1 + ypad2 (+ ypad3). Depth d is drawn from y = height - ypad2 - (d + 1) * frame_height + 1
//   to height - ypad2 - d * frame_height (icicles: from ypad1 + d * frame_height down). A
//   box's label is its name cut to int(width / (font_size * font_width)) characters, the last
//   two replaced by "..", or nothing below 3 characters.
//
// The document: <svg> with a background <rect>, texts #title, #subtitle, #details (hover
// info), #unzoom ("Reset Zoom"), #search ("Search"), #ignorecase ("ic"), #matched ("Matched:
// P%"), then <g id="frames"> with one <g> per box in depth-first order, each
// <g><title>NAME (N samples, P%)</title><rect .../><text ...>LABEL</text></g>, then the
// <script>. Clicking a box zooms to it (it and its ancestors take the full width, the
// ancestors dimmed; boxes off its path are hidden); "Reset Zoom" undoes it. "Search" or Ctrl-F
// asks for a regular expression, colours the matching boxes and shows the share of the total
// they cover (counting nested matches once); Ctrl-I toggles case, Escape resets the search.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/stack_profile.h"

namespace vperf::report {

// flamegraph.pl --colors. Hot is its default. Java, Js and Perl pick a hue per frame: frames
// of kind Kernel/GuestKernel (or named "..._[k]") orange, Jit green, Inlined aqua, then by the
// name as flamegraph.pl does (C++ "::" yellow, "java/..." green, ...). Mem and Io are its
// memory and I/O themes; the rest are flat hues.
enum class Palette { Hot, Mem, Io, Java, Js, Perl, Red, Green, Blue, Aqua, Yellow, Purple, Orange };
std::string_view palette_name(Palette palette);
std::optional<Palette> parse_palette(std::string_view name);

// How a name picks its shade within a hue; both are deterministic.
enum class ColorHash {
  // flamegraph.pl's default: perl's srand(sum of the name's characters), then rand(). vperf
  // replays perl's drand48, so colours equal flamegraph.pl's.
  Perl,
  // flamegraph.pl --hash: weighted by the first characters, so similar names look alike.
  Weighted,
};

struct FlameGraphOptions {
  std::string title{};  // empty: "Flame Graph", or "Icicle Graph" when inverted
  std::string subtitle{};
  int width = 1200;
  int frame_height = 16;
  double font_size = 12;
  double font_width = 0.59;  // average character width relative to font_size
  std::string font_type = "Verdana";
  double min_width = 0.1;                   // pixels
  std::optional<double> min_width_percent{};  // of the total, instead of min_width
  Palette palette = Palette::Hot;
  ColorHash color_hash = ColorHash::Perl;
  bool inverted = false;  // icicle graph: root at the top
  bool reversed = false;  // stacks merged from the leaf (flamegraph.pl --reverse)
  bool negate = false;    // differential: swap red and blue, and the sign of deltas shown
  std::string count_name = "samples";
  std::string name_type = "Function:";
  // The annotations the stacks were folded with (sibling order and colour hashing use them,
  // as flamegraph.pl sees them in its input); they are never shown.
  Annotations annotations{};
};

// A laid-out box, before the 0.1 px rounding of the SVG.
struct FrameBox {
  const FlameNode* node;
  int depth;  // 0 = root
  double x1, x2, y1, y2;
};
struct FlameGraphLayout {
  double width = 0;
  double height = 0;
  uint64_t total = 0;
  std::vector<FrameBox> boxes;  // depth first, parents before children, left to right
};
FlameGraphLayout layout_flame_graph(const FlameTree& tree, const FlameGraphOptions& options);

// "rgb(r,g,b)" of a frame, as flamegraph.pl colours its label (the name with its annotation).
std::string frame_color(Palette palette, ColorHash hash, std::string_view label, FrameKind kind);
// flamegraph.pl's colour of a differential box: red when it grew, blue when it shrank.
std::string diff_color(int64_t delta, int64_t max_delta, bool negate);

// Escapes text for XML content and attribute values (& < > " '); bytes that are not valid
// UTF-8, and control characters XML 1.0 forbids, become U+FFFD.
std::string xml_escape(std::string_view text);

void write_flame_graph_svg(std::ostream& out, const FlameTree& tree, const FlameGraphOptions& options);
std::string flame_graph_svg(const StackProfile& profile, const FlameGraphOptions& options = {});
// Widths from `after`, colours from after - before.
std::string diff_flame_graph_svg(const StackProfile& before, const StackProfile& after,
                                 const FlameGraphOptions& options = {});

}  // namespace vperf::report
