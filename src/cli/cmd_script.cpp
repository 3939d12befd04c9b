#include "cli/cmd_script.h"

#include <unistd.h>

#include <memory>
#include <optional>
#include <variant>

#include "cli/command.h"
#include "cli/kvm_options.h"
#include "core/error.h"
#include "data/perf_data_format.h"
#include "data/perf_data_reader.h"
#include "events/builtin_events.h"
#include "report/raw_dump.h"
#include "report/report_header.h"
#include "report/sample_replay.h"
#include "report/script_fields.h"
#include "report/script_line.h"
#include "report/trace_symbols.h"
#include "tracing/recorded_tracing_data.h"
#include "session/reading_session.h"
#include "symbols/machines.h"

namespace vperf::cli {

namespace {

// Output is written in blocks: perf script's output is usually piped on (stackcollapse-perf.pl),
// and a flush per line would cost more than the formatting.
constexpr size_t kOutputBlock = 1 << 18;

// perf's name for an event the file does not name: the builtin name of a hardware, software
// or cache event, "system:event" for a tracepoint.
std::string fallback_event_name(const perf_event_attr& attr, const tracing::TracepointDecoder* decoder) {
  if (attr.type == PERF_TYPE_TRACEPOINT && decoder) {
    if (std::optional<std::string> name = decoder->event_name(attr.config)) return *name;
  }
  auto find = [&](const std::vector<events::BuiltinEvent>& table) -> std::optional<std::string> {
    for (const events::BuiltinEvent& e : table)
      if (e.type == attr.type && e.config == attr.config) return e.alias.empty() || attr.type != PERF_TYPE_HARDWARE ? e.name : e.alias;
    return std::nullopt;
  };
  std::optional<std::string> name;
  if (attr.type == PERF_TYPE_HARDWARE) name = find(events::hardware_events());
  else if (attr.type == PERF_TYPE_SOFTWARE) name = find(events::software_events());
  else if (attr.type == PERF_TYPE_HW_CACHE) name = find(events::hardware_cache_events());
  return name.value_or("[unknown]");
}

class ScriptRun {
 public:
  ScriptRun(const ScriptOptions& options, std::ostream& out, std::ostream& err)
      : options_(options),
        out_(out),
        err_(err),
        tracing_([&err](const std::string& warning) { err << "vperf: warning: " << warning << '\n'; }) {}

  int run() {
    report::ScriptFieldSelection selection;
    for (const std::string& argument : options_.fields) {
      Result<std::vector<std::string>> warnings = selection.apply(argument);
      if (!warnings)
        throw usage_error(warnings.error().message + " in -F " + argument,
                          "fields: " + report::script_field_names() + "; prefix hw:, sw:, trace:, raw: or break: for one event type; +field/-field change the defaults");
      for (const std::string& w : *warnings) err_ << "vperf: warning: " << w << '\n';
    }

    session::ReadingSession session(options_.source, "vperf record -- COMMAND");
    data::PerfDataReader& reader = session.reader();
    if (options_.header) {
      // A pipe's features may come last: its header is not known before its samples.
      if (reader.is_pipe()) throw usage_error("--header reads a file's header, and the input is a pipe", "give -i FILE");
      const std::string header = report::render_header(reader, session.header_info());
      out_.write(header.data(), static_cast<std::streamsize>(header.size()));
    }
    tracing_.load_file(reader);

    std::vector<report::ScriptEvent> events;
    for (const data::EventAttrEntry& entry : reader.attrs()) events.push_back({&entry.attr, entry.name});
    Result<report::ScriptFieldLayout> layout =
        selection.resolve(events, {.pipe = reader.is_pipe(), .hide_callchain = options_.hide_callchain});
    if (!layout) throw UserError(layout.error().message, "choose other fields with -F, or record the event with what they need");
    layout_ = *layout;
    line_options_.use_callchain = layout_.use_callchain;
    line_options_.max_stack = options_.max_stack;
    line_options_.user_stacks_unwound = true;

    bool any_ip = false;
    for (report::ScriptFieldSet fields : layout_.fields) any_ip = any_ip || (fields & report::kFieldIp);
    symbols::Machines& machines = session.machines();
    report::SampleReplay replay(machines, report::ReplayOptions{.ordered = true,
                                                                .resolve_chain = any_ip && layout_.use_callchain,
                                                                .unwinder = session.unwinder(),
                                                                .inline_frames = options_.inline_frames,
                                                                .forget_samples = true});
    std::optional<report::RawDump> dump;
    if (options_.dump_raw)
      dump.emplace(reader, options_.source.input == "-" ? "pipe" : options_.source.input, report::RawDumpCommand::Script);
    replay.set_record_observer([&](const data::RecordView& view) {
      if (tracing_.load_record(view.record)) names_.clear();  // tracepoint names may come from it
      if (dump) dump->append_record(view, buffer_);
    });
    tracing_.set_kernel_symbol_resolver(report::host_kernel_symbols(machines.host()));

    buffer_.reserve(kOutputBlock + 4096);
    Result<data::ReadStats> stats = replay.run(reader, [&](const report::ResolvedSample& sample) {
      if (dump) dump->append_sample_location(sample, buffer_);
      print(reader, sample);
      return true;
    });
    flush();
    out_.flush();
    if (!stats) throw session.unreadable(stats.error());
    scope_note_ = replay.scope_note();
    session.print_warnings(err_, stats->truncated);
    bool printed_from_fields = false;
    if (const tracing::TracepointDecoder* decoder = tracing_.decoder()) {
      for (const std::string& warning : decoder->warnings()) err_ << "vperf: warning: " << warning << '\n';
      if (std::optional<std::string> warning = decoder->printed_from_fields_warning()) {
        err_ << "vperf: warning: " << *warning << '\n';
        printed_from_fields = true;
      }
    }
    if (tracepoints_without_formats_)
      err_ << "vperf: warning: " << tracepoints_without_formats_
           << " tracepoint samples printed without their fields: the file has no usable tracing data\n";
    if (std::optional<std::string> note = scope_note_) err_ << "vperf: warning: " << *note << '\n';
    // As ftrace report: text printed other than its format says is an incomplete result.
    return printed_from_fields ? 1 : 0;
  }

 private:
  // Names and their width, computed at the first sample as perf does (in pipe mode the
  // tracepoints are only named once the tracing data has arrived).
  const std::string& event_name(const data::PerfDataReader& reader, size_t index) {
    const std::vector<data::EventAttrEntry>& attrs = reader.attrs();
    if (names_.size() != attrs.size()) {
      names_.clear();
      width_ = 0;
      for (const data::EventAttrEntry& e : attrs) {
        names_.push_back(e.name.empty() ? fallback_event_name(e.attr, tracing_.decoder()) : e.name);
        width_ = std::max(width_, static_cast<int>(names_.back().size()));
      }
      line_options_.event_name_width = width_;
    }
    return index < names_.size() ? names_[index] : unknown_;
  }

  void print(const data::PerfDataReader& reader, const report::ResolvedSample& sample) {
    const data::EventAttrEntry* entry = sample.view.attr;
    if (!entry) return;
    report::ScriptFieldSet fields = layout_.fields_for(entry->attr.type);
    if (fields == 0) return;
    const std::string& name = event_name(reader, sample.event);
    const tracing::TracepointDecoder* decoder = tracing_.decoder();
    if (entry->attr.type == PERF_TYPE_TRACEPOINT && (fields & report::kFieldTrace) &&
        (!decoder || !decoder->has_event(entry->attr.config)))
      ++tracepoints_without_formats_;
    report::append_script_sample(buffer_, sample, fields, name, line_options_, decoder, &frame_lines_);
    if (buffer_.size() >= kOutputBlock) flush();
  }

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

  const ScriptOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  report::ScriptFieldLayout layout_;
  report::ScriptLineOptions line_options_;
  tracing::RecordedTracingData tracing_;
  std::vector<std::string> names_;
  int width_ = 0;
  std::string unknown_ = "[unknown]";
  std::string buffer_;
  report::ScriptFrameLines frame_lines_;
  uint64_t tracepoints_without_formats_ = 0;
  std::optional<std::string> scope_note_;  // SampleReplay::scope_note, said after the samples
};

}  // namespace

int run_script(const ScriptOptions& options, std::ostream& out, std::ostream& err) {
  return ScriptRun(options, out, err).run();
}

void add_script_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm) {
  auto options = std::make_shared<ScriptOptions>();
  CLI::App* sub = app.add_subcommand("script", "Print the samples of a perf.data as perf script does");
  sub->add_option("-i,--input", options->source.input, "perf.data to read (vperf's or perf's; - for a pipe)")->check(non_empty());
  add_symfs_option(*sub, options->source.symbols.symfs);
  sub->add_option("-F,--fields", options->fields,
                  "Fields to print: comm,tid,pid,time,cpu,event,trace,ip,sym,symoff,dso,period; "
                  "hw:/sw:/trace: for one event type; +field/-field change the defaults")
      ->allow_extra_args(false);
  sub->add_flag("-G,--hide-call-graph", options->hide_callchain, "Print the sample ip alone, without its callchain");
  sub->add_flag("--header", options->header, "Print the perf.data header first (as perf report --header-only)");
  sub->add_flag("-D,--dump-raw-trace", options->dump_raw, "Dump each record (offset, size, bytes, fields) as perf script -D");
  sub->add_option("--max-stack", options->max_stack, "At most this many callchain frames per sample (default 127)")
      ->check(whole_number_in(0, 65535));
  sub->add_flag("--inline,!--no-inline", options->inline_frames,
                "Show functions inlined at DWARF-unwound frames (default; --no-inline: without them)");
  sub->callback([options, sub, kvm, &inv] {
    const bool input_given = sub->count("--input") > 0;
    inv.action = [options, kvm, input_given, &inv] {
      apply_kvm_defaults(kvm.get(), input_given, options->source);
      return run_script(*options, *inv.out, *inv.err);
    };
  });
}

}  // namespace vperf::cli
