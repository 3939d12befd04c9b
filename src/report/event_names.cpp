#include "report/event_names.h"

#include <cstdio>
#include <iterator>
#include <optional>

namespace vperf::report {

namespace {

// perf's display names (evsel__hw_names, evsel__sw_names), which are not always the first name
// `vperf list` gives: "cycles" is listed as cpu-cycles, "branches" as branch-instructions.
constexpr const char* kHardware[] = {"cycles", "instructions", "cache-references", "cache-misses", "branches",
                                     "branch-misses", "bus-cycles", "stalled-cycles-frontend",
                                     "stalled-cycles-backend", "ref-cycles"};
constexpr const char* kSoftware[] = {"cpu-clock", "task-clock", "page-faults", "context-switches",
                                     "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
                                     "emulation-faults", "dummy", "bpf-output", "cgroup-switches"};
constexpr const char* kCaches[] = {"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node"};
constexpr const char* kOps[] = {"load", "store", "prefetch"};
constexpr const char* kOpsCounted[] = {"loads", "stores", "prefetches"};

// config = cache | op << 8 | result << 16; an access count is "L1-dcache-loads", a miss count
// "L1-dcache-load-misses".
std::string cache_event_name(uint64_t config) {
  const uint64_t cache = config & 0xff, op = (config >> 8) & 0xff, result = (config >> 16) & 0xff;
  if (config >> 24 || cache >= std::size(kCaches) || op >= std::size(kOps) || result > PERF_COUNT_HW_CACHE_RESULT_MISS)
    return "invalid-cache";
  if (result == PERF_COUNT_HW_CACHE_RESULT_ACCESS) return std::string(kCaches[cache]) + "-" + kOpsCounted[op];
  return std::string(kCaches[cache]) + "-" + kOps[op] + "-misses";
}

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace

std::string event_name(const perf_event_attr& attr, const tracing::TracepointDecoder* decoder) {
  switch (attr.type) {
    case PERF_TYPE_HARDWARE:
      return attr.config < std::size(kHardware) ? kHardware[attr.config] : "unknown-hardware";
    case PERF_TYPE_SOFTWARE:
      return attr.config < std::size(kSoftware) ? kSoftware[attr.config] : "unknown-software";
    case PERF_TYPE_HW_CACHE:
      return cache_event_name(attr.config);
    case PERF_TYPE_RAW:
      return "raw " + hex(attr.config);
    case PERF_TYPE_BREAKPOINT: {  // "mem:0x1234:rw"
      std::string name = "mem:" + hex(attr.bp_addr) + ":";
      if (attr.bp_type & 1) name += 'r';  // HW_BREAKPOINT_R
      if (attr.bp_type & 2) name += 'w';  // HW_BREAKPOINT_W
      if (attr.bp_type & 4) name += 'x';  // HW_BREAKPOINT_X
      return name;
    }
    case PERF_TYPE_TRACEPOINT:
      if (decoder)
        if (std::optional<std::string> name = decoder->event_name(attr.config)) return *name;
      return "unknown tracepoint";
    default:
      return "unknown attr type: " + std::to_string(attr.type);
  }
}

std::string event_name(const data::EventAttrEntry& entry, const tracing::TracepointDecoder* decoder) {
  return entry.name.empty() ? event_name(entry.attr, decoder) : entry.name;
}

}  // namespace vperf::report
