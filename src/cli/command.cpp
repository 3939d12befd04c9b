#include "cli/command.h"

#include "core/error.h"

namespace vperf::cli {

events::PmcCatalogOptions ModelOptions::catalog_options() const {
  events::PmcCatalogOptions options;
  options.model = model;
  if (!perfmon.empty()) options.perfmon = perfmon;
  return options;
}

CLI::Validator non_empty() {
  return CLI::Validator([](const std::string& value) { return value.empty() ? std::string("must not be empty") : ""; },
                        "", "non-empty");
}

void add_model_options(CLI::App& sub, ModelOptions& options) {
  sub.add_option("--model", options.model, "CPU model whose PMC catalog to use (ivb, skx, icx, spr, zen3, ...); default: this CPU")
      ->check(non_empty());
  sub.add_option("--perfmon", options.perfmon,
                 "Also use Intel perfmon JSON: a file, or a perfmon checkout root with mapfile.csv")
      ->check(non_empty());
}

std::vector<std::string> command_words(const CLI::App& sub, const Invocation& inv) {
  std::vector<std::string> words = sub.remaining();
  if (!inv.has_separator) return words;
  // "vperf stat CMD x -- y": the "--" is the command's own.
  if (!words.empty()) words.push_back("--");
  words.insert(words.end(), inv.command_after_separator.begin(), inv.command_after_separator.end());
  if (words.empty())
    throw usage_error("'--' is not followed by a command", "vperf " + sub.get_name() + " -- COMMAND ARGS");
  return words;
}

}  // namespace vperf::cli
