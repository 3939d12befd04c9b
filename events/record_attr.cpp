#include "events/record_attr.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "core/strings.h"
#include "events/attr_builder.h"

namespace vperf::events {

perf_event_attr build_record_attr(const ResolvedEvent& event, const RecordAttrOptions& options) {
  SampleSettings settings;
  const EventSettings& own = event.settings;  // the event's terms override the options
  const bool tracepoint = event.type == PERF_TYPE_TRACEPOINT;
  uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  if (tracepoint) {
    settings.sample_period = 1;  // every hit, as perf does whatever -F says
  } else if (event.type == PERF_TYPE_BREAKPOINT && !own.rate && !options.period && !options.frequency) {
    // Every hit, as perf's parser sets a breakpoint's period; -c or -F given override it. A
    // fixed period is not sampled.
    settings.sample_period = 1;
    type &= ~uint64_t{PERF_SAMPLE_PERIOD};
  } else if (own.rate) {
    (own.rate->frequency ? settings.sample_frequency : settings.sample_period) = own.rate->value;
    if (!own.rate->frequency) type &= ~uint64_t{PERF_SAMPLE_PERIOD};  // perf's period= term: a fixed period is not sampled
  } else if (options.period) {
    settings.sample_period = *options.period;
  } else {
    settings.sample_frequency = options.frequency.value_or(4000);
  }
  if (own.time == false) type &= ~uint64_t{PERF_SAMPLE_TIME};
  // max-stack= alone asks for chains: frame-pointer ones unless the options say dwarf.
  CallGraph call_graph = own.call_graph.value_or(options.call_graph);
  if (!own.call_graph && own.max_stack && call_graph == CallGraph::None) call_graph = CallGraph::FramePointer;
  if (options.system_wide || options.sample_cpu || tracepoint) type |= PERF_SAMPLE_CPU;
  if (tracepoint) type |= PERF_SAMPLE_RAW;
  if (options.several_events) type |= PERF_SAMPLE_IDENTIFIER;
  if (call_graph != CallGraph::None) type |= PERF_SAMPLE_CALLCHAIN;
  // perf's dwarf mode also samples data addresses, which turns on data mmaps: its libunwind
  // finds each file's .eh_frame_hdr through the read-only mappings, so a file without them
  // cannot be unwound by perf script.
  if (call_graph == CallGraph::Dwarf)
    type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
  const bool frame_pointer_registers = call_graph == CallGraph::FramePointer && kFramePointerUserRegisters != 0;
  if (frame_pointer_registers) type |= PERF_SAMPLE_REGS_USER;
  settings.sample_type = type;
  settings.start_disabled = true;
  settings.enable_on_exec = options.enable_on_exec;
  settings.inherit = own.inherit.value_or(options.inherit);
  settings.scope = options.scope;

  perf_event_attr attr = build_attr(event, settings);
  attr.read_format = PERF_FORMAT_ID;
  if (options.inherit_stat) {
    attr.inherit_stat = 1;
    attr.read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  }
  apply_all_user_or_kernel(attr, options.all_user, options.all_kernel);
  attr.write_backward = options.overwrite ? 1 : 0;
  if (options.clockid) {
    attr.use_clockid = 1;
    attr.clockid = *options.clockid;
  }
  attr.sample_id_all = 1;
  if (options.tracking) {
    attr.mmap = 1;
    attr.mmap2 = 1;
    attr.comm = 1;
    attr.comm_exec = 1;
    attr.task = 1;
  }
  if (frame_pointer_registers) attr.sample_regs_user = kFramePointerUserRegisters;
  if (call_graph == CallGraph::Dwarf) {
    attr.sample_regs_user = kDwarfUserRegisters;
    attr.sample_stack_user = own.stack_size.value_or(options.dwarf_stack_size);
    attr.exclude_callchain_user = 1;
    if (options.tracking) attr.mmap_data = 1;
  }
  if (own.max_stack) attr.sample_max_stack = *own.max_stack;
  return attr;
}

perf_event_attr build_synthetic_sample_attr(const ResolvedEvent& event, const SyntheticSampleOptions& options) {
  SampleSettings settings;
  settings.sample_period = options.period;
  settings.sample_type = options.sample_type;
  settings.start_disabled = false;
  settings.inherit = false;
  settings.scope = options.scope;
  perf_event_attr attr = build_attr(event, settings);
  attr.read_format = 0;  // nothing is read: there is no counter
  attr.sample_id_all = 1;
  if (options.tracking) {
    attr.comm = 1;
    attr.mmap = 1;
    attr.task = 1;
  }
  return attr;
}

size_t sample_id_trailer_size(uint64_t sample_type) {
  size_t size = 0;
  for (uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
                       PERF_SAMPLE_IDENTIFIER})
    if (sample_type & bit) size += 8;
  return size;
}

std::vector<ResolvedEvent> without_hardware_cycles(const std::vector<ResolvedEvent>& sampled) {
  std::vector<ResolvedEvent> fallback = sampled;
  bool any = false;
  for (ResolvedEvent& e : fallback) {
    if (e.type != PERF_TYPE_HARDWARE || e.config != PERF_COUNT_HW_CPU_CYCLES) continue;
    any = true;
    const size_t modifiers = e.written.find(':');
    e.name = "cpu-clock";
    std::string kept = modifiers == std::string::npos ? std::string() : e.written.substr(modifiers);
    std::erase(kept, 'p');  // a software clock has no skid to remove
    e.written = "cpu-clock" + (kept == ":" ? std::string() : kept);
    e.pmu = "software";
    e.type = PERF_TYPE_SOFTWARE;
    e.config = PERF_COUNT_SW_CPU_CLOCK;
    e.modifiers.precise = 0;
  }
  return any ? fallback : std::vector<ResolvedEvent>{};
}


std::optional<int> parse_clockid(std::string_view text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::optional<uint64_t> number = parse_u64(text);
    if (!number || *number > INT32_MAX) return std::nullopt;
    return static_cast<int>(*number);
  }
  if (starts_with_nocase(text, "CLOCK_")) text.remove_prefix(6);
  static constexpr std::pair<std::string_view, int> kClocks[] = {
      {"monotonic", CLOCK_MONOTONIC}, {"monotonic_raw", CLOCK_MONOTONIC_RAW}, {"realtime", CLOCK_REALTIME},
      {"boottime", CLOCK_BOOTTIME},   {"tai", CLOCK_TAI},                     {"mono", CLOCK_MONOTONIC},
      {"raw", CLOCK_MONOTONIC_RAW},   {"real", CLOCK_REALTIME},               {"boot", CLOCK_BOOTTIME}};
  for (const auto& [name, id] : kClocks)
    if (equals_nocase(text, name)) return id;
  return std::nullopt;
}

}  // namespace vperf::events
