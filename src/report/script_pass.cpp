#include "report/script_pass.h"

#include <linux/perf_event.h>

#include <algorithm>

#include "report/event_names.h"
#include "report/raw_dump.h"
#include "report/sample_replay.h"
#include "report/script_line.h"
#include "report/trace_symbols.h"
#include "tracing/recorded_tracing_data.h"

namespace vperf::report {

namespace {

constexpr size_t kOutputBlock = 1 << 18;

}  // namespace

struct ScriptPass::State {
  State(ScriptPassOptions o, Warn w) : options(std::move(o)), warn(std::move(w)), tracing(warn) {}

  // The events' names and the widest, computed at the first sample as perf does (in pipe mode
  // the tracepoints are only named once the tracing data has arrived).
  const std::string& event_name_of(const data::PerfDataReader& reader, size_t index) {
    const std::vector<data::EventAttrEntry>& attrs = reader.attrs();
    if (names.size() != attrs.size()) {
      names.clear();
      int width = 0;
      for (const data::EventAttrEntry& e : attrs) {
        names.push_back(event_name(e, tracing.decoder()));
        width = std::max(width, static_cast<int>(names.back().size()));
      }
      line_options.event_name_width = width;
    }
    return index < names.size() ? names[index] : unknown;
  }

  void print(const data::PerfDataReader& reader, const ResolvedSample& sample) {
    const data::EventAttrEntry* entry = sample.view.attr;
    if (!entry) return;
    ScriptFieldSet fields = layout.fields_for(entry->attr.type);
    if (fields == 0) return;
    const std::string& name = event_name_of(reader, sample.event);
    const tracing::TracepointDecoder* decoder = tracing.decoder();
    if (entry->attr.type == PERF_TYPE_TRACEPOINT && (fields & kFieldTrace) && (!decoder || !decoder->has_event(entry->attr.config)))
      ++tracepoints_without_formats;
    append_script_sample(buffer, sample, fields, name, line_options, decoder, &frame_lines);
  }

  void flush(std::ostream& out) {
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    buffer.clear();
  }

  ScriptPassOptions options;
  Warn warn;
  tracing::RecordedTracingData tracing;
  ScriptFieldLayout layout;
  ScriptLineOptions line_options;
  std::vector<std::string> names;
  std::string unknown = "[unknown]";
  std::string buffer;
  ScriptFrameLines frame_lines;
  uint64_t tracepoints_without_formats = 0;
};

ScriptPass::ScriptPass(std::unique_ptr<State> state) : state_(std::move(state)) {}
ScriptPass::ScriptPass(ScriptPass&&) noexcept = default;
ScriptPass& ScriptPass::operator=(ScriptPass&&) noexcept = default;
ScriptPass::~ScriptPass() = default;

Result<ScriptPass> ScriptPass::prepare(const data::PerfDataReader& reader, ScriptPassOptions options, Warn warn) {
  auto state = std::make_unique<State>(std::move(options), std::move(warn));
  state->tracing.load_file(reader);
  std::vector<ScriptEvent> events;
  for (const data::EventAttrEntry& entry : reader.attrs()) events.push_back({&entry.attr, entry.name});
  Result<ScriptFieldLayout> layout =
      state->options.fields.resolve(events, {.pipe = reader.is_pipe(), .hide_callchain = state->options.hide_callchain});
  if (!layout) {
    Error e = layout.error();
    e.hint = "choose other fields with -F, or record the event with what they need";
    return e;
  }
  state->layout = *layout;
  state->line_options.use_callchain = state->layout.use_callchain;
  state->line_options.max_stack = state->options.max_stack;
  return ScriptPass(std::move(state));
}

Result<ScriptPassResult> ScriptPass::run(data::PerfDataReader& reader, symbols::Machines& machines,
                                         unwind::UserStackUnwinder* unwinder, std::ostream& out) {
  State& s = *state_;
  s.line_options.user_stacks_unwound = unwinder != nullptr;
  bool any_ip = false;
  for (ScriptFieldSet fields : s.layout.fields) any_ip = any_ip || (fields & kFieldIp);
  SampleReplay replay(machines, ReplayOptions{.ordered = true,
                                              .resolve_chain = any_ip && s.layout.use_callchain,
                                              .unwinder = unwinder,
                                              .inline_frames = s.options.inline_frames,
                                              .forget_samples = true});
  std::optional<RawDump> dump;
  if (s.options.dump_input) dump.emplace(reader, *s.options.dump_input, RawDumpCommand::Script);
  replay.set_record_observer([&](const data::RecordView& view) {
    if (s.tracing.load_record(view.record)) s.names.clear();  // tracepoint names may come from it
    if (dump) dump->append_record(view, s.buffer);
  });
  s.tracing.set_kernel_symbol_resolver(host_kernel_symbols(machines.host()));

  s.buffer.reserve(kOutputBlock + 4096);
  Result<data::ReadStats> stats = replay.run(reader, [&](const ResolvedSample& sample) {
    if (dump) dump->append_sample_location(sample, s.buffer);
    s.print(reader, sample);
    if (s.buffer.size() >= kOutputBlock) s.flush(out);
    return true;
  });
  s.flush(out);
  out.flush();
  if (!stats) return stats.error();

  ScriptPassResult result;
  result.stats = *stats;
  if (const tracing::TracepointDecoder* decoder = s.tracing.decoder()) {
    for (const std::string& warning : decoder->warnings()) result.closing_warnings.push_back(warning);
    if (std::optional<std::string> warning = decoder->printed_from_fields_warning()) {
      result.closing_warnings.push_back(*warning);
      result.printed_from_fields = true;
    }
  }
  if (s.tracepoints_without_formats)
    result.closing_warnings.push_back(std::to_string(s.tracepoints_without_formats) +
                                      " tracepoint samples printed without their fields: the file has no usable tracing data");
  if (std::optional<std::string> note = replay.scope_note()) result.closing_warnings.push_back(*note);
  return result;
}

}  // namespace vperf::report
