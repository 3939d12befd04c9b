#include "cli/cmd_annotate.h"

#include <unistd.h>

#include <memory>
#include <vector>

#include "cli/command.h"
#include "cli/kvm_options.h"
#include "core/error.h"
#include "data/perf_data_reader.h"
#include "output/json.h"
#include "report/annotate_disassembler.h"
#include "report/annotate_hits.h"
#include "report/annotate_listing.h"
#include "report/annotate_printer.h"
#include "report/annotate_code.h"
#include "session/reading_session.h"

namespace vperf::cli {

namespace {

constexpr size_t kHintedSymbols = 5;

report::AsmSyntax parse_style(const std::string& style) {
  if (style == "att") return report::AsmSyntax::Att;
  if (style == "intel") return report::AsmSyntax::Intel;
  throw usage_error("unknown disassembler style '" + style + "'", "-M att (objdump's default) or -M intel");
}

std::string hottest_names(const std::vector<report::SymbolHits>& symbols) {
  std::string names;
  for (size_t i = 0; i < symbols.size() && i < kHintedSymbols; ++i) names += (i ? ", " : "") + std::string(symbols[i].symbol->name);
  return names;
}

}  // namespace

int run_annotate(const AnnotateOptions& o, std::ostream& out, std::ostream& err) {
  report::AsmSyntax syntax = parse_style(o.disassembler_style);
  session::ReadingSession session(o.source, "vperf record -- COMMAND");
  Result<report::AnnotateHits> hits = report::collect_annotate_hits(session.reader(), session.machines());
  if (!hits) throw session.unreadable(hits.error());
  for (const std::string& warning : hits->warnings) err << "vperf: warning: " << warning << '\n';
  if (hits->samples == 0) throw session.no_samples();
  if (hits->symbols.empty())
    throw UserError("none of the " + std::to_string(hits->samples) + " samples of " + session.name() + " resolved to a symbol",
                    "are the recorded binaries still there? (perf.data names them: vperf script shows the dso)");

  std::vector<const report::SymbolHits*> chosen;
  for (const report::SymbolHits& s : hits->symbols)
    if (o.symbol.empty() || s.symbol->name == o.symbol) chosen.push_back(&s);
  if (chosen.empty())
    throw UserError("no samples in symbol '" + o.symbol + "' in " + session.name(),
                    "the hottest symbols are: " + hottest_names(hits->symbols));

  Result<report::Disassembler> disassembler = report::Disassembler::x86_64(syntax);
  if (!disassembler) throw UserError(disassembler.error().describe(), "is libcapstone installed correctly?");

  const report::CodeSources code_sources{o.source.symbols, o.kcore};
  size_t done = 0;
  report::SourceFiles sources;
  boost::json::array annotated;
  std::vector<std::string> failures;
  boost::json::array skipped;
  for (const report::SymbolHits* s : chosen) {
    Result<report::SymbolCode> code = report::read_symbol_code(s->dso(), *s->symbol, code_sources);
    if (!code) {
      failures.push_back("cannot annotate " + std::string(s->symbol->name) + " (" + s->dso().name() + "): " + code.error().describe());
      skipped.push_back(boost::json::object{{"symbol", s->symbol->name}, {"dso", s->dso().name()},
                                            {"samples", s->samples}, {"reason", code.error().describe()}});
      continue;
    }
    report::SymbolListing listing = report::build_listing(*s, *code, *disassembler, sources);
    if (o.json) annotated.push_back(report::listing_json(listing));
    else report::print_listing_text(listing, out);
    ++done;
  }
  if (done == 0) {
    std::string more = failures.size() > 1 ? " (and " + std::to_string(failures.size() - 1) + " more)" : "";
    throw UserError(failures.front() + more,
                    "kernel code is read from /proc/kcore (root only); user code from the recorded binary");
  }
  if (o.json) output::print_json(out, boost::json::object{{"symbols", std::move(annotated)}, {"skipped", std::move(skipped)}});
  else
    for (const std::string& failure : failures) err << "vperf: warning: " << failure << '\n';
  return 0;
}

void add_annotate_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm) {
  auto options = std::make_shared<AnnotateOptions>();
  CLI::App* sub = app.add_subcommand("annotate", "Disassemble sampled symbols with per-instruction sample shares");
  sub->add_option("-i,--input", options->source.input, "perf.data to read (vperf's or perf's; - for a pipe)")->check(non_empty());
  add_symfs_option(*sub, options->source.symbols.symfs);
  sub->add_option("symbol", options->symbol, "Annotate only this symbol (default: every symbol with samples)");
  sub->add_option("-s,--symbol", options->symbol, "Annotate only this symbol (as perf annotate -s)");
  sub->add_option("-M,--disassembler-style", options->disassembler_style, "att (default, objdump's) or intel");
  sub->add_flag("--stdio", options->stdio, "Print to stdout (the only mode; accepted for perf's command lines)");
  add_json_flag(*sub, options->json);
  sub->callback([options, sub, kvm, &inv] {
    const bool input_given = sub->count("--input") > 0;
    inv.action = [options, kvm, input_given, &inv] {
      if (!input_given && !kvm) options->source.input = session::default_input();
      apply_kvm_defaults(kvm.get(), input_given, options->source);
      options->source.symbols.build_id_cache = inv.buildid_dir;
      return run_annotate(*options, *inv.out, *inv.err);
    };
  });
}

}  // namespace vperf::cli
