#include "report/event_names.h"

#include <gtest/gtest.h>

namespace vperf::report {
namespace {

perf_event_attr attr_of(uint32_t type, uint64_t config) {
  perf_event_attr attr{};
  attr.type = type;
  attr.config = config;
  return attr;
}

// The names perf 6.1's evsel__name gives an event its file does not name (its strings are in
// the perf binary: "unknown-hardware", "invalid-cache", "raw 0x%lx", "mem:0x%lx:", ...).
TEST(EventNames, UnnamedEventsAreNamedAsPerfNamesThem) {
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES), nullptr), "cycles");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS), nullptr), "branches");
  // Not its alias "idle-cycles-frontend".
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND), nullptr),
            "stalled-cycles-frontend");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_HARDWARE, 99), nullptr), "unknown-hardware");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK), nullptr), "cpu-clock");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES), nullptr), "context-switches");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_SOFTWARE, 99), nullptr), "unknown-software");
  const uint64_t l1d_load_miss =
      PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 | uint64_t{PERF_COUNT_HW_CACHE_RESULT_MISS} << 16;
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_HW_CACHE, l1d_load_miss), nullptr), "L1-dcache-load-misses");
  const uint64_t llc_stores = PERF_COUNT_HW_CACHE_LL | PERF_COUNT_HW_CACHE_OP_WRITE << 8;
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_HW_CACHE, llc_stores), nullptr), "LLC-stores");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_HW_CACHE, 0x30000), nullptr), "invalid-cache");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_RAW, 0x1c2), nullptr), "raw 0x1c2");
  perf_event_attr bp = attr_of(PERF_TYPE_BREAKPOINT, 0);
  bp.bp_addr = 0x4010;
  bp.bp_type = 3;  // HW_BREAKPOINT_RW
  EXPECT_EQ(event_name(bp, nullptr), "mem:0x4010:rw");
  EXPECT_EQ(event_name(attr_of(PERF_TYPE_TRACEPOINT, 300), nullptr), "unknown tracepoint");
  EXPECT_EQ(event_name(attr_of(42, 0), nullptr), "unknown attr type: 42");
}

TEST(EventNames, AFilesOwnNameComesFirst) {
  data::EventAttrEntry named;
  named.attr = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
  named.name = "cpu-clock:u";
  EXPECT_EQ(event_name(named, nullptr), "cpu-clock:u");
  named.name.clear();
  EXPECT_EQ(event_name(named, nullptr), "cpu-clock");
}

}  // namespace
}  // namespace vperf::report
