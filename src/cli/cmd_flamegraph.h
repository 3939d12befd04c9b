#pragma once
// vperf flamegraph [-i perf.data|-] [-o flamegraph.svg|-] [--folded] [--title T] [--subtitle S]
//                  [--width PX] [--min-width PX] [--colors PALETTE] [--inverted] [--reverse]
//
// An interactive SVG flame graph straight from perf.data (vperf's or perf's), the graph that
// `perf script | stackcollapse-perf.pl --kernel | flamegraph.pl --colors=java` draws: stacks
// folded as stackcollapse-perf.pl folds them (names tidied, kernel frames annotated), then laid
// out and coloured box for box as flamegraph.pl does (kernel frames orange, C++ yellow, C red).
// --folded writes the folded stacks instead.
#include <optional>
#include <ostream>
#include <string>

namespace vperf::cli {

struct FlamegraphOptions {
  std::string input = "perf.data";
  std::string output = "flamegraph.svg";
  bool folded = false;
  std::string title;
  std::string subtitle;
  int width = 1200;
  double min_width = 0.1;
  std::string colors = "java";
  bool inverted = false;
  bool reversed = false;
};

// Returns 0; messages (the summary line, reader warnings) go to `err`.
int run_flamegraph(const FlamegraphOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vperf::cli
