#include "cli/cmd_script.h"

#include "cli/command.h"
#include "cli/kvm_options.h"
#include "core/error.h"
#include "core/strings.h"
#include "report/report_header.h"
#include "report/script_fields.h"
#include "report/script_pass.h"
#include "session/reading_session.h"

namespace vperf::cli {

int run_script(const ScriptOptions& options, std::ostream& out, std::ostream& err) {
  auto warn = [&err](const std::string& warning) { err << "vperf: warning: " << warning << '\n'; };
  report::ScriptPassOptions pass_options;
  pass_options.hide_callchain = options.hide_callchain;
  pass_options.max_stack = options.max_stack;
  pass_options.inline_frames = options.inline_frames;
  pass_options.nanoseconds = options.nanoseconds;
  pass_options.show_task_events = options.show_task_events;
  pass_options.show_mmap_events = options.show_mmap_events;
  for (const std::string& list : options.symbols)
    for (std::string_view symbol : split(list, ','))
      if (!symbol.empty()) pass_options.symbols.emplace_back(symbol);
  for (const std::string& argument : options.fields) {
    Result<std::vector<std::string>> warnings = pass_options.fields.apply(argument);
    if (!warnings)
      throw usage_error(warnings.error().message + " in -F " + argument,
                        "fields: " + report::script_field_names() + "; prefix hw:, sw:, trace:, raw: or break: for one event type; +field/-field change the defaults");
    for (const std::string& w : *warnings) warn(w);
  }
  session::ReadingSession session(options.source, "vperf record -- COMMAND");
  if (options.header) {
    // A pipe's features may come last: its header is not known before its samples.
    if (session.is_pipe()) throw usage_error("--header reads a file's header, and the input is a pipe", "give -i FILE");
    const std::string header = report::render_header(session.reader(), session.header_info());
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
  }
  if (options.dump_raw) pass_options.dump_input = options.source.input == "-" ? "pipe" : options.source.input;
  Result<report::ScriptPass> pass = report::ScriptPass::prepare(session.reader(), std::move(pass_options), warn);
  if (!pass) throw user_error(pass.error());
  Result<report::ScriptPassResult> result = pass->run(session.reader(), session.machines(), session.unwinder(), out);
  if (!result) throw session.unreadable(result.error());
  session.print_warnings(err, result->stats.truncated);
  for (const std::string& warning : result->closing_warnings) warn(warning);
  return result->printed_from_fields ? 1 : 0;  // as ftrace report: text printed other than its format says
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
  sub->add_flag("--ns", options->nanoseconds, "Times in nanoseconds");
  sub->add_flag("--show-task-events", options->show_task_events, "Also print COMM, FORK and EXIT records among the samples");
  sub->add_flag("--show-mmap-events", options->show_mmap_events, "Also print MMAP and MMAP2 records among the samples");
  sub->add_option("-S,--symbols", options->symbols, "Only samples in these functions (comma list)")->allow_extra_args(false);
  sub->add_flag("--header", options->header, "Print the perf.data header first (as perf report --header-only)");
  sub->add_flag("-D,--dump-raw-trace", options->dump_raw, "Dump each record (offset, size, bytes, fields) as perf script -D");
  sub->add_option("--max-stack", options->max_stack, "At most this many callchain frames per sample (default 127)")
      ->check(whole_number_in(0, 65535));
  sub->add_flag("--inline,!--no-inline", options->inline_frames,
                "Show functions inlined at DWARF-unwound frames (default; --no-inline: without them)");
  sub->callback([options, sub, kvm, &inv] {
    const bool input_given = sub->count("--input") > 0;
    inv.action = [options, kvm, input_given, &inv] {
      if (!input_given && !kvm) options->source.input = session::default_input();
      apply_kvm_defaults(kvm.get(), input_given, options->source);
      options->source.symbols.build_id_cache = inv.buildid_dir;
      return run_script(*options, *inv.out, *inv.err);
    };
  });
}

}  // namespace vperf::cli
