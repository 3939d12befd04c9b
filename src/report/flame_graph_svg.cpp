#include "report/flame_graph_svg.h"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "report/flame_graph_script.h"
#include "report/perl_numbers.h"

namespace vperf::report {

namespace {

constexpr double kXPad = 10;     // flamegraph.pl's $xpad
constexpr double kFramePad = 1;  // $framepad
constexpr std::string_view kSearchColor = "rgb(230,0,230)";

// ---- UTF-8 ------------------------------------------------------------------------------

constexpr char32_t kReplacement = 0xFFFD;

// Decodes one code point at s[i], advancing i; invalid bytes decode to U+FFFD one at a time.
char32_t next_code_point(std::string_view s, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) return s[i++];
  size_t len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
  if (len == 0 || b0 > 0xF4 || i + len > s.size()) {
    ++i;
    return kReplacement;
  }
  char32_t cp = b0 & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) {
    unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return kReplacement;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return kReplacement;
  }
  i += len;
  return cp;
}

std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(next_code_point(s, i));
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Escapes text for XML as xml_escape does, onto the end of `out`.
void append_xml_escaped(std::string& out, std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      char32_t cp = next_code_point(text, i);
      if (cp == 0xFFFE || cp == 0xFFFF) cp = kReplacement;
      append_utf8(out, cp);
      continue;
    }
    ++i;
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          append_utf8(out, kReplacement);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

// ---- numbers as perl prints them ----------------------------------------------------------

// "1,234,567"
void append_with_commas(std::string& out, uint64_t value) {
  char digits[24];
  const size_t n = static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr - digits);
  for (size_t i = 0; i < n; ++i) {
    if (i && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
}
void append_int(std::string& out, int value) {
  char buf[16];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, value).ptr);
}

// ---- colours ------------------------------------------------------------------------------

// perl's srand(seed) followed by rand(1): perl (>= 5.20) has its own drand48 on every platform.
double perl_rand_after_srand(uint32_t seed) {
  uint64_t state = (uint64_t{seed} << 16) + 0x330E;
  state = (state * 0x5DEECE66DULL + 0xB) & 0xFFFFFFFFFFFFULL;
  return std::ldexp(static_cast<double>(state), -48);
}

// flamegraph.pl's random_namehash: srand(unpack("%32W*", $name)); rand(1).
double perl_name_value(std::string_view name) {
  uint32_t sum = 0;
  for (size_t i = 0; i < name.size();) sum += static_cast<uint32_t>(next_code_point(name, i));
  return perl_rand_after_srand(sum);
}

// flamegraph.pl's namehash (--hash), on code points.
double weighted_name_value(std::vector<char32_t> name) {
  // s/.(.*?)`//: everything up to the first backquote after the first character.
  auto tick = std::find(name.begin() + std::min<size_t>(1, name.size()), name.end(), U'`');
  if (tick != name.end()) name.erase(name.begin(), tick + 1);
  double vector = 0, weight = 1, max = 1;
  int mod = 10;
  for (char32_t c : name) {
    double i = static_cast<double>(c % static_cast<char32_t>(mod));
    vector += (i / (mod++ - 1)) * weight;
    max += 1 * weight;
    weight *= 0.70;
    if (mod > 12) break;
  }
  return 1 - vector / max;
}

enum class Hue { Red, Green, Blue, Yellow, Purple, Aqua, Orange };

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_java_name(std::string_view name) {
  // m:^L?(java|javax|jdk|net|org|com|io|sun)/:
  if (name.starts_with('L')) name.remove_prefix(1);
  for (std::string_view prefix : {"java/", "javax/", "jdk/", "net/", "org/", "com/", "io/", "sun/"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

bool is_js_source(std::string_view name) {
  // m:/.*\.js:
  size_t slash = name.find('/');
  return slash != std::string_view::npos && name.find(".js", slash + 1) != std::string_view::npos;
}

// The java, js and perl palettes: kinds first (what the annotations stand for), then
// flamegraph.pl's tests on the name.
Hue multi_hue(Palette palette, std::string_view label, FrameKind kind) {
  const bool jit = kind == FrameKind::Jit || ends_with(label, "_[j]");
  const bool inlined = kind == FrameKind::Inlined || ends_with(label, "_[i]");
  switch (palette) {
    case Palette::Java:
      if (jit) return Hue::Green;
      if (inlined) return Hue::Aqua;
      if (is_kernel(kind)) return Hue::Orange;
      if (is_java_name(label) || contains(label, ":::")) return Hue::Green;
      if (contains(label, "::")) return Hue::Yellow;
      if (ends_with(label, "_[k]")) return Hue::Orange;
      return Hue::Red;
    case Palette::Js:
      if (jit) return contains(label, "/") ? Hue::Green : Hue::Aqua;
      if (is_kernel(kind)) return Hue::Orange;
      if (contains(label, "::")) return Hue::Yellow;
      if (is_js_source(label)) return Hue::Green;
      if (contains(label, ":")) return Hue::Aqua;
      if (label == " ") return Hue::Green;
      if (contains(label, "_[k]")) return Hue::Orange;
      return Hue::Red;
    case Palette::Perl:
      if (is_kernel(kind)) return Hue::Orange;
      if (contains(label, "::")) return Hue::Yellow;
      if (contains(label, "Perl") || contains(label, ".pl")) return Hue::Green;
      if (ends_with(label, "_[k]")) return Hue::Orange;
      return Hue::Red;
    default:
      return Hue::Red;
  }
}

struct Rgb {
  int r, g, b;
};
void append_rgb(std::string& out, Rgb c) {
  out += "rgb(";
  append_int(out, c.r);
  out += ',';
  append_int(out, c.g);
  out += ',';
  append_int(out, c.b);
  out += ')';
}

Rgb hue_color(Hue hue, double v1) {
  auto scaled = [&](int base, int range) { return base + static_cast<int>(range * v1); };
  switch (hue) {
    case Hue::Red: { int x = scaled(50, 80); return {scaled(200, 55), x, x}; }
    case Hue::Green: { int x = scaled(50, 60); return {x, scaled(200, 55), x}; }
    case Hue::Blue: { int x = scaled(80, 60); return {x, x, scaled(205, 50)}; }
    case Hue::Yellow: { int x = scaled(175, 55); return {x, x, scaled(50, 20)}; }
    case Hue::Purple: { int x = scaled(190, 65); return {x, scaled(80, 60), x}; }
    case Hue::Aqua: return {scaled(50, 60), scaled(165, 55), scaled(165, 55)};
    case Hue::Orange: return {scaled(190, 65), scaled(90, 65), 0};
  }
  return {0, 0, 0};
}

struct Background {
  const char* from;
  const char* to;
};
Background background(Palette palette) {
  switch (palette) {
    case Palette::Mem: return {"#eef2ee", "#e0ffe0"};
    case Palette::Io: return {"#eeeeee", "#e0e0ff"};
    case Palette::Red: case Palette::Green: case Palette::Blue: case Palette::Aqua:
    case Palette::Yellow: case Palette::Purple: case Palette::Orange:
      return {"#f8f8f8", "#e8e8e8"};
    default: return {"#eeeeee", "#eeeeb0"};
  }
}

// ---- colours of a box ----------------------------------------------------------------------

Rgb color_of(Palette palette, ColorHash hash, std::string_view label, FrameKind kind) {
  double v1, v2, v3;
  if (hash == ColorHash::Weighted) {
    std::vector<char32_t> points = code_points(label);
    v1 = weighted_name_value(points);
    std::reverse(points.begin(), points.end());
    v2 = v3 = weighted_name_value(std::move(points));
  } else {
    v1 = v2 = v3 = perl_name_value(label);
  }
  switch (palette) {
    case Palette::Hot:
      return {205 + static_cast<int>(50 * v3), static_cast<int>(230 * v1), static_cast<int>(55 * v2)};
    case Palette::Mem:
      return {0, 190 + static_cast<int>(50 * v2), static_cast<int>(210 * v1)};
    case Palette::Io: {
      int r = 80 + static_cast<int>(60 * v1);
      return {r, r, 190 + static_cast<int>(55 * v2)};
    }
    case Palette::Java: case Palette::Js: case Palette::Perl:
      return hue_color(multi_hue(palette, label, kind), v1);
    case Palette::Red: return hue_color(Hue::Red, v1);
    case Palette::Green: return hue_color(Hue::Green, v1);
    case Palette::Blue: return hue_color(Hue::Blue, v1);
    case Palette::Aqua: return hue_color(Hue::Aqua, v1);
    case Palette::Yellow: return hue_color(Hue::Yellow, v1);
    case Palette::Purple: return hue_color(Hue::Purple, v1);
    case Palette::Orange: return hue_color(Hue::Orange, v1);
  }
  return {0, 0, 0};
}

Rgb diff_rgb(int64_t delta, int64_t max_delta, bool negate) {
  if (negate) delta = -delta;
  if (max_delta <= 0) max_delta = 1;
  double value = static_cast<double>(delta), max = static_cast<double>(max_delta);
  int r = 255, g = 255, b = 255;
  if (value > 0) {
    g = b = static_cast<int>(210 * (max - value) / max);
  } else if (value < 0) {
    r = g = static_cast<int>(210 * (max + value) / max);
  }
  return {r, g, b};
}

// ---- the document -------------------------------------------------------------------------

struct Geometry {
  double ypad1, ypad2, ypad3;
};
Geometry geometry(const FlameGraphOptions& options) {
  return {options.font_size * 3, options.font_size * 2 + 10, options.font_size * 2};
}

// The box's hover text, escaped: "NAME (1,234 samples, 5.67%)", "; +1.23%" inside for diffs.
void append_box_info(std::string& out, const FrameBox& box, const FlameTree& tree, uint64_t total,
                     const FlameGraphOptions& options) {
  const FlameNode& node = *box.node;
  append_xml_escaped(out, box.depth == 0 ? std::string_view("all") : std::string_view(node.name));
  out += " (";
  append_with_commas(out, node.total);
  out += ' ';
  append_xml_escaped(out, options.count_name);
  if (box.depth == 0) {
    out += ", 100%)";
    return;
  }
  out += ", ";
  append_fixed(out, (100.0 * static_cast<double>(node.total)) / static_cast<double>(total), 2);
  out += '%';
  if (tree.differential) {
    int64_t d = options.negate ? -node.delta : node.delta;
    out += d > 0 ? "; +" : "; ";
    append_fixed(out, (100.0 * static_cast<double>(d)) / static_cast<double>(total), 2);
    out += '%';
  }
  out += ')';
}

// The box's label, escaped: the name cut to what fits, as flamegraph.pl cuts it. `scratch`
// holds a cut name (kept by the caller so that cutting does not allocate per box).
void append_box_label(std::string& out, std::string_view name, double width, const FlameGraphOptions& options,
                      std::string& scratch) {
  double chars_d = width / (options.font_size * options.font_width);
  if (!(chars_d >= 3)) return;
  const size_t chars = static_cast<size_t>(chars_d);
  size_t points = 0;
  for (size_t i = 0; i < name.size() && points <= chars; ++points) next_code_point(name, i);
  if (chars >= points) {
    append_xml_escaped(out, name);
    return;
  }
  scratch.clear();
  size_t i = 0;
  for (size_t k = 0; k + 2 < chars; ++k) append_utf8(scratch, next_code_point(name, i));
  scratch += "..";
  append_xml_escaped(out, scratch);
}

void write_text(std::string& out, std::string_view id, double x, double y, std::string_view text,
                std::string_view extra = {}) {
  out += "<text";
  if (!id.empty()) {
    out += " id=\"";
    out += id;
    out += '"';
  }
  out += " x=\"";
  append_perl_number(out, x);
  out += "\" y=\"";
  append_perl_number(out, y);
  out += '"';
  if (!extra.empty()) {
    out += ' ';
    out += extra;
  }
  out += '>';
  append_xml_escaped(out, text);
  out += "</text>\n";
}

void write_header(std::string& out, double width, double height) {
  out += "<?xml version=\"1.0\" standalone=\"no\"?>\n"
         "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
         "<svg version=\"1.1\" width=\"";
  append_perl_number(out, width);
  out += "\" height=\"";
  append_perl_number(out, height);
  out += "\" viewBox=\"0 0 ";
  append_perl_number(out, width);
  out += ' ';
  append_perl_number(out, height);
  out += "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
         "<!-- Flame graph by vperf, laid out as flamegraph.pl (https://github.com/brendangregg/FlameGraph) "
         "lays out the same stacks. Click a frame to zoom, Ctrl-F to search. -->\n";
}

void write_empty(std::string& out, const FlameGraphOptions& options) {
  double height = options.font_size * 5;
  write_header(out, options.width, height);
  write_text(out, "", options.width / 2, options.font_size * 2, "ERROR: no stack counts to draw.");
  out += "</svg>\n";
}

}  // namespace

std::string_view palette_name(Palette palette) {
  switch (palette) {
    case Palette::Hot: return "hot";
    case Palette::Mem: return "mem";
    case Palette::Io: return "io";
    case Palette::Java: return "java";
    case Palette::Js: return "js";
    case Palette::Perl: return "perl";
    case Palette::Red: return "red";
    case Palette::Green: return "green";
    case Palette::Blue: return "blue";
    case Palette::Aqua: return "aqua";
    case Palette::Yellow: return "yellow";
    case Palette::Purple: return "purple";
    case Palette::Orange: return "orange";
  }
  return "hot";
}

std::optional<Palette> parse_palette(std::string_view name) {
  for (int p = 0; p <= static_cast<int>(Palette::Orange); ++p) {
    if (palette_name(static_cast<Palette>(p)) == name) return static_cast<Palette>(p);
  }
  return std::nullopt;
}

std::string frame_color(Palette palette, ColorHash hash, std::string_view label, FrameKind kind) {
  std::string out;
  append_rgb(out, color_of(palette, hash, label, kind));
  return out;
}

std::string diff_color(int64_t delta, int64_t max_delta, bool negate) {
  std::string out;
  append_rgb(out, diff_rgb(delta, max_delta, negate));
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_xml_escaped(out, text);
  return out;
}

FlameGraphLayout layout_flame_graph(const FlameTree& tree, const FlameGraphOptions& options) {
  FlameGraphLayout layout;
  layout.width = options.width;
  layout.total = tree.root.total;
  if (layout.total == 0) return layout;
  const Geometry g = geometry(options);
  const double total = static_cast<double>(layout.total);
  const double width_per_count = (options.width - 2 * kXPad) / total;
  const double min_count = options.min_width_percent ? total * *options.min_width_percent / 100
                                                     : options.min_width / width_per_count;
  // Boxes first with y left for later: the height depends on the deepest box kept. A node's
  // own count comes before its children's (flamegraph.pl sorts "a 5" before "a;b 3"), so its
  // children start after its self count.
  int max_depth = 0;
  auto visit = [&](auto&& self, const FlameNode& node, int depth, uint64_t start) -> void {
    if (static_cast<double>(node.total) < min_count) return;
    max_depth = std::max(max_depth, depth);
    layout.boxes.push_back(FrameBox{&node, depth, kXPad + static_cast<double>(start) * width_per_count,
                                    kXPad + static_cast<double>(start + node.total) * width_per_count, 0, 0});
    uint64_t child_start = start + node.self;
    for (const auto& child : node.children) {
      self(self, child, depth + 1, child_start);
      child_start += child.total;
    }
  };
  visit(visit, tree.root, 0, 0);
  layout.height = (max_depth + 1) * options.frame_height + g.ypad1 + g.ypad2;
  if (!options.subtitle.empty()) layout.height += g.ypad3;
  for (auto& box : layout.boxes) {
    if (!options.inverted) {
      box.y1 = layout.height - g.ypad2 - (box.depth + 1) * options.frame_height + kFramePad;
      box.y2 = layout.height - g.ypad2 - box.depth * options.frame_height;
    } else {
      box.y1 = g.ypad1 + box.depth * options.frame_height;
      box.y2 = g.ypad1 + (box.depth + 1) * options.frame_height - kFramePad;
    }
  }
  return layout;
}

namespace {

// Everything before the boxes: the header, the background, the styles, the texts the script
// fills in, and the <g> the boxes go in.
void write_document_head(std::string& out, const FlameGraphLayout& layout, const FlameGraphOptions& options) {
  const Geometry g = geometry(options);
  const double width = layout.width, height = layout.height;
  const Background bg = background(options.palette);
  std::string title = options.title.empty() ? (options.inverted ? "Icicle Graph" : "Flame Graph") : options.title;

  write_header(out, width, height);
  out += "<defs>\n"
         "  <linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
         "    <stop stop-color=\"";
  out += bg.from;
  out += "\" offset=\"5%\"/>\n"
         "    <stop stop-color=\"";
  out += bg.to;
  out += "\" offset=\"95%\"/>\n"
         "  </linearGradient>\n"
         "</defs>\n"
         "<style type=\"text/css\">\n"
         "  text { font-family:";
  append_xml_escaped(out, options.font_type);
  out += "; font-size:";
  append_perl_number(out, options.font_size);
  out += "px; fill:rgb(0,0,0); }\n"
         "  #search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
         "  #search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
         "  #subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
         "  #title { text-anchor:middle; font-size:";
  append_perl_number(out, options.font_size + 5);
  out += "px; }\n"
         "  #unzoom { cursor:pointer; }\n"
         "  #frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
         "  .hide { display:none; }\n"
         "  .parent { opacity:0.5; }\n"
         "</style>\n"
         "<rect x=\"0\" y=\"0\" width=\"";
  append_perl_number(out, width);
  out += "\" height=\"";
  append_perl_number(out, height);
  out += "\" fill=\"url(#background)\"/>\n";
  const double half = std::floor(width / 2);
  write_text(out, "title", half, options.font_size * 2, title);
  if (!options.subtitle.empty()) write_text(out, "subtitle", half, options.font_size * 4, options.subtitle);
  write_text(out, "details", kXPad, height - g.ypad2 / 2, " ");
  write_text(out, "unzoom", kXPad, options.font_size * 2, "Reset Zoom", "class=\"hide\"");
  write_text(out, "search", width - kXPad - 100, options.font_size * 2, "Search");
  write_text(out, "ignorecase", width - kXPad - 16, options.font_size * 2, "ic");
  write_text(out, "matched", width - kXPad - 100, height - g.ypad2 / 2, " ");

  out += "<g id=\"frames\" data-xpad=\"";
  append_perl_number(out, kXPad);
  out += "\" data-inner-width=\"";
  append_perl_number(out, width - 2 * kXPad);
  out += "\" data-char-width=\"";
  append_perl_number(out, options.font_size * options.font_width);
  out += "\" data-inverted=\"";
  out += options.inverted ? '1' : '0';
  out += "\" data-search-color=\"";
  out += kSearchColor;
  out += "\" data-name-type=\"";
  append_xml_escaped(out, options.name_type);
  out += "\">\n";
}

// The <g> of one box: hover text, rectangle, label.
class BoxWriter {
 public:
  BoxWriter(const FlameTree& tree, const FlameGraphOptions& options, uint64_t total)
      : tree_(tree), options_(options), total_(total) {}

  void write(std::string& out, const FrameBox& box) {
    const FlameNode& node = *box.node;
    // As flamegraph.pl: x1 and x2 rounded to 0.1 px, the width from the rounded ends.
    const PrintedNumber x1 = fixed_number(box.x1, 1), x2 = fixed_number(box.x2, 1);
    double x1_rounded = 0, x2_rounded = 0;
    std::from_chars(x1.text, x1.text + x1.size, x1_rounded);
    std::from_chars(x2.text, x2.text + x2.size, x2_rounded);
    out += "<g><title>";
    append_box_info(out, box, tree_, total_, options_);
    out += "</title><rect x=\"";
    out += x1.view();
    out += "\" y=\"";
    append_perl_number(out, box.y1);
    out += "\" width=\"";
    append_fixed(out, x2_rounded - x1_rounded, 1);
    out += "\" height=\"";
    append_fixed(out, box.y2 - box.y1, 1);
    out += "\" fill=\"";
    append_rgb(out, color(box));
    out += "\" rx=\"2\" ry=\"2\"/><text x=\"";
    append_fixed(out, box.x1 + 3, 2);
    out += "\" y=\"";
    append_perl_number(out, 3 + (box.y1 + box.y2) / 2);
    out += "\">";
    append_box_label(out, box.depth == 0 ? std::string_view("all") : std::string_view(node.name), box.x2 - box.x1, options_,
                     scratch_);
    out += "</text></g>\n";
  }

 private:
  Rgb color(const FrameBox& box) {
    const FlameNode& node = *box.node;
    if (box.depth > 0 && node.name == "--") return {160, 160, 160};
    if (box.depth > 0 && node.name == "-") return {200, 200, 200};
    if (tree_.differential) return diff_rgb(node.delta, tree_.max_delta, options_.negate);
    if (box.depth == 0) return color_of(options_.palette, options_.color_hash, "", FrameKind::Unknown);
    label_.clear();
    append_frame_label(label_, node.name, node.kind, options_.annotations);
    return color_of(options_.palette, options_.color_hash, label_, node.kind);
  }

  const FlameTree& tree_;
  const FlameGraphOptions& options_;
  const uint64_t total_;
  std::string label_, scratch_;  // kept from box to box: no string made per box
};

std::string flame_graph_document(const FlameTree& tree, const FlameGraphOptions& options) {
  const FlameGraphLayout layout = layout_flame_graph(tree, options);
  std::string out;
  if (layout.boxes.empty()) {
    write_empty(out, options);
    return out;
  }
  // A box takes 250 to 400 bytes; the script is the rest.
  out.reserve(layout.boxes.size() * 320 + kFlameGraphScript.size() + 4096);
  write_document_head(out, layout, options);
  BoxWriter boxes(tree, options, layout.total);
  for (const FrameBox& box : layout.boxes) boxes.write(out, box);
  out += "</g>\n<script type=\"text/ecmascript\"><![CDATA[";
  out += kFlameGraphScript;
  out += "]]></script>\n</svg>\n";
  return out;
}

}  // namespace

void write_flame_graph_svg(std::ostream& out, const FlameTree& tree, const FlameGraphOptions& options) {
  out << flame_graph_document(tree, options);
}

std::string flame_graph_svg(const StackProfile& profile, const FlameGraphOptions& options) {
  return flame_graph_document(build_flame_tree(profile, {options.annotations, options.reversed}), options);
}

std::string diff_flame_graph_svg(const StackProfile& before, const StackProfile& after,
                                 const FlameGraphOptions& options) {
  return flame_graph_document(build_diff_flame_tree(before, after, {options.annotations, options.reversed}),
                              options);
}

}  // namespace vperf::report
