// vperf evlist: perf evlist's listing of a recording's events (report/evlist.h).
#include <memory>
#include <string>

#include "cli/command.h"
#include "report/evlist.h"
#include "session/reading_session.h"
#include "tracing/recorded_tracing_data.h"

namespace vperf::cli {

void add_evlist_command(CLI::App& app, Invocation& inv) {
  auto input = std::make_shared<std::string>("perf.data");
  auto options = std::make_shared<report::EvlistOptions>();
  CLI::App* sub = app.add_subcommand("evlist", "List the events a recording holds, as perf evlist");
  sub->add_option("-i,--input", *input, "perf.data to read (vperf's or perf's; - for a pipe)")->check(non_empty());
  sub->add_flag("-v,--verbose", options->verbose, "Each event's attr fields");
  sub->add_flag("-F,--freq", options->frequency, "Each event's sampling frequency or period");
  sub->add_flag("-g,--group", options->groups, "Groups as {leader,member...}");
  sub->add_flag("--trace-fields", options->trace_fields, "Each tracepoint's fields");
  sub->add_flag("-f,--force")->description("Accepted for perf's command lines (vperf reads files of any owner)");
  sub->callback([input, options, &inv] {
    inv.action = [input, options, &inv] {
      session::ReadingInput source;
      source.input = *input;
      session::ReadingSession session(source, "vperf record -- COMMAND");
      data::PerfDataReader& reader = session.reader();
      tracing::RecordedTracingData tracing([](const std::string&) {});
      tracing.load_file(reader);
      // A pipe's events and tracing data come as records, which a pass reads.
      if (reader.is_pipe()) checked(reader.read([&](const data::RecordView& view) {
        tracing.load_record(view.record);
        return true;
      }));
      *inv.out << report::render_evlist(reader, tracing.decoder(), *options);
      return 0;
    };
  });
}

}  // namespace vperf::cli
