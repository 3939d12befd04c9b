#pragma once
// vperf flamegraph [-i perf.data|-] [-o flamegraph.svg|-] [--folded] [--title T] [--subtitle S]
//                  [--width PX] [--min-width PX] [--colors PALETTE] [--inverted] [--reverse]
//                  [--diff BEFORE.data AFTER.data [--negate]]
//
// An interactive SVG flame graph straight from perf.data (vperf's or perf's), the graph that
// `perf script | stackcollapse-perf.pl --kernel | flamegraph.pl --colors=java` draws: stacks
// folded as stackcollapse-perf.pl folds them (names tidied, kernel frames annotated), then laid
// out and coloured box for box as flamegraph.pl does (kernel frames orange, C++ yellow, C red).
// --folded writes the folded stacks instead.
//
// --diff BEFORE AFTER draws the differential flame graph of `difffolded.pl BEFORE.folded
// AFTER.folded | flamegraph.pl` (each side folded as above): boxes as wide as in AFTER, red
// where a function grew since BEFORE, blue where it shrank, the deeper the larger the change
// (--negate swaps the colours); with --folded it writes difffolded.pl's two-count lines.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "session/reading_session.h"

namespace vperf::cli {

struct FlamegraphOptions {
  session::ReadingInput source;  // -i, --symfs, vperf kvm's guests
  std::string output = "flamegraph.svg";
  bool folded = false;
  std::string title;
  std::string subtitle;
  int width = 1200;
  double min_width = 0.1;
  std::string colors = "java";
  bool inverted = false;
  bool reversed = false;
  std::vector<std::string> diff;  // empty, or {BEFORE, AFTER}: a differential graph
  bool negate = false;
  bool inline_frames = true;  // --no-inline: DWARF-unwound frames without inline chains
};

// Returns 0; messages (the summary line, reader warnings) go to `err`.
int run_flamegraph(const FlamegraphOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vperf::cli
