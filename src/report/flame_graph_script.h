#pragma once
// The script embedded in vperf's flame graph SVGs (flame_graph_svg.h describes what it does).
// It reads its settings from data- attributes of <g id="frames">: data-xpad, data-inner-width
// (width - 2 * xpad), data-char-width (font_size * font_width), data-inverted ("1" for
// icicles), data-search-color and data-name-type, and finds each box's name and count in its
// <title> ("NAME (N samples, P%)"). The first box is the root. It never contains "]]>".
#include <string_view>

namespace vperf::report {

extern const std::string_view kFlameGraphScript;

}  // namespace vperf::report
