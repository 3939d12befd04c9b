// vperf data convert --to-json: perf data's JSON conversion (report/data_convert_json.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "report/data_convert_json.h"
#include "session/reading_session.h"

namespace vperf::cli {

namespace {

struct DataConvertOptions {
  session::ReadingInput source;
  std::string to_json;
  std::string to_ctf;
  bool force = false;
};

int run_data_convert(const DataConvertOptions& o, std::ostream& err) {
  if (!o.to_ctf.empty())
    throw usage_error("--to-ctf is not in vperf (perf writes CTF through libbabeltrace)", "convert to JSON: --to-json FILE");
  if (o.to_json.empty()) throw usage_error("nothing to convert to", "give --to-json FILE");
  std::error_code ec;
  if (std::filesystem::exists(o.to_json, ec) && !o.force)
    throw UserError(o.to_json + " exists", "add --force to overwrite it, as perf data convert asks");
  session::ReadingSession session(o.source, "vperf record -- COMMAND");
  if (session.is_pipe()) throw usage_error("data convert reads a file, and the input is a pipe", "save it first: ... > perf.data, then -i perf.data");
  // Written beside the target and renamed over it at the end: a failure leaves no half file.
  const std::string partial = o.to_json + ".vperf-partial";
  std::ofstream out(partial, std::ios::trunc);
  if (!out) throw UserError("cannot write " + partial, "give --to-json a file in a directory you can write to");
  Result<report::JsonConversion> done = report::write_perf_json(session.reader(), o.source.input, session.machines(), out);
  out.close();
  if (!done || !out) {
    std::filesystem::remove(partial, ec);
    if (!done) throw session.unreadable(done.error());
    throw UserError("cannot write " + o.to_json, "check the disk space");
  }
  std::filesystem::rename(partial, o.to_json, ec);
  if (ec) {
    std::filesystem::remove(partial, ec);
    throw UserError("cannot write " + o.to_json, "give --to-json a file in a directory you can write to");
  }
  const double megabytes = static_cast<double>(std::filesystem::file_size(o.to_json, ec)) / (1024.0 * 1024.0);
  char line[128];
  std::snprintf(line, sizeof line, "%.3f MB (%llu samples)", megabytes, static_cast<unsigned long long>(done->samples));
  err << "[ vperf data convert: Converted '" << o.source.input << "' into JSON data '" << o.to_json << "' ]\n"
      << "[ vperf data convert: Converted and wrote " << line << " ]\n";
  return 0;
}

}  // namespace

void add_data_command(CLI::App& app, Invocation& inv) {
  CLI::App* data = app.add_subcommand("data", "Convert a recording (perf data)");
  data->require_subcommand(1);
  auto o = std::make_shared<DataConvertOptions>();
  o->source.input = "perf.data";
  CLI::App* convert = data->add_subcommand("convert", "Write a recording as perf data convert's JSON");
  convert->add_option("-i,--input", o->source.input, "perf.data to read (vperf's or perf's)")->check(non_empty());
  convert->add_option("--to-json", o->to_json, "The JSON file to write")->check(non_empty());
  convert->add_option("--to-ctf", o->to_ctf, "Not in vperf (perf's CTF needs libbabeltrace)");
  convert->add_flag("-f,--force", o->force, "Overwrite the JSON file if it exists");
  add_symfs_option(*convert, o->source.symbols.symfs);
  convert->callback([o, &inv] { inv.action = [o, &inv] { return run_data_convert(*o, *inv.err); }; });
}

}  // namespace vperf::cli
