#include "events/record_attr.h"

#include <gtest/gtest.h>
#include <linux/hw_breakpoint.h>

#include <time.h>

#include <cstring>

namespace vperf::events {
namespace {

ResolvedEvent software(uint64_t config) {
  ResolvedEvent e;
  e.name = "cpu-clock";
  e.type = PERF_TYPE_SOFTWARE;
  e.config = config;
  return e;
}

// Expected values: `perf record -vv -e cpu-clock -g -- true` (perf 6.1).
TEST(RecordAttr, CommandWithFramePointerCallGraphIsPerfs) {
  RecordAttrOptions o;
  o.call_graph = CallGraph::FramePointer;
  o.tracking = true;
  o.enable_on_exec = true;
  perf_event_attr a = build_record_attr(software(PERF_COUNT_SW_CPU_CLOCK), o);
  EXPECT_EQ(a.sample_type,
            uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD});
  EXPECT_EQ(a.freq, 1u);
  EXPECT_EQ(a.sample_freq, 4000u);
  EXPECT_EQ(a.read_format, uint64_t{PERF_FORMAT_ID});
  EXPECT_TRUE(a.disabled && a.inherit && a.enable_on_exec && a.exclude_guest);
  EXPECT_TRUE(a.mmap && a.mmap2 && a.comm && a.comm_exec && a.task && a.sample_id_all);
}

// An event's own terms override the options, as perf 6.1 applies them (perf evlist -v of
// `perf record -e 'cpu-clock/period=100000/'` and the others below).
TEST(RecordAttr, EventSettingsOverrideTheOptions) {
  RecordAttrOptions o;
  o.frequency = 99;
  ResolvedEvent fixed = software(PERF_COUNT_SW_CPU_CLOCK);
  fixed.settings.rate = EventSettings::Rate{false, 100000};
  perf_event_attr a = build_record_attr(fixed, o);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 100000u);
  EXPECT_EQ(a.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME}) << "a fixed period is not sampled";

  ResolvedEvent chained = software(PERF_COUNT_SW_CPU_CLOCK);
  chained.settings.max_stack = 3;  // alone: frame-pointer chains
  chained.settings.time = false;
  chained.settings.inherit = false;
  a = build_record_attr(chained, o);
  EXPECT_EQ(a.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD});
  EXPECT_EQ(a.sample_max_stack, 3u);
  EXPECT_EQ(a.inherit, 0u);
  EXPECT_EQ(a.sample_freq, 99u);

  ResolvedEvent dwarf = software(PERF_COUNT_SW_CPU_CLOCK);
  dwarf.settings.call_graph = CallGraph::Dwarf;
  dwarf.settings.stack_size = 4096;
  a = build_record_attr(dwarf, o);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(a.sample_stack_user, 4096u);
  EXPECT_TRUE(a.exclude_callchain_user);

  o.call_graph = CallGraph::FramePointer;  // record -g, and call-graph=no on this event
  ResolvedEvent plain = software(PERF_COUNT_SW_CPU_CLOCK);
  plain.settings.call_graph = CallGraph::None;
  EXPECT_FALSE(build_record_attr(plain, o).sample_type & PERF_SAMPLE_CALLCHAIN);
}

// `perf record -vv -e sched:sched_switch -a`: period 1, CPU and RAW whatever -F says.
TEST(RecordAttr, TracepointsSampleEveryHitWithRawData) {
  ResolvedEvent tp;
  tp.name = "sched:sched_switch";
  tp.type = PERF_TYPE_TRACEPOINT;
  tp.config = 0x174;
  RecordAttrOptions o;
  o.frequency = 99;
  o.system_wide = true;
  o.several_events = true;
  perf_event_attr a = build_record_attr(tp, o);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 1u);
  EXPECT_EQ(a.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                    PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW | PERF_SAMPLE_IDENTIFIER});
  EXPECT_FALSE(a.mmap) << "only the first event tracks tasks";
  EXPECT_TRUE(a.sample_id_all);
}

// `perf record -vv --call-graph dwarf,4096`: registers and 4096 bytes of stack, user chain
// excluded, data addresses and data mmaps (perf script's unwinder needs those maps).
// perf 6.1's `record -e mem:0x404020:w` (perf evlist -v): every hit sampled, with a fixed period
// and so no PERIOD field; -c and -F override the period as for any event.
TEST(RecordAttr, BreakpointsSampleEveryHitUnlessARateIsGiven) {
  ResolvedEvent bp;
  bp.name = "mem:0x404020:w";
  bp.type = PERF_TYPE_BREAKPOINT;
  bp.bp_type = HW_BREAKPOINT_W;
  bp.config1 = 0x404020;
  bp.config2 = 4;
  RecordAttrOptions o;
  perf_event_attr a = build_record_attr(bp, o);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 1u);
  EXPECT_EQ(a.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME});
  EXPECT_EQ(a.bp_type, uint32_t{HW_BREAKPOINT_W});
  EXPECT_EQ(a.bp_addr, 0x404020u);
  EXPECT_EQ(a.bp_len, 4u);
  o.period = 10;
  EXPECT_EQ(build_record_attr(bp, o).sample_period, 10u);
  o.period.reset();
  o.frequency = 99;
  perf_event_attr f = build_record_attr(bp, o);
  EXPECT_EQ(f.freq, 1u);
  EXPECT_EQ(f.sample_freq, 99u);
}

// perf 6.1's -k names (parse_clockid): numbers, names, short names, a CLOCK_ prefix, any case.
TEST(RecordAttr, ClockIdsAsPerfNamesThem) {
  EXPECT_EQ(parse_clockid("mono"), CLOCK_MONOTONIC);
  EXPECT_EQ(parse_clockid("1"), 1);
  EXPECT_EQ(parse_clockid("CLOCK_MONOTONIC_RAW"), CLOCK_MONOTONIC_RAW);
  EXPECT_EQ(parse_clockid("Boot"), CLOCK_BOOTTIME);
  EXPECT_EQ(parse_clockid("tai"), CLOCK_TAI);
  EXPECT_EQ(parse_clockid("real"), CLOCK_REALTIME);
  for (const char* bad : {"", "monotone", "CLOCK_", "-1", "99999999999", "1x"}) EXPECT_FALSE(parse_clockid(bad).has_value()) << bad;
  RecordAttrOptions o;
  o.clockid = CLOCK_MONOTONIC;
  perf_event_attr a = build_record_attr(software(PERF_COUNT_SW_CPU_CLOCK), o);
  EXPECT_EQ(a.use_clockid, 1u);
  EXPECT_EQ(a.clockid, CLOCK_MONOTONIC);
}

TEST(RecordAttr, DwarfCallGraphCopiesRegistersAndStack) {
  RecordAttrOptions o;
  o.call_graph = CallGraph::Dwarf;
  o.tracking = true;
  o.dwarf_stack_size = 4096;
  o.period = 10007;
  perf_event_attr a = build_record_attr(software(PERF_COUNT_SW_CPU_CLOCK), o);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_REGS_USER);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_STACK_USER);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_CALLCHAIN);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_ADDR);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_DATA_SRC);
  EXPECT_EQ(a.mmap_data, 1u);
  EXPECT_EQ(a.sample_regs_user, 0xff0fffu);
  EXPECT_EQ(a.sample_stack_user, 4096u);
  EXPECT_EQ(a.exclude_callchain_user, 1u);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 10007u);
}

TEST(RecordAttr, SampleIdTrailerCountsTheIdFields) {
  EXPECT_EQ(sample_id_trailer_size(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD), 16u);
  EXPECT_EQ(sample_id_trailer_size(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER), 32u);
  EXPECT_EQ(sample_id_trailer_size(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN), 0u);
}

// vperf kvm record --qmp's vcpu-clock attrs, byte for byte as the recorder filled them by hand
// before it used the builder (perf.data files it wrote keep reading the same).
TEST(RecordAttr, SyntheticGuestSampleAttrIsTheMonitorRecordersOne) {
  const uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                        PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_IDENTIFIER;
  for (bool tracking : {true, false}) {
    perf_event_attr expected;
    std::memset(&expected, 0, sizeof expected);
    expected.size = sizeof expected;
    expected.type = PERF_TYPE_SOFTWARE;
    expected.config = PERF_COUNT_SW_CPU_CLOCK;
    expected.sample_period = 1000000;
    expected.sample_type = type;
    expected.exclude_host = 1;
    expected.sample_id_all = 1;
    expected.comm = expected.mmap = expected.task = tracking;
    perf_event_attr a = build_synthetic_sample_attr(software(PERF_COUNT_SW_CPU_CLOCK),
                                                    {1000000, type, MachineScope{false, true}, tracking});
    EXPECT_EQ(std::memcmp(&a, &expected, sizeof a), 0) << "tracking " << tracking;
  }
}

}  // namespace
}  // namespace vperf::events
