// The benchmark driver of bench/flamegraph_svg.sh: folded stacks in, flame graph SVG out, as
// `flamegraph.pl [options] FILE > out.svg` does, so the two can be timed on the same input.
// Not installed and not a vperf command; built only with the tests (VPERF_BUILD_TESTS).
//
//   flamegraph_svg_bench [--diff] [--colors=PALETTE] [--hash] [--inverted] [--reverse]
//                        [--negate] [--annotated] FILE
// --diff reads difffolded.pl's two-count lines; --annotated lays out by the "_[k]"-style
// labels the file carries, as flamegraph.pl sorts them.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "report/flame_graph_svg.h"
#include "report/folded_stacks.h"

int main(int argc, char** argv) {
  using namespace vperf::report;
  FlameGraphOptions options;
  bool diff = false;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--diff") diff = true;
    else if (arg == "--hash") options.color_hash = ColorHash::Weighted;
    else if (arg == "--inverted") options.inverted = true;
    else if (arg == "--reverse") options.reversed = true;
    else if (arg == "--negate") options.negate = true;
    else if (arg == "--annotated") options.annotations = Annotations::all();
    else if (arg.starts_with("--colors=")) {
      auto palette = parse_palette(arg.substr(9));
      if (!palette) {
        std::cerr << "flamegraph_svg_bench: unknown palette " << arg.substr(9) << "\n";
        return 2;
      }
      options.palette = *palette;
    } else if (!arg.starts_with("--") && path.empty()) {
      path = arg;
    } else {
      std::cerr << "usage: flamegraph_svg_bench [--diff] [--colors=P] [--hash] [--inverted] [--reverse] "
                   "[--negate] [--annotated] FILE\n";
      return 2;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "flamegraph_svg_bench: cannot open " << path << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  if (diff) {
    auto parsed = parse_diff_folded(text.str());
    if (!parsed.ok()) {
      std::cerr << "flamegraph_svg_bench: " << parsed.error().describe() << "\n";
      return 1;
    }
    std::cout << diff_flame_graph_svg(parsed->before, parsed->after, options);
  } else {
    auto parsed = parse_folded(text.str());
    if (!parsed.ok()) {
      std::cerr << "flamegraph_svg_bench: " << parsed.error().describe() << "\n";
      return 1;
    }
    std::cout << flame_graph_svg(*parsed, options);
  }
  return 0;
}
