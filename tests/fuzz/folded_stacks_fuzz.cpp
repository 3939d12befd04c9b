// libFuzzer target for folded stacks (stackcollapse-perf.pl's lines, difffolded.pl's two-count
// lines), the text `vperf flamegraph` writes with --folded and reads back to draw:
//  - any text must parse or fail with an Error; whatever parses must fold back into text and
//    draw as an SVG flame graph (plain, or differential) without crashing or overflowing;
//  - the same bytes as one stack of symbol names (split at NUL, the first byte of each picking
//    the frame's kind), as an ELF file or JIT map may name functions: folded (tidied or not,
//    with every annotation) it must parse back with its count, since flamegraph reads its own
//    folded text back and stops on a line it cannot parse.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/strings.h"
#include "report/flame_graph_svg.h"
#include "report/folded_stacks.h"

namespace {

using namespace vperf::report;

Stack stack_of_names(std::string_view bytes) {
  Stack stack;
  for (std::string_view piece : vperf::split(bytes, '\0')) {
    if (piece.empty()) continue;
    auto kind = static_cast<FrameKind>(static_cast<uint8_t>(piece[0]) % (static_cast<int>(FrameKind::Unknown) + 1));
    stack.push_back(Frame{std::string(piece.substr(1)), kind});
  }
  return stack;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (vperf::Result<StackProfile> profile = parse_folded(text)) {
    (void)folded_text(*profile);
    (void)flame_graph_svg(*profile);
  }
  if (vperf::Result<DiffProfiles> diff = parse_diff_folded(text)) {
    (void)diff_folded_text(diff->before, diff->after);
    (void)diff_flame_graph_svg(diff->before, diff->after);
  }

  StackProfile named;
  named.add(stack_of_names(text), 1);
  if (named.empty()) return 0;
  for (bool tidy : {true, false}) {
    vperf::Result<StackProfile> back = parse_folded(folded_text(named, {Annotations::all(), tidy}));
    if (!back || back->total() != 1) __builtin_trap();
  }
  return 0;
}
