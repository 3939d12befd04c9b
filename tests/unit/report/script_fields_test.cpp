// perf script's -F model. Expected sets and messages follow perf 6.1's behaviour as observed on
// real files (see the comments by each case); whole-output agreement is checked in
// tests/integration/script_test.cpp.
#include "report/script_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vperf::report {
namespace {

perf_event_attr attr_of(uint32_t type, uint64_t config, uint64_t sample_type) {
  perf_event_attr attr{};
  attr.type = type;
  attr.config = config;
  attr.sample_type = sample_type;
  return attr;
}

constexpr uint64_t kTaskSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
constexpr uint64_t kSystemWideTracepoint =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;

const perf_event_attr kCpuClock = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, kTaskSampleType);
const perf_event_attr kCpuClockG = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, kTaskSampleType | PERF_SAMPLE_CALLCHAIN);
const perf_event_attr kSchedSwitch = attr_of(PERF_TYPE_TRACEPOINT, 372, kSystemWideTracepoint);
const perf_event_attr kSchedSwitchG = attr_of(PERF_TYPE_TRACEPOINT, 372, kSystemWideTracepoint | PERF_SAMPLE_CALLCHAIN);

ScriptFieldLayout resolve_ok(const ScriptFieldSelection& selection, const std::vector<ScriptEvent>& events,
                             ScriptResolveOptions options = {}) {
  Result<ScriptFieldLayout> layout = selection.resolve(events, options);
  EXPECT_TRUE(layout.ok()) << (layout.ok() ? "" : layout.error().describe());
  return layout.ok() ? *layout : ScriptFieldLayout{};
}

ScriptFieldSelection selection_of(const std::vector<std::string>& arguments) {
  ScriptFieldSelection selection;
  for (const std::string& argument : arguments) {
    Result<std::vector<std::string>> applied = selection.apply(argument);
    EXPECT_TRUE(applied.ok()) << argument << ": " << (applied.ok() ? "" : applied.error().describe());
  }
  return selection;
}

TEST(ScriptFields, DefaultsDropWhatTheSamplesDoNotCarry) {
  // perf record -e cpu-clock -- CMD: no PERF_SAMPLE_CPU, so perf script shows no [cpu] column.
  ScriptFieldLayout layout = resolve_ok(ScriptFieldSelection(), {{&kCpuClock, "cpu-clock"}});
  EXPECT_EQ(layout.fields_for(PERF_TYPE_SOFTWARE), kFieldComm | kFieldTid | kFieldTime | kFieldEvent | kFieldIp | kFieldSym |
                                                       kFieldSymOff | kFieldDso | kFieldPeriod);
  EXPECT_FALSE(layout.use_callchain) << "no event has a callchain";

  perf_event_attr with_cpu = kCpuClock;
  with_cpu.sample_type |= PERF_SAMPLE_CPU;
  layout = resolve_ok(ScriptFieldSelection(), {{&with_cpu, "cpu-clock"}});
  EXPECT_TRUE(layout.fields_for(PERF_TYPE_SOFTWARE) & kFieldCpu);
}

TEST(ScriptFields, TracepointDefaultsAndTheirCallchainFields) {
  ScriptFieldLayout plain = resolve_ok(ScriptFieldSelection(), {{&kSchedSwitch, "sched:sched_switch"}});
  EXPECT_EQ(plain.fields_for(PERF_TYPE_TRACEPOINT), kFieldComm | kFieldTid | kFieldCpu | kFieldTime | kFieldEvent | kFieldTrace);

  // With -g, perf script (file mode) adds ip,sym,symoff,dso: "\tffffffff821f5618 __schedule+0x618 ([kernel.kallsyms])".
  ScriptFieldLayout file = resolve_ok(ScriptFieldSelection(), {{&kSchedSwitchG, "sched:sched_switch"}});
  EXPECT_EQ(file.fields_for(PERF_TYPE_TRACEPOINT), plain.fields_for(PERF_TYPE_TRACEPOINT) | kFieldIp | kFieldSym |
                                                        kFieldSymOff | kFieldDso);
  EXPECT_TRUE(file.use_callchain);

  // In pipe mode perf adds only ip,sym: "\tffffffff821f5618 __schedule".
  ScriptFieldLayout pipe = resolve_ok(ScriptFieldSelection(), {{&kSchedSwitchG, "sched:sched_switch"}}, {.pipe = true});
  EXPECT_EQ(pipe.fields_for(PERF_TYPE_TRACEPOINT), plain.fields_for(PERF_TYPE_TRACEPOINT) | kFieldIp | kFieldSym);

  // -G: no callchains, no added fields.
  ScriptFieldLayout hidden = resolve_ok(ScriptFieldSelection(), {{&kSchedSwitchG, "sched:sched_switch"}}, {.hide_callchain = true});
  EXPECT_EQ(hidden.fields_for(PERF_TYPE_TRACEPOINT), plain.fields_for(PERF_TYPE_TRACEPOINT));
  EXPECT_FALSE(hidden.use_callchain);

  // A user's trace: selection is left alone.
  ScriptFieldLayout chosen = resolve_ok(selection_of({"trace:comm,trace"}), {{&kSchedSwitchG, "sched:sched_switch"}});
  EXPECT_EQ(chosen.fields_for(PERF_TYPE_TRACEPOINT), kFieldComm | kFieldTrace);
}

TEST(ScriptFields, PlainListReplacesEveryTypesFields) {
  ScriptFieldSelection selection = selection_of({"comm,pid,tid,time,event,ip,sym,symoff,dso,period"});
  ScriptFieldLayout layout = resolve_ok(selection, {{&kCpuClock, "cpu-clock"}});
  EXPECT_EQ(layout.fields_for(PERF_TYPE_SOFTWARE), kFieldComm | kFieldPid | kFieldTid | kFieldTime | kFieldEvent | kFieldIp |
                                                       kFieldSym | kFieldSymOff | kFieldDso | kFieldPeriod);
  EXPECT_EQ(layout.fields_for(PERF_TYPE_HARDWARE), layout.fields_for(PERF_TYPE_SOFTWARE));
}

TEST(ScriptFields, PlusAndMinusChangeTheDefaults) {
  ScriptFieldLayout added = resolve_ok(selection_of({"+pid"}), {{&kCpuClock, "cpu-clock"}});
  EXPECT_TRUE(added.fields_for(PERF_TYPE_SOFTWARE) & kFieldPid);
  EXPECT_TRUE(added.fields_for(PERF_TYPE_SOFTWARE) & kFieldTid);
  ScriptFieldLayout removed = resolve_ok(selection_of({"-period,-dso"}), {{&kCpuClock, "cpu-clock"}});
  EXPECT_EQ(removed.fields_for(PERF_TYPE_SOFTWARE), kFieldComm | kFieldTid | kFieldTime | kFieldEvent | kFieldIp | kFieldSym | kFieldSymOff);
  ScriptFieldLayout both = resolve_ok(selection_of({"+period,-period"}), {{&kCpuClock, "cpu-clock"}});
  EXPECT_FALSE(both.fields_for(PERF_TYPE_SOFTWARE) & kFieldPeriod);
}

TEST(ScriptFields, TypePrefixChangesOneType) {
  ScriptFieldLayout layout =
      resolve_ok(selection_of({"sw:comm,tid"}), {{&kCpuClock, "cpu-clock"}, {&kSchedSwitch, "sched:sched_switch"}});
  EXPECT_EQ(layout.fields_for(PERF_TYPE_SOFTWARE), kFieldComm | kFieldTid);
  EXPECT_EQ(layout.fields_for(PERF_TYPE_TRACEPOINT), kFieldComm | kFieldTid | kFieldCpu | kFieldTime | kFieldEvent | kFieldTrace);
  // perf 6.1: "trace:+ip" keeps the defaults and adds ip.
  ScriptFieldLayout plus = resolve_ok(selection_of({"trace:+ip"}), {{&kSchedSwitch, "sched:sched_switch"}});
  EXPECT_EQ(plus.fields_for(PERF_TYPE_TRACEPOINT), kFieldComm | kFieldTid | kFieldCpu | kFieldTime | kFieldEvent | kFieldTrace | kFieldIp);
}

TEST(ScriptFields, TraceIsIgnoredWhereItCannotApplyWithPerfsWarnings) {
  ScriptFieldSelection selection;
  Result<std::vector<std::string>> warnings = selection.apply("trace");
  ASSERT_TRUE(warnings.ok());
  // perf script -F trace on a 6.1 perf, stderr:
  EXPECT_EQ(*warnings, (std::vector<std::string>{"'trace' not valid for hardware events. Ignoring.",
                                                 "'trace' not valid for software events. Ignoring.",
                                                 "'trace' not valid for hardware-cache events. Ignoring.",
                                                 "'trace' not valid for unknown events. Ignoring.",
                                                 "'trace' not valid for unknown events. Ignoring.",
                                                 "'trace' not valid for unknown events. Ignoring.",
                                                 "'trace' not valid for unknown events. Ignoring."}));
  ScriptFieldLayout layout = resolve_ok(selection, {{&kCpuClock, "cpu-clock"}});
  EXPECT_EQ(layout.fields_for(PERF_TYPE_SOFTWARE), 0u) << "nothing left to print for cpu-clock";
  EXPECT_FALSE(ScriptFieldSelection().apply("sw:trace").ok());
}

TEST(ScriptFields, BadArgumentsAreErrors) {
  Result<std::vector<std::string>> unknown = ScriptFieldSelection().apply("comm,foo");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown field 'foo'");
  Result<std::vector<std::string>> unsupported = ScriptFieldSelection().apply("iregs");
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().message, "field 'iregs' is not supported by vperf script");
  EXPECT_FALSE(ScriptFieldSelection().apply("comm,+pid").ok()) << "perf: Cannot mix +-field with overridden fields";
  EXPECT_FALSE(ScriptFieldSelection().apply("+pid,comm").ok());
  EXPECT_FALSE(ScriptFieldSelection().apply("bogus:comm").ok());
  EXPECT_FALSE(ScriptFieldSelection().apply("").ok());
}

TEST(ScriptFields, FieldsTheFileCannotFillAreErrorsWhenAskedFor) {
  // perf: "Samples for 'cpu-clock' event do not have CPU attribute set. Cannot print 'cpu' field."
  Result<ScriptFieldLayout> cpu = selection_of({"comm,tid,cpu"}).resolve({{&kCpuClock, "cpu-clock"}}, {});
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.error().message.find("CPU"), std::string::npos);
  EXPECT_NE(cpu.error().message.find("'cpu-clock'"), std::string::npos);
  // perf: "Display of offsets requested but symbol is notselected."
  EXPECT_FALSE(selection_of({"ip,symoff"}).resolve({{&kCpuClock, "cpu-clock"}}, {}).ok());
  perf_event_attr no_ip = kCpuClock;
  no_ip.sample_type &= ~PERF_SAMPLE_IP;
  EXPECT_FALSE(selection_of({"ip"}).resolve({{&no_ip, "cpu-clock"}}, {}).ok());
  EXPECT_FALSE(selection_of({"sym"}).resolve({{&no_ip, "cpu-clock"}}, {}).ok());
  // Through a type prefix perf does not check: the field is dropped.
  ScriptFieldLayout typed = resolve_ok(selection_of({"sw:comm,cpu"}), {{&kCpuClock, "cpu-clock"}});
  EXPECT_EQ(typed.fields_for(PERF_TYPE_SOFTWARE), kFieldComm);
}

TEST(ScriptFields, TypesAndNames) {
  EXPECT_EQ(script_event_type(PERF_TYPE_SOFTWARE), ScriptEventType::Software);
  EXPECT_EQ(script_event_type(PERF_TYPE_TRACEPOINT), ScriptEventType::Tracepoint);
  EXPECT_EQ(script_event_type(11), ScriptEventType::Other) << "a dynamic PMU";
  EXPECT_EQ(script_event_type_name(ScriptEventType::HardwareCache), "hardware-cache");
  EXPECT_EQ(script_event_type_name(ScriptEventType::Raw), "unknown");
  EXPECT_EQ(script_field_names(), "comm,tid,pid,time,cpu,event,trace,ip,sym,dso,symoff,srcline,period");
}

}  // namespace
}  // namespace vperf::report
