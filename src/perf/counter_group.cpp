#include "perf/counter_group.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace vperf::perf {

namespace {

constexpr uint64_t kTimes = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

// Reads u64 fields in order from a buffer, refusing to run past its end.
class U64Reader {
 public:
  explicit U64Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  std::optional<uint64_t> next() {
    if (bytes_.size() - offset_ < sizeof(uint64_t)) return std::nullopt;
    uint64_t v;
    std::memcpy(&v, bytes_.data() + offset_, sizeof v);
    offset_ += sizeof v;
    return v;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t offset_ = 0;
};

Error short_read(const char* field, size_t size) {
  return Error{"perf counter read: " + std::to_string(size) + " bytes end before " + field};
}

}  // namespace

ScaledCount scale_count(const CounterReading& r) {
  ScaledCount s;
  if (r.time_running == 0) return s;  // never on a counter: perf's <not counted>
  s.counted = true;
  const double enabled = static_cast<double>(r.time_enabled);
  const double running = static_cast<double>(r.time_running);
  s.value = r.time_running < r.time_enabled ? static_cast<double>(r.value) * enabled / running
                                            : static_cast<double>(r.value);
  s.running_percent = r.time_running < r.time_enabled ? 100.0 * running / enabled : 100.0;
  return s;
}

Result<std::vector<CounterReading>> parse_read_format(std::span<const uint8_t> bytes, uint64_t read_format) {
  U64Reader in(bytes);
  std::optional<Error> short_at;
  // Reads the next u64 into `into`; remembers the first field the buffer ended before.
  auto field = [&](const char* name, uint64_t& into) {
    if (short_at) return false;
    std::optional<uint64_t> v = in.next();
    if (!v) short_at = short_read(name, bytes.size());
    into = v.value_or(0);
    return v.has_value();
  };
  auto times = [&](CounterReading& r) {
    if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) field("time_enabled", r.time_enabled);
    if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) field("time_running", r.time_running);
  };
  auto value_and_id = [&](CounterReading& r) {
    field("value", r.value);
    if (read_format & PERF_FORMAT_ID) {
      uint64_t id = 0;
      if (field("id", id)) r.id = id;
    }
  };

  std::vector<CounterReading> out;
  if (read_format & PERF_FORMAT_GROUP) {
    uint64_t nr = 0;
    field("nr", nr);
    // Each member takes at least one u64: a count beyond the buffer is corrupt, not a reason to allocate.
    if (!short_at && nr > bytes.size() / sizeof(uint64_t))
      return Error{"perf counter read: nr " + std::to_string(nr) + " is impossible"};
    CounterReading shared;
    times(shared);
    for (uint64_t i = 0; i < nr && !short_at; ++i) {
      CounterReading r = shared;
      value_and_id(r);
      out.push_back(r);
    }
  } else {
    CounterReading r;
    field("value", r.value);
    times(r);
    if (read_format & PERF_FORMAT_ID) {
      uint64_t id = 0;
      if (field("id", id)) r.id = id;
    }
    out.push_back(r);
  }
  if (short_at) return *short_at;
  return out;
}

Result<CounterGroup> CounterGroup::open(const PerfEventOpener& opener, std::span<const perf_event_attr> attrs,
                                        const OpenTarget& target, bool (*leave_out)(int errno_value)) {
  if (attrs.empty()) return Error{"a counter group needs at least one event"};
  const uint64_t read_format = attrs[0].read_format;
  if ((read_format & kTimes) != kTimes)
    return Error{"counters are read with TOTAL_TIME_ENABLED and TOTAL_TIME_RUNNING, so that they can be scaled"};
  if (attrs.size() > 1 && !(read_format & PERF_FORMAT_GROUP)) return Error{"a group of counters must be read with PERF_FORMAT_GROUP"};
  std::vector<EventFd> fds;
  std::vector<size_t> left_out;
  for (size_t i = 0; i < attrs.size(); ++i) {
    OpenTarget member = target;
    member.group_fd = i == 0 ? -1 : fds[0].get();
    auto fd = opener.open(attrs[i], member);
    if (!fd && i > 0 && leave_out != nullptr && leave_out(fd.error().errno_value)) {
      left_out.push_back(i);
      continue;
    }
    if (!fd) return Error{"event " + std::to_string(i) + " of the group: " + fd.error().message, fd.error().errno_value};
    fds.push_back(std::move(fd).value());
  }
  return CounterGroup(std::move(fds), read_format, std::move(left_out));
}

Result<void> CounterGroup::set_filter(size_t attr_index, const std::string& filter) const {
  if (std::find(left_out_.begin(), left_out_.end(), attr_index) != left_out_.end()) return {};
  // The fds are the attrs in order without the left-out ones.
  const size_t before = static_cast<size_t>(std::count_if(left_out_.begin(), left_out_.end(), [&](size_t i) { return i < attr_index; }));
  if (attr_index - before >= fds_.size()) return {};
  return fds_[attr_index - before].set_filter(filter);
}

Result<void> CounterGroup::enable() const {
  if (::ioctl(fds_[0].get(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0) return Error::from_errno("enable counters");
  return {};
}

Result<void> CounterGroup::disable() const {
  if (::ioctl(fds_[0].get(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) != 0) return Error::from_errno("disable counters");
  return {};
}

Result<std::vector<CounterReading>> CounterGroup::read() const {
  // The largest layout: nr, two times, and value+id per member.
  // The leader reads for the whole group (PERF_FORMAT_GROUP), or for itself when alone.
  std::vector<uint8_t> buf((3 + 2 * fds_.size()) * sizeof(uint64_t));
  auto n = fds_[0].read(buf.data(), buf.size());
  if (!n) return n.error();
  auto readings = parse_read_format(std::span(buf.data(), *n), read_format_);
  if (readings && readings->size() != fds_.size())
    return Error{"perf counter read: " + std::to_string(readings->size()) + " values for " +
                 std::to_string(fds_.size()) + " counters"};
  return readings;
}

}  // namespace vperf::perf
