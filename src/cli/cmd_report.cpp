#include "cli/cmd_report.h"


#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/command.h"
#include "cli/kvm_options.h"
#include "core/error.h"
#include "data/perf_data_reader.h"
#include "output/json.h"
#include "report/raw_dump.h"
#include "report/report_header.h"
#include "report/report_json.h"
#include "report/report_session.h"
#include "report/sample_replay.h"
#include "report/task_tree.h"
#include "report/report_stdio.h"
#include "session/reading_session.h"

namespace vperf::cli {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  std::istringstream in(text);
  while (std::getline(in, word, ','))
    if (!word.empty()) words.push_back(word);
  return words;
}

std::set<pid_t> parse_ids(const std::string& text, const char* option) {
  std::set<pid_t> ids;
  for (const std::string& word : split_list(text)) {
    char* end = nullptr;
    long id = std::strtol(word.c_str(), &end, 10);
    if (end == word.c_str() || *end != '\0' || id < 0)
      throw usage_error(std::string(option) + " takes a comma list of numbers, not '" + word + "'",
                        std::string("e.g. ") + option + " 1234,1235");
    ids.insert(static_cast<pid_t>(id));
  }
  return ids;
}

void write(std::ostream& out, const std::string& text) { out.write(text.data(), static_cast<std::streamsize>(text.size())); }

// The command line as given: the texts that resolve() turns into ReportCommandOptions.
struct RawReportOptions {
  ReportCommandOptions options;
  std::string sort;
  std::string fields;
  std::string call_graph;
  std::string percentage = "absolute";
  std::string comms, pids, tids, dsos, symbols;
  bool children = false, no_children = false, stdio = false;
  bool inverted = false;  // -G
};

// Parses the texts into raw.options; throws usage_error naming a bad value.
void resolve(RawReportOptions& raw) {
  ReportCommandOptions& opt = raw.options;
  if (!raw.sort.empty()) {
    Result<std::vector<report::SortKey>> keys = report::parse_sort_keys(raw.sort);
    if (!keys) throw usage_error(keys.error().message, "sort keys: comm, pid, tid, dso, sym, cpu, trace, srcline");
    opt.report.sort_keys = *keys;
    opt.report.sort_starts_with_sym = raw.sort.rfind("sym", 0) == 0;
  }
  if (!raw.fields.empty()) {
    Result<std::vector<report::OutputField>> fields = report::parse_output_fields(raw.fields);
    if (!fields)
      throw usage_error(fields.error().message,
                        "fields: overhead, overhead_sys, overhead_us, overhead_guest_sys, overhead_guest_us, "
                        "overhead_children, sample, period, comm, pid, tid, dso, sym, cpu, trace");
    opt.report.fields = *fields;
  }
  if (opt.report.hierarchy && !opt.report.fields.empty())
    throw usage_error("--hierarchy and -F cannot be used together", "as in perf: choose the columns with -s under --hierarchy");
  if (raw.children) opt.report.children = true;
  if (raw.no_children) opt.report.children = false;
  if (!raw.call_graph.empty()) opt.report.call_graph = parse_call_graph(raw.call_graph);
  if (raw.inverted) opt.report.call_graph.order = report::CallGraphOrder::Caller;  // -G: perf applies it after -g
  if (opt.report.percent_limit < 0 || opt.report.percent_limit > 100)
    throw usage_error("--percent-limit must be between 0 and 100", "e.g. --percent-limit 1");
  opt.report.relative_percentage = raw.percentage == "relative";
  for (const std::string& c : split_list(raw.comms)) opt.report.filters.comms.insert(c);
  for (const std::string& d : split_list(raw.dsos)) opt.report.filters.dsos.insert(d);
  for (const std::string& s : split_list(raw.symbols)) opt.report.filters.symbols.insert(s);
  opt.report.filters.pids = parse_ids(raw.pids, "--pid");
  opt.report.filters.tids = parse_ids(raw.tids, "--tid");
}

}  // namespace

report::CallGraphOptions parse_call_graph(const std::string& spec) {
  report::CallGraphOptions options;
  for (const std::string& word : split_list(spec)) {
    if (word == "graph") options.mode = report::CallGraphMode::Graph;
    else if (word == "fractal") options.mode = report::CallGraphMode::Fractal;
    else if (word == "flat") options.mode = report::CallGraphMode::Flat;
    else if (word == "folded") options.mode = report::CallGraphMode::Folded;
    else if (word == "none") options.mode = report::CallGraphMode::None;
    else if (word == "caller") options.order = report::CallGraphOrder::Caller;
    else if (word == "callee") options.order = report::CallGraphOrder::Callee;
    else if (word == "function" || word == "percent") continue;
    else {
      char* end = nullptr;
      double threshold = std::strtod(word.c_str(), &end);
      if (end == word.c_str() || *end != '\0' || threshold < 0 || threshold > 100)
        throw usage_error("unknown call-graph setting '" + word + "'",
                          "use graph|fractal|flat|folded|none, a threshold percentage, caller|callee (e.g. -g graph,0.5,caller)");
      options.min_percent = threshold;
    }
  }
  return options;
}

int run_report(const ReportCommandOptions& o, std::ostream& out, std::ostream& err) {
  session::ReadingSession session(o.source, "vperf record -g -- COMMAND");
  data::PerfDataReader& reader = session.reader();
  // A pipe's features may come last (vperf record writes them at the end): read it first.
  if (o.header_only) {
    if (reader.is_pipe()) {
      Result<data::ReadStats> stats = reader.read([](const data::RecordView&) { return true; });
      if (!stats) throw session.unreadable(stats.error());
    }
    write(out, report::render_header(reader, session.header_info()));
    return 0;
  }
  if (o.header && !reader.is_pipe()) write(out, report::render_header(reader, session.header_info()));
  if (o.stats) {
    Result<std::string> table = report::record_stats(reader);
    if (!table) throw session.unreadable(table.error());
    write(out, *table);
    session.print_warnings(err);
    return 0;
  }
  if (o.dump_raw) {
    Result<data::ReadStats> stats =
        report::write_report_raw_dump(reader, session.machines(), o.source.input == "-" ? "pipe" : o.source.input, out);
    if (!stats) throw session.unreadable(stats.error());
    session.print_warnings(err);
    return 0;
  }
  if (o.tasks) {
    // Every record through the machine model (forks, comms, exits); the samples count for nothing.
    report::SampleReplay replay(session.machines(), report::ReplayOptions{.resolve_chain = false});
    Result<data::ReadStats> stats = replay.run(reader, [](const report::ResolvedSample&) { return true; });
    if (!stats) throw session.unreadable(stats.error());
    write(out, report::render_task_tree(session.machines().host()));
    return 0;
  }
  Result<report::ReportData> data = report::build_report(reader, session.machines(), o.report, session.unwinder());
  if (!data) throw session.unreadable(data.error());
  // What went wrong with the input, on one line: the report below is what could be read.
  if (!data->warnings.empty() && !o.report.quiet) {
    err << "vperf: warning: ";
    for (size_t i = 0; i < data->warnings.size(); ++i) err << (i ? "; " : "") << data->warnings[i];
    err << '\n';
  }
  if (data->stats.samples == 0) throw session.no_samples();

  if (o.json) {
    output::print_json(out, report::report_json(*data, o.report));
    return data->traces_printed_from_fields ? 1 : 0;
  }
  if (o.header && reader.is_pipe()) write(out, report::render_header(reader, session.header_info()));
  write(out, report::render_stdio(*data, o.report, o.header));
  if (o.show_threads) write(out, report::task_counts_table(*data));
  return data->traces_printed_from_fields ? 1 : 0;  // as ftrace report and script: incomplete
}

void add_report_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm) {
  auto raw = std::make_shared<RawReportOptions>();
  ReportCommandOptions& o = raw->options;
  CLI::App* sub = app.add_subcommand("report", "Summarise a perf.data as perf report --stdio does");
  sub->add_option("-i,--input", o.source.input, "perf.data to read (vperf's or perf's; - for a pipe)")->check(non_empty());
  sub->add_flag("--stdio", raw->stdio, "Text output (the only interface; accepted for perf's command lines)");
  sub->add_option("-s,--sort", raw->sort, "Sort keys: comm,pid,tid,dso,sym,cpu,trace (default comm,dso,sym; trace for tracepoints)");
  sub->add_option("-F,--fields", raw->fields,
                  "Columns in order: overhead, overhead_sys, overhead_us, overhead_guest_sys, overhead_guest_us, "
                  "overhead_children, sample, period and sort keys (as perf report -F)");
  sub->add_flag("--hierarchy", o.report.hierarchy, "A level per sort key, indented (perf report --hierarchy; no Children)");
  auto* children = sub->add_flag("--children", raw->children, "Children column: time in each function and its callees");
  sub->add_flag("--no-children", raw->no_children, "Self time only")->excludes(children);
  sub->add_option("-g,--call-graph", raw->call_graph,
                  "Call graph: graph|fractal|flat|folded|none[,THRESHOLD][,caller|callee] (default graph,0.5, caller with children)");
  sub->add_flag("-G,--inverted", raw->inverted, "Caller-ordered call graphs (perf's alias for -g caller)");
  sub->add_flag("--group,!--no-group", o.report.event_group,
                "A recording's {groups} as one section, a column per member (default; --no-group: each event alone)");
  sub->add_option("--max-stack", o.report.max_stack,
                  "At most this many callchain frames per sample, the root-most in caller graphs (default 127)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("-n,--show-nr-samples", o.report.show_samples, "Samples column");
  sub->add_flag("-T,--threads", o.show_threads, "Then each task's counts, from a recording made with record -s");
  sub->add_flag("--show-total-period", o.report.show_total_period, "Period column (each entry's own event count)");
  sub->add_flag("-q,--quiet", o.report.quiet, "No '#' comment lines and no warnings, as perf report -q");
  sub->add_flag("--inline,!--no-inline", o.report.inline_frames,
                "Show functions inlined at DWARF-unwound frames (default; --no-inline: without them)");
  sub->add_option("--percent-limit", o.report.percent_limit, "Hide entries and call-graph branches below this percentage")
      ->check(number_in(0, 100));
  sub->add_option("--percentage", raw->percentage, "Percentages of filtered output: absolute (default) or relative")
      ->check(CLI::IsMember({"absolute", "relative"}));
  sub->add_option("--comm", raw->comms, "Only these comms (comma list)");
  sub->add_option("--pid", raw->pids, "Only these process ids (comma list)");
  sub->add_option("--tid", raw->tids, "Only these thread ids (comma list)");
  sub->add_option("-d,--dsos", raw->dsos, "Only these shared objects (comma list)");
  sub->add_option("-S,--symbols", raw->symbols, "Only these symbols (comma list)");
  add_symfs_option(*sub, o.source.symbols.symfs);
  auto* header = sub->add_flag("--header", o.header, "Print the perf.data header before the report");
  sub->add_flag("--header-only", o.header_only, "Print the perf.data header only")->excludes(header);
  sub->add_flag("--tasks,--task", o.tasks, "The recording's threads as a tree of who forked whom (pid, tid, ppid, comm), as perf");
  sub->add_flag("--stats", o.stats, "Print the count of each record type and each event's samples, as perf report --stats");
  sub->add_flag("-D,--dump-raw-trace", o.dump_raw, "Dump each record (offset, size, bytes, fields) and the record counts, as perf report -D");
  add_json_flag(*sub, o.json);
  sub->callback([raw, sub, kvm, &inv] {
    resolve(*raw);
    const bool input_given = sub->count("--input") > 0;
    inv.action = [raw, kvm, input_given, &inv] {
      if (!input_given && !kvm) raw->options.source.input = session::default_input();
      apply_kvm_defaults(kvm.get(), input_given, raw->options.source);
      raw->options.source.symbols.build_id_cache = inv.buildid_dir;
      return run_report(raw->options, *inv.out, *inv.err);
    };
  });
}

}  // namespace vperf::cli
