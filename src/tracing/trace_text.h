#pragma once
// The text tracefs hands out, parsed in one place: trace_pipe's stream cut into lines, a CPU's
// per_cpu/cpuN/stats (what its ring buffer lost), and the kernel's error_log (why it refused a
// write). All of it is outside input; tests/fuzz/trace_text_fuzz.cpp feeds it garbage.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace vperf::tracing {

// Cuts a byte stream (trace_pipe read in whatever pieces the kernel gives) into whole lines,
// without their newlines; finish() hands on a last line that had none.
class TraceLineSplitter {
 public:
  explicit TraceLineSplitter(std::function<void(std::string_view)> out) : out_(std::move(out)) {}
  void feed(std::string_view text);
  void finish();

 private:
  std::function<void(std::string_view)> out_;
  std::string pending_;
};

// Events a CPU's ring buffer lost, from its stats text: "overrun" (overwritten before they were
// read) plus "dropped events" (refused when the buffer was full and not overwriting).
uint64_t events_lost_in_cpu_stats(std::string_view stats);

// The last entry of an error_log text (the kernel's explanation of the latest refused write),
// its lines joined with " | " and its timestamp left out; empty when there is none.
std::string last_error_log_entry(std::string_view error_log);

}  // namespace vperf::tracing
