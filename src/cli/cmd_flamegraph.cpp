#include "cli/cmd_flamegraph.h"

#include <unistd.h>

#include <memory>

#include "cli/command.h"
#include "cli/kvm_options.h"
#include "session/reading_session.h"
#include "core/error.h"
#include "core/files.h"
#include "data/perf_data_reader.h"
#include "report/flame_graph_svg.h"
#include "report/folded_stacks.h"
#include "report/sample_stacks.h"
#include "tracing/trace_dat.h"

namespace vperf::cli {

namespace {

// stackcollapse-perf.pl --kernel: tidied names, "_[k]" on kernel frames.
// stackcollapse-perf.pl --kernel --inline: kernel frames "_[k]", inlined frames "_[i]" (only
// DWARF call graphs have them), which flamegraph.pl's palettes colour apart.
constexpr report::Annotations kKernelAnnotated{true, false, true};

// One recording folded as stackcollapse-perf.pl --kernel folds it, and read back as
// flamegraph.pl reads those lines (names tidied, annotations turned into frame kinds).
struct FoldedRecording {
  std::string folded;
  report::StackProfile profile;
  uint64_t samples = 0;
  bool incomplete = false;  // some of the input could not be read (warned about): exit non-zero
};

// A trace.dat (vperf ftrace record, trace-cmd): its kernel stacks (stacktrace triggers,
// func_stack_trace), folded the same way; without any, its function_graph calls, each path
// weighted by the calls' self time in nanoseconds (a flame graph of durations).
std::optional<FoldedRecording> fold_trace_dat(const std::string& input, std::ostream& err) {
  if (input == "-") return std::nullopt;
  Result<ScopedFd> fd = open_regular_file(input);
  char head[16] = {};
  if (!fd || ::read(fd->get(), head, sizeof head) < 10 || !tracing::looks_like_trace_dat(std::string_view(head, 10))) return std::nullopt;
  Result<tracing::TraceDat> file = tracing::TraceDat::open(input);
  if (!file) throw user_error(file.error());
  FoldedRecording out;
  tracing::TraceReportSummary walk;
  out.folded = tracing::folded_kernel_stacks(*file, &out.samples, &walk);
  if (out.samples == 0) out.folded = tracing::folded_function_graph(*file, &out.samples, &walk);
  // What the walk skipped, as ftrace report says it; the graph of the rest is still drawn.
  const tracing::TraceShortcomings missing = tracing::shortcomings(*file, walk);
  for (const std::string& line : missing.warnings) err << "vperf flamegraph: warning: " << line << '\n';
  out.incomplete = missing.incomplete;
  if (out.samples == 0)
    throw UserError(input + " has no kernel stacks and no function_graph calls",
                    "record them: vperf ftrace record -e EVENT --trigger stacktrace (or -T) -- COMMAND, or -p function_graph -g FUNC -- COMMAND");
  Result<report::StackProfile> profile = report::parse_folded(out.folded);
  if (!profile) throw UserError("internal folded stacks did not parse: " + profile.error().describe(), "");
  out.profile = std::move(profile).value();
  return out;
}

FoldedRecording fold_recording(const std::string& input, const FlamegraphOptions& o, std::ostream& err) {
  if (std::optional<FoldedRecording> traced = fold_trace_dat(input, err)) return std::move(*traced);
  session::ReadingInput source = o.source;
  source.input = input;
  session::ReadingSession session(std::move(source), "vperf record -g -- COMMAND");
  Result<report::SampleStacks> stacks =
      report::sample_stacks(session.reader(), session.machines(), session.unwinder(), o.inline_frames);
  if (!stacks) throw session.unreadable(stacks.error());
  for (const std::string& warning : stacks->warnings) err << "vperf: warning: " << warning << '\n';
  if (stacks->samples == 0) throw session.no_samples();
  FoldedRecording out;
  // The lines as flamegraph.pl reads them, made without their text; the text only for
  // --folded of one recording.
  if (o.folded && o.diff.empty()) out.folded = report::folded_text(stacks->profile, {kKernelAnnotated, true});
  out.profile = report::folded_and_read_back(stacks->profile, {kKernelAnnotated, true});
  out.samples = stacks->samples;
  return out;
}

void write_output(const FlamegraphOptions& o, const std::string& text, std::ostream& out) {
  if (o.output == "-") {
    out << text;
    return;
  }
  if (Result<size_t> written = replace_file(o.output, text); !written)
    throw UserError("cannot write " + o.output + ": " + written.error().describe(),
                    "give -o a file in a directory you can create files in");
}

}  // namespace

int run_flamegraph(const FlamegraphOptions& o, std::ostream& out, std::ostream& err) {
  std::optional<report::Palette> palette = report::parse_palette(o.colors);
  if (!palette) throw usage_error("unknown palette '" + o.colors + "'", "hot, mem, io, java, js, perl, red, green, blue, aqua, yellow, purple, orange");
  if (o.width < 10) throw usage_error("--width " + std::to_string(o.width) + " is too narrow", "e.g. --width 1200");
  if (o.min_width < 0) throw usage_error("--min-width cannot be negative", "e.g. --min-width 0.1");
  if (!o.diff.empty() && o.diff.size() != 2)
    throw usage_error("--diff needs two recordings", "vperf flamegraph --diff before.data after.data");
  if (o.negate && o.diff.empty()) throw usage_error("--negate applies to a differential graph", "add --diff BEFORE AFTER");

  report::FlameGraphOptions svg;
  svg.title = o.title;
  svg.subtitle = o.subtitle;
  svg.width = o.width;
  svg.min_width = o.min_width;
  svg.palette = *palette;
  svg.inverted = o.inverted;
  svg.reversed = o.reversed;
  svg.negate = o.negate;
  svg.annotations = kKernelAnnotated;

  if (!o.diff.empty()) {
    FoldedRecording before = fold_recording(o.diff[0], o, err);
    FoldedRecording after = fold_recording(o.diff[1], o, err);
    write_output(o, o.folded ? report::diff_folded_text(before.profile, after.profile, {kKernelAnnotated, false})
                             : report::diff_flame_graph_svg(before.profile, after.profile, svg),
                 out);
    if (o.output != "-")
      err << "vperf flamegraph: " << before.samples << " -> " << after.samples << " samples, "
          << before.profile.size() << " -> " << after.profile.size() << " stacks -> " << o.output << '\n';
    return before.incomplete || after.incomplete ? 1 : 0;
  }

  FoldedRecording recording = fold_recording(o.source.input, o, err);
  write_output(o, o.folded ? recording.folded : report::flame_graph_svg(recording.profile, svg), out);
  if (o.output != "-")
    err << "vperf flamegraph: " << recording.samples << " samples, " << recording.profile.size() << " stacks -> "
        << o.output << '\n';
  if (recording.incomplete) err << "vperf flamegraph: the graph is incomplete: " << o.source.input << " could not be read whole (see the warnings above)\n";
  return recording.incomplete ? 1 : 0;
}

void add_flamegraph_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm) {
  auto options = std::make_shared<FlamegraphOptions>();
  CLI::App* sub = app.add_subcommand("flamegraph", "Draw an interactive SVG flame graph from perf.data (or from a trace.dat's kernel stacks)");
  sub->add_option("-i,--input", options->source.input, "perf.data to read (vperf's or perf's; - for a pipe), or a trace.dat with kernel stacks")->check(non_empty());
  add_symfs_option(*sub, options->source.symbols.symfs);
  sub->add_option("-o,--output", options->output, "SVG to write (default flamegraph.svg; - for stdout)")->check(non_empty());
  sub->add_flag("--folded", options->folded, "Write folded stacks (stackcollapse-perf.pl --kernel format) instead");
  sub->add_option("--title", options->title, "Title (default \"Flame Graph\")");
  sub->add_option("--subtitle", options->subtitle, "Second title line");
  sub->add_option("--width", options->width, "Width in pixels (default 1200)")->check(whole_number_in(10, 1000000));
  sub->add_option("--min-width", options->min_width, "Omit frames narrower than this many pixels (default 0.1)")
      ->check(number_in(0, 1000000));
  sub->add_option("--colors", options->colors, "Palette: java (default: kernel orange, C++ yellow, C red), hot, ...");
  sub->add_flag("--inverted", options->inverted, "Icicle graph: roots at the top");
  sub->add_flag("--reverse", options->reversed, "Merge stacks from the leaves");
  sub->add_flag("--inline,!--no-inline", options->inline_frames,
                "Show functions inlined at DWARF-unwound frames (default; --no-inline: without them)");
  CLI::Option* diff = sub->add_option("--diff", options->diff,
                                      "Differential graph of two recordings, BEFORE AFTER (difffolded.pl + flamegraph.pl)")
                          ->expected(2)
                          ->type_name("BEFORE AFTER");
  sub->get_option("-i")->excludes(diff);
  sub->add_flag("--negate", options->negate, "With --diff: blue for growth, red for shrinkage (flamegraph.pl --negate)");
  sub->callback([options, sub, kvm, &inv] {
    const bool input_given = sub->count("--input") > 0;
    inv.action = [options, kvm, input_given, &inv] {
      apply_kvm_defaults(kvm.get(), input_given || !options->diff.empty(), options->source);
      options->source.symbols.build_id_cache = inv.buildid_dir;
      return run_flamegraph(*options, *inv.out, *inv.err);
    };
  });
}

}  // namespace vperf::cli
