// libFuzzer target for perf probe's PROBEDEF and LINERANGE grammars (tracing/probe_definition.h),
// a user's command line, and for uprobe_events lines read back (tracing/dynamic_events.h). Any text must parse or fail with an Error; what parses must be self-consistent
// (an event or group name is a C identifier, a point has a function or a file).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tracing/dynamic_events.h"
#include "tracing/probe_definition.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto event = vperf::tracing::parse_uprobe_definition(text)) {
    if (event->group.empty() || event->event.empty() || event->file.empty()) __builtin_trap();
  }
  if (auto range = vperf::tracing::parse_line_range(text)) {
    if (range->function.empty() && range->file.empty()) __builtin_trap();
    if (range->end && *range->end < range->start) __builtin_trap();
  }
  auto def = vperf::tracing::parse_probe_definition(text);
  if (!def) return 0;
  if (!def->event.empty() && !vperf::tracing::is_probe_event_name(def->event)) __builtin_trap();
  if (!def->group.empty() && !vperf::tracing::is_probe_event_name(def->group)) __builtin_trap();
  if (def->function.empty() && def->file.empty()) __builtin_trap();
  for (const auto& arg : def->arguments)
    if (arg.expression.empty()) __builtin_trap();
  return 0;
}
