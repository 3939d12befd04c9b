// libFuzzer target for perf probe's PROBEDEF and LINERANGE grammars and uprobe symbol fetches (tracing/probe_definition.h),
// a user's command line, and for uprobe_events lines read back (tracing/dynamic_events.h). Any text must parse or fail with an Error; what parses must be self-consistent
// (an event or group name is a C identifier, a point has a function or a file).
#include <cstddef>
#include <cstdint>
#include <cctype>
#include <string>
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
  // Symbol fetches: every "@NAME" is rewritten (names starting with 'x' are unknown: an Error),
  // and what comes back holds no symbol any more.
  auto rewritten = vperf::tracing::rewrite_symbol_fetches(text, [](const std::string& name, int64_t addend) -> vperf::Result<uint64_t> {
    if (name.starts_with('x')) return vperf::Error{"unknown"};
    return name.size() * 16 + static_cast<uint64_t>(addend);
  });
  if (rewritten)
    for (size_t at = rewritten->find('@'); at != std::string::npos; at = rewritten->find('@', at + 1))
      if (at + 1 < rewritten->size() && (std::isalpha(static_cast<unsigned char>((*rewritten)[at + 1])) || (*rewritten)[at + 1] == '_'))
        __builtin_trap();
  auto def = vperf::tracing::parse_probe_definition(text);
  if (!def) return 0;
  if (!def->event.empty() && !vperf::tracing::is_probe_event_name(def->event)) __builtin_trap();
  if (!def->group.empty() && !vperf::tracing::is_probe_event_name(def->group)) __builtin_trap();
  if (def->function.empty() && def->file.empty()) __builtin_trap();
  for (const auto& arg : def->arguments)
    if (arg.expression.empty()) __builtin_trap();
  return 0;
}
