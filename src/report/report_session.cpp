#include "report/report_session.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <variant>

#include "data/perf_data_format.h"
#include "report/event_names.h"
#include "report/restricted_kernel_maps.h"
#include "report/trace_symbols.h"
#include "tracing/recorded_tracing_data.h"

namespace vperf::report {

const EventHists* ReportData::event_hists(size_t event) const {
  if (!hists || event >= hists->events().size()) return nullptr;
  return &hists->events()[event];
}

ReportLayout resolve_layout(const ReportOptions& options, const std::vector<perf_event_attr>& attrs, bool pipe) {
  bool callchains = false;
  bool all_tracepoints = !attrs.empty();
  for (const perf_event_attr& attr : attrs) {
    callchains |= (attr.sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
    all_tracepoints &= attr.type == PERF_TYPE_TRACEPOINT;
  }
  ReportLayout layout;
  // perf picks "trace" before it has read a pipe's events: never for a pipe.
  bool by_trace = all_tracepoints && !pipe;
  layout.sort_keys = options.sort_keys.value_or(by_trace ? std::vector<SortKey>{SortKey::Trace} : default_sort_keys());
  if (!options.fields.empty()) {
    // perf -F: entries are grouped by the keys of -s (none without it) and -F together.
    layout.sort_keys = options.sort_keys.value_or(std::vector<SortKey>{});
    for (SortKey key : layout.sort_keys) layout.order_by.push_back({FieldKind::Key, key});
    layout.columns = options.fields;
    for (const OutputField& field : options.fields) {
      if (std::find(layout.order_by.begin(), layout.order_by.end(), field) != layout.order_by.end()) continue;
      layout.order_by.push_back(field);
      if (field.kind == FieldKind::Key) layout.sort_keys.push_back(field.key);
    }
    for (const OutputField& field : layout.order_by)
      if (std::find(layout.columns.begin(), layout.columns.end(), field) == layout.columns.end()) layout.columns.push_back(field);
  }
  // perf report: --children is the default, silently off without callchains.
  bool children_wanted = options.children.value_or(true);
  // --hierarchy has no Children, but its graphs keep the order the children default gives.
  layout.children = callchains && children_wanted && !pipe && !options.hierarchy;
  layout.call_graph = callchains && options.call_graph.mode != CallGraphMode::None;
  layout.order = options.call_graph.order.value_or(children_wanted && (pipe || callchains) ? CallGraphOrder::Caller
                                                                                           : CallGraphOrder::Callee);
  return layout;
}

namespace {

// Tracepoint samples' "Trace output", from the file's tracing data (a feature section, or a
// record in a pipe), with the print fmts' kernel addresses resolved through the host machine.
class TraceText {
 public:
  TraceText(symbols::Machines& machines, std::vector<std::string>& warnings)
      : tracing_([&warnings](const std::string& warning) { warnings.push_back(warning); }) {
    tracing_.set_kernel_symbol_resolver(host_kernel_symbols(machines.host()));
  }

  tracing::RecordedTracingData& tracing() { return tracing_; }

  uint32_t intern(const ResolvedSample& sample, Interner& traces) {
    const tracing::TracepointDecoder* decoder = tracing_.decoder();
    const data::EventAttrEntry* attr = sample.view.attr;
    if (!decoder || !attr || attr->attr.type != PERF_TYPE_TRACEPOINT) return 0;
    buffer_.clear();
    decoder->format(attr->attr.config, sample.sample.raw, sample.cpu, buffer_);
    return traces.intern(buffer_);
  }

 private:
  tracing::RecordedTracingData tracing_;
  std::string buffer_;
};

}  // namespace

void TaskCounts::add(uint32_t pid, uint32_t tid, size_t event, uint64_t value) {
  auto column = std::find(events.begin(), events.end(), event);
  if (column == events.end()) {
    events.push_back(event);
    for (Row& row : rows) row.values.push_back(0);
    column = events.end() - 1;
  }
  auto row = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.pid == pid && r.tid == tid; });
  if (row == rows.end()) {
    rows.push_back(Row{pid, tid, std::vector<uint64_t>(events.size(), 0)});
    row = rows.end() - 1;
  }
  row->values[static_cast<size_t>(column - events.begin())] += value;
}

Result<ReportData> build_report(data::PerfDataReader& reader, symbols::Machines& machines, const ReportOptions& options,
                                unwind::UserStackUnwinder* unwinder) {
  ReportData report;
  std::vector<perf_event_attr> attrs;
  bool user_stacks = false;
  for (const data::EventGroupDesc& group : reader.features().groups)
    if (group.spans_events(reader.attrs().size())) report.groups.push_back(group);
  for (const data::EventAttrEntry& attr : reader.attrs()) {
    report.events.push_back(ReportEvent{attr.name, attr.attr.sample_type});
    attrs.push_back(attr.attr);
    user_stacks |= (attr.attr.sample_type & (PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER)) != 0;
  }
  // The unwinder matters only for recordings with user registers: --call-graph dwarf's, and the
  // link register of arm64's -g (a leaf function's caller).
  if (!user_stacks) unwinder = nullptr;
  report.layout = resolve_layout(options, attrs, reader.is_pipe());
  HistSettings settings;
  settings.sort_keys = report.layout.sort_keys;
  settings.children = report.layout.children;
  settings.callchains = report.layout.call_graph;
  settings.order = report.layout.order;
  settings.filters = options.filters;
  report.profile = std::make_unique<Profile>();
  report.hists = std::make_unique<HistBuilder>(std::move(settings), *report.profile);

  bool by_trace = false;
  for (SortKey key : report.layout.sort_keys) by_trace |= key == SortKey::Trace;
  std::vector<std::string> trace_warnings;
  TraceText trace_text(machines, trace_warnings);
  if (by_trace) trace_text.tracing().load_file(reader);

  // Chains are needed for the Children column as well as for the graphs.
  bool chains = report.layout.children || report.layout.call_graph;
  SampleReplay replay(machines, *report.profile,
                      ReplayOptions{.ordered = true,
                                    .resolve_chain = chains,
                                    .unwinder = unwinder,
                                    .inline_frames = options.inline_frames,
                                    .out_of_scope_samples = true});
  RestrictedKernelMaps kernel_maps;
  replay.set_record_observer([&](const data::RecordView& view) {
    kernel_maps.observe(view.record);
    if (const auto* lost = std::get_if<data::LostSamplesRecord>(&view.record.body)) report.lost_samples += lost->lost;
    else if (const auto* dropped = std::get_if<data::LostRecord>(&view.record.body)) report.lost_events += dropped->lost;
    else if (const auto* read = std::get_if<data::ReadRecord>(&view.record.body))
      report.task_counts.add(read->pid, read->tid, view.attr_index == data::kNoAttrIndex ? 0 : view.attr_index, read->value());
    else if (by_trace)
      trace_text.tracing().load_record(view.record);
  });
  replay.set_comm_named_observer(
      [&](std::string_view unnamed, std::string_view comm) { report.hists->rename_unnamed_comm(unnamed, comm); });
  PerfDataSource source(reader);
  Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& sample) {
    // A sample without an event (an input without attrs) counts as the first event's, as perf.
    size_t event = sample.event == data::kNoAttrIndex ? 0 : sample.event;
    uint32_t trace = by_trace ? trace_text.intern(sample, report.hists->traces()) : 0;
    if (!chains) {
      report.hists->add(event, sample, trace);
      return true;
    }
    // Chains as perf's callchain cursor holds them (a chain the kernel ended with an unknown
    // marker is discarded, as perf report discards it).
    ResolvedSample as_cursor = sample;
    as_cursor.stack = replay.cursor_stack(sample, options.max_stack, report.layout.order == CallGraphOrder::Caller);
    report.hists->add(event, as_cursor, trace);
    return true;
  });
  if (!stats) return stats.error();
  report.hists->finish();
  report.stats = *stats;
  report.warnings = reader.warnings();
  if (std::optional<std::string> restricted = kernel_maps.warning(reader.attrs())) report.warnings.push_back(*restricted);
  report.warnings.insert(report.warnings.end(), trace_warnings.begin(), trace_warnings.end());
  if (std::optional<std::string> note = replay.scope_note()) report.warnings.push_back(*note);
  if (const tracing::TracepointDecoder* decoder = trace_text.tracing().decoder()) {
    report.traces_printed_from_fields = decoder->printed_from_fields();
    if (std::optional<std::string> warning = decoder->printed_from_fields_warning()) report.warnings.push_back(*warning);
  }
  // Pipe mode learns attrs, and their names, while reading.
  for (size_t i = report.events.size(); i < reader.attrs().size(); ++i)
    report.events.push_back(ReportEvent{reader.attrs()[i].name, reader.attrs()[i].attr.sample_type});
  for (size_t i = 0; i < report.events.size(); ++i) {
    if (report.events[i].name.empty() && i < reader.attrs().size())
      report.events[i].name = event_name(reader.attrs()[i], trace_text.tracing().decoder());
  }
  return report;
}

}  // namespace vperf::report
