#pragma once
// The text tracefs hands out, parsed in one place: trace_pipe's stream cut into lines, a CPU's
// per_cpu/cpuN/stats (what its ring buffer lost), and the kernel's error_log (why it refused a
// write). All of it is outside input; tests/fuzz/trace_text_fuzz.cpp feeds it garbage.
#include <cstdint>
#include <functional>
#include <optional>
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

// A trace line whose task the kernel printed as "<...>" (its comm was not yet in saved_cmdlines
// when the line was formatted: a task that ran and was read before its first switch-out) with
// the name `comm_of(PID)` gives, in the same 16-column field; any other line as it is.
std::string with_task_name(std::string_view line, const std::function<std::optional<std::string>(int pid)>& comm_of);

// Events a CPU's ring buffer lost, from its stats text: "overrun" (overwritten before they were
// read) plus "dropped events" (refused when the buffer was full and not overwriting).
uint64_t events_lost_in_cpu_stats(std::string_view stats);

// The last entry of an error_log text (the kernel's explanation of the latest refused write),
// its lines joined with " | " and its timestamp left out; empty when there is none.
std::string last_error_log_entry(std::string_view error_log);

// The entry a refused write added to error_log, shown as last_error_log_entry shows one:
// `before` is the log as read just before the write, `after` as read once it failed. Only
// entries `before` does not hold count (error_log keeps a machine's last 16 refusals, of every
// tool, and the top level's is shared: an old entry explains someone else's write); among them
// the one that quotes `command`, else the newest. Empty when the write added none.
std::string error_log_entry_of_write(std::string_view before, std::string_view after, std::string_view command);

// perf ftrace latency's histogram of function durations, fed function_graph's text lines
// (" 1)   4.889 us    |  do_filp_open();"): each line with a duration in us counts once, in
// bucket floor(log2(duration)) (in us, or in ns with `nanoseconds`), 22 buckets, the first and
// last taking what falls below and above. That is perf 6.1's index, and its table labels bucket
// i as 2^(i-1) - 2^i: a 4.9 us call is shown in "2 - 4 us". Kept, so that both tools print the
// same histogram. Lines without a duration (headers, "{" lines) count not.
class LatencyHistogram {
 public:
  static constexpr int kBuckets = 22;
  explicit LatencyHistogram(bool nanoseconds = false) : nanoseconds_(nanoseconds) {}
  void add_line(std::string_view line);
  uint64_t total() const;
  const uint64_t* buckets() const { return buckets_; }
  // perf 6.1's table: "#   DURATION     |      COUNT | GRAPH ... |", one row per bucket, or
  // "No data found".
  std::string table() const;

 private:
  bool nanoseconds_;
  uint64_t buckets_[kBuckets] = {};
};

}  // namespace vperf::tracing
