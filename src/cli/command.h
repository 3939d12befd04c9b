#pragma once
// How a command plugs into the CLI. Each cmd_NAME.cpp holds two things:
//   run_NAME(options, out)      the command's logic, callable in-process from tests;
//   add_NAME_command(app, inv)  its CLI11 wiring, which parses into the options and
//                               leaves the call to run_NAME in inv.action.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "pmc/pmc_catalog.h"

namespace vperf::cli {

struct Invocation {
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;  // perf stat's counts go here, as perf prints them on stderr
  std::function<int()> action;  // set by the subcommand that was parsed
  // "-- CMD ARGS" after a subcommand's options, kept out of option parsing (vperf stat -- CMD).
  bool has_separator = false;
  std::vector<std::string> command_after_separator;
  // The whole command line, vperf's own path first (as perf's header records perf's): what
  // perf.data's cmdline feature holds.
  std::vector<std::string> cmdline;
  // perf's global --buildid-dir (given before the command): the build-id cache's directory;
  // empty: ~/.debug.
  std::string buildid_dir;
  // "vperf stat record ...": stat's options and command, with the counts also written to a
  // perf.data (-o then names it; default perf.data).
  bool stat_record = false;
};

// A library's Result as a command's value, or its error as the command's one line.
template <typename T>
T checked(Result<T> result) {
  if (!result) throw user_error(result.error());
  return std::move(result).value();
}
inline void checked(Result<void> result) {
  if (!result) throw user_error(result.error());
}

// For options whose empty value would silently mean "not given" (--model '', --perfmon '').
CLI::Validator non_empty();

// Every numeric option is range-checked where it is parsed, with its range in the message, so a
// value the conversion would take (inf, nan, 1e300, -1 for an unsigned, 2^64) never reaches a
// command: `kvm stat live -d inf` once printed without end.
CLI::Validator whole_number_in(int64_t min, int64_t max);  // decimal digits, optional '-'
CLI::Validator number_in(double min, double max);          // a finite decimal number

// Adds "--json" to a subcommand; every command of vperf has it.
inline CLI::Option* add_json_flag(CLI::App& sub, bool& json) {
  return sub.add_flag("--json", json, "Print the result as JSON");
}

// perf's --symfs DIR for the readers of perf.data: user-space files and their separate
// debuginfo are read under DIR (another machine's or a container's root). Kernel symbols still
// come from this machine's kallsyms, where perf would leave them unresolved.
inline CLI::Option* add_symfs_option(CLI::App& sub, std::filesystem::path& symfs) {
  return sub.add_option("--symfs", symfs, "Look for user-space files and their debuginfo under this directory")
      ->check(CLI::ExistingDirectory);
}

// --model and --perfmon: which CPU's PMC catalog list, encode and decode work from.
struct ModelOptions {
  std::string model;    // empty: this machine's CPU
  std::string perfmon;  // empty: the bundled Intel tables (Intel models only)

  events::PmcCatalogOptions catalog_options() const;
};
void add_model_options(CLI::App& sub, ModelOptions& options);

// The command a subcommand runs ("vperf stat [opts] [--] CMD ARGS"): the words CLI11 left
// after the options (prefix_command) and, after a "--", the words app.cpp kept aside; a "--"
// inside the command's own arguments stays there. Throws usage_error for a bare "--".
// The usage error for an option `command` does not have: perf's own ("perf report's option
// --hierarchy is not supported by vperf yet") or an unknown one ("unknown option --frob").
UserError unknown_option(const CLI::App& command, const std::string& word);
// A command's words below vperf: "stat", "ftrace record", "kvm report".
std::string command_path(const CLI::App& command);

std::vector<std::string> command_words(const CLI::App& sub, const Invocation& inv);

void add_list_command(CLI::App& app, Invocation& inv);
void add_encode_command(CLI::App& app, Invocation& inv);
void add_decode_command(CLI::App& app, Invocation& inv);
void add_check_command(CLI::App& app, Invocation& inv);
void add_msr_command(CLI::App& app, Invocation& inv);
void add_buildid_cache_command(CLI::App& app, Invocation& inv);
void add_buildid_list_command(CLI::App& app, Invocation& inv);
void add_inject_command(CLI::App& app, Invocation& inv);
void add_version_command(CLI::App& app, Invocation& inv);
void add_evlist_command(CLI::App& app, Invocation& inv);
void add_daemon_command(CLI::App& app, Invocation& inv);
void add_data_command(CLI::App& app, Invocation& inv);
void add_stat_command(CLI::App& app, Invocation& inv);
// record, report, script, flamegraph and annotate are also subcommands of `vperf kvm`: then
// `kvm` (not null) gives their default file name, event scope and guest symbols
// (cli/kvm_options.h); an explicit -o/-i still wins.
struct KvmOptions;
void add_record_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm = nullptr);
void add_flamegraph_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm = nullptr);
void add_report_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm = nullptr);
void add_script_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm = nullptr);
void add_annotate_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm = nullptr);
void add_turbo_command(CLI::App& app, Invocation& inv);
void add_probe_command(CLI::App& app, Invocation& inv);
void add_ftrace_command(CLI::App& app, Invocation& inv);

}  // namespace vperf::cli
