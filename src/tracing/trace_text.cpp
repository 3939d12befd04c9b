#include "tracing/trace_text.h"

#include <optional>
#include <vector>

#include "core/strings.h"

namespace vperf::tracing {

void TraceLineSplitter::feed(std::string_view text) {
  pending_ += text;
  size_t start = 0;
  for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
    out_(std::string_view(pending_).substr(start, nl - start));
  pending_.erase(0, start);
}

void TraceLineSplitter::finish() {
  if (!pending_.empty()) out_(pending_);
  pending_.clear();
}

uint64_t events_lost_in_cpu_stats(std::string_view stats) {
  uint64_t total = 0;
  for (std::string_view line : split(stats, '\n'))
    for (std::string_view key : {"overrun: ", "dropped events: "})
      if (line.starts_with(key))
        if (std::optional<uint64_t> n = parse_u64(trim(line.substr(key.size())))) total += *n;
  return total;
}

std::string last_error_log_entry(std::string_view error_log) {
  // Entries start with "[ TIMESTAMP]"; continuation lines ("  Command: ...", "    ^") do not.
  std::vector<std::string_view> lines;
  for (std::string_view line : split(error_log, '\n')) {
    if (trim(line).empty()) continue;
    if (line.starts_with("[")) lines.clear();
    lines.push_back(line);
  }
  std::string joined;
  for (std::string_view line : lines) {
    if (!joined.empty()) joined += " | ";
    std::string_view shown = trim(line);
    if (shown.starts_with("[")) {
      const size_t close = shown.find(']');
      shown = close == std::string_view::npos ? std::string_view() : trim(shown.substr(close + 1));
    }
    joined += shown;
  }
  return joined;
}

}  // namespace vperf::tracing
