#pragma once
// Counting: one group of events (a leader and its members, or a lone event) opened on one
// target, read with the layout its read_format asks for, and scaled for multiplexing in
// exactly one place (scale_count).
//
// read() layouts (linux/perf_event.h), all fields u64:
//   PERF_FORMAT_GROUP:  nr, [time_enabled], [time_running], { value, [id] } x nr
//   otherwise:          value, [time_enabled], [time_running], [id]
// vperf always asks for TOTAL_TIME_ENABLED and TOTAL_TIME_RUNNING; ID is optional.
#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/error.h"
#include "perf/event_fd.h"

namespace vperf::perf {

struct CounterReading {
  uint64_t value = 0;         // as counted, before scaling
  uint64_t time_enabled = 0;  // ns the event was enabled
  uint64_t time_running = 0;  // ns it was on a counter (less than enabled when multiplexed)
  std::optional<uint64_t> id;
};

// perf's rules: never running is "<not counted>"; running part of the time scales the value
// by enabled/running and reports the running share as perf's "(xx.xx%)".
struct ScaledCount {
  bool counted = false;
  double value = 0;            // scaled
  double running_percent = 0;  // 100 * running / enabled; 100 when not multiplexed
};
ScaledCount scale_count(const CounterReading& reading);

// Parses what read() returned for one fd with this read_format. The error says what is short.
Result<std::vector<CounterReading>> parse_read_format(std::span<const uint8_t> bytes, uint64_t read_format);

class CounterGroup {
 public:
  // Opens attrs[0] as the leader and the rest with it as group_fd, all on `target`. Every attr
  // must carry TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING; a group's must also carry GROUP (as
  // AttrBuilder builds them). On failure the Error says which member (by index) failed.
  // With `leave_out`, a member after the leader whose open fails with an errno it accepts is
  // left out and the others count together without it (perf stat's rule for a member the
  // kernel does not support, or cannot schedule with the rest: a group larger than the PMU's
  // counters); the leader's failure still fails the group.
  static Result<CounterGroup> open(const PerfEventOpener& opener, std::span<const perf_event_attr> attrs,
                                   const OpenTarget& target, bool (*leave_out)(int errno_value) = nullptr);

  // Owns its fds: movable (containers of groups move them), never copied.
  CounterGroup(CounterGroup&&) noexcept = default;
  CounterGroup& operator=(CounterGroup&&) noexcept = default;
  CounterGroup(const CounterGroup&) = delete;
  CounterGroup& operator=(const CounterGroup&) = delete;

  Result<void> enable() const;   // the whole group, through the leader
  Result<void> disable() const;
  // One reading per member opened, in attr order.
  Result<std::vector<CounterReading>> read() const;
  size_t size() const { return fds_.size(); }
  // Sets a tracepoint filter on member `attr_index` (nothing for a member left out).
  Result<void> set_filter(size_t attr_index, const std::string& filter) const;
  // The members `leave_out` left out, as attr indices in order.
  const std::vector<size_t>& left_out() const { return left_out_; }

 private:
  CounterGroup(std::vector<EventFd> fds, uint64_t read_format, std::vector<size_t> left_out)
      : fds_(std::move(fds)), read_format_(read_format), left_out_(std::move(left_out)) {}

  std::vector<EventFd> fds_;
  uint64_t read_format_ = 0;
  std::vector<size_t> left_out_;
};

}  // namespace vperf::perf
