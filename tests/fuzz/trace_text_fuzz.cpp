// libFuzzer target for the text vperf reads from tracefs (tracing/trace_text.h): trace_pipe's
// stream cut into lines (the input fed in pieces whose sizes its first byte sets), those lines
// parsed as function_graph's for the latency histogram and for unknown tasks to name, a CPU's stats, and error_log's last entry. Each must take any bytes; the lines must put the stream
// back together exactly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "tracing/trace_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 64;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string rebuilt;
  bool ended = false;
  vperf::tracing::TraceLineSplitter splitter([&](std::string_view line) {
    if (ended) std::abort();  // nothing after finish()'s last line
    rebuilt.append(line);
    rebuilt.push_back('\n');
  });
  for (size_t at = 0; at < text.size(); at += piece) splitter.feed(text.substr(at, piece));
  splitter.finish();
  ended = true;
  // Every line came back with its newline; only a last line without one gained it.
  if (rebuilt != text && rebuilt != std::string(text) + "\n") std::abort();
  vperf::tracing::LatencyHistogram histogram(data[0] & 1);
  vperf::tracing::TraceLineSplitter lines([&](std::string_view line) {
    histogram.add_line(line);
    // A named task keeps the line's tail: what follows "<...>" is unchanged.
    const std::string named = vperf::tracing::with_task_name(line, [](int pid) -> std::optional<std::string> {
      if (pid % 3 == 0) return std::nullopt;
      return std::string(static_cast<size_t>(pid % 17), 'c');
    });
    if (named != line && (named.size() != line.size() || named.compare(16, std::string::npos, line.substr(16)) != 0)) std::abort();
  });
  lines.feed(text);
  lines.finish();
  (void)histogram.table();
  (void)vperf::tracing::events_lost_in_cpu_stats(text);
  (void)vperf::tracing::last_error_log_entry(text);
  return 0;
}
