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
    if (!options.symbols.empty() &&
        (!sample.at.symbol || std::find(options.symbols.begin(), options.symbols.end(), sample.at.symbol_name()) == options.symbols.end()))
      return;
    ScriptFieldSet fields = layout.fields_for(entry->attr.type);
    if (fields == 0) return;
    const std::string& name = event_name_of(reader, sample.event);
    const tracing::TracepointDecoder* decoder = tracing.decoder();
    if (entry->attr.type == PERF_TYPE_TRACEPOINT && (fields & kFieldTrace) && (!decoder || !decoder->has_event(entry->attr.config)))
      ++tracepoints_without_formats;
    append_script_sample(buffer, sample, fields, name, line_options, decoder, &frame_lines);
  }

  // A COMM, FORK, EXIT, MMAP or MMAP2 record as perf script --show-task-events and
  // --show-mmap-events print it: the line's start for the thread it names (as perf has it after
  // the record: a COMM's new name, a forked child's parent's), then perf_event__fprintf's text.
  // Called before the replay takes the record in.
  void print_side_band(const data::PerfDataReader& reader, const symbols::Machines& machines, const data::RecordView& view) {
    const data::Record& record = view.record;
    const bool task = record.type == PERF_RECORD_COMM || record.type == PERF_RECORD_FORK || record.type == PERF_RECORD_EXIT;
    const bool map = record.type == PERF_RECORD_MMAP || record.type == PERF_RECORD_MMAP2;
    if (!(task && options.show_task_events) && !(map && options.show_mmap_events)) return;
    const data::EventAttrEntry* entry = view.attr ? view.attr : (reader.attrs().empty() ? nullptr : &reader.attrs().front());
    if (!entry) return;
    // The task the record is about, and whose name the line starts with.
    uint32_t pid = 0, tid = 0;
    std::string comm;
    if (const auto* c = std::get_if<data::CommRecord>(&record.body)) {
      pid = c->pid, tid = c->tid, comm = c->comm;
    } else if (const auto* t = std::get_if<data::TaskRecord>(&record.body)) {
      pid = t->pid, tid = t->tid;
      comm = thread_comm(machines, record.type == PERF_RECORD_FORK ? t->ptid : t->tid, t->tid);
    } else if (const auto* m = std::get_if<data::MmapRecord>(&record.body)) {
      pid = m->pid, tid = m->tid, comm = thread_comm(machines, m->tid, m->tid);
    } else if (const auto* m2 = std::get_if<data::Mmap2Record>(&record.body)) {
      pid = m2->pid, tid = m2->tid, comm = thread_comm(machines, m2->tid, m2->tid);
    } else {
      return;  // a record whose bytes did not parse as its type's
    }
    const ScriptFieldSet fields = layout.fields_for(entry->attr.type);
    if (fields == 0) return;
    // Without sample_id_all perf takes the task from the record, at cpu 0 and time 0.
    LineStart start{comm, static_cast<pid_t>(pid), static_cast<pid_t>(tid), 0, 0,
                    (entry->attr.sample_type & PERF_SAMPLE_TIME) != 0};
    if (record.has_sample_id) {
      start.pid = static_cast<pid_t>(record.sample_id.pid);
      start.tid = static_cast<pid_t>(record.sample_id.tid);
      start.cpu = record.sample_id.cpu;
      start.time = record.sample_id.time;
    }
    const bool with_callchain = (fields & kFieldIp) && (entry->attr.sample_type & PERF_SAMPLE_CALLCHAIN) && layout.use_callchain;
    const size_t at = buffer.size();
    append_line_start(buffer, start, fields, with_callchain, options.nanoseconds);
    if (!append_task_or_map_event(record, buffer)) buffer.resize(at);
  }

  // A thread's name as perf has it: ":TID" for one no record named.
  static std::string thread_comm(const symbols::Machines& machines, uint32_t tid, uint32_t own_tid) {
    const symbols::Thread* thread = machines.host().find_thread(static_cast<pid_t>(tid));
    if (thread && !thread->comm.empty()) return thread->comm;
    return ":" + std::to_string(static_cast<int32_t>(own_tid));
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
  state->line_options.nanoseconds = state->options.nanoseconds;
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
    s.print_side_band(reader, machines, view);
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
