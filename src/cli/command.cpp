#include "cli/command.h"

#include <cmath>
#include <cstdlib>

#include "cli/perf_options.h"
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

CLI::Validator whole_number_in(int64_t min, int64_t max) {
  std::string range = "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](const std::string& value) -> std::string {
        size_t digits = value.starts_with('-') ? 1 : 0;
        bool well_formed = value.size() > digits && value.size() - digits <= 19 &&
                           value.find_first_not_of("0123456789", digits) == std::string::npos;
        if (!well_formed) return "must be " + range;
        errno = 0;
        long long n = std::strtoll(value.c_str(), nullptr, 10);
        if (errno == ERANGE || n < min || n > max) return "must be " + range;
        return "";
      },
      "", "whole number");
}

CLI::Validator number_in(double min, double max) {
  auto text = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.ends_with('.')) s.pop_back();
    return s;
  };
  std::string range = "a number from " + text(min) + " to " + text(max);
  return CLI::Validator(
      [min, max, range](const std::string& value) -> std::string {
        char* end = nullptr;
        double v = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < min || v > max)
          return "must be " + range;
        return "";
      },
      "", "number");
}

void add_model_options(CLI::App& sub, ModelOptions& options) {
  sub.add_option("--model", options.model, "CPU model whose PMC catalog to use (ivb, skx, icx, spr, zen3, ...); default: this CPU")
      ->check(non_empty());
  sub.add_option("--perfmon", options.perfmon,
                 "Intel perfmon JSON to use instead of vperf's bundled copy: a file, or a perfmon checkout root with mapfile.csv")
      ->check(non_empty());
}

std::string command_path(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* up = command.get_parent(); up != nullptr && up->get_parent() != nullptr; up = up->get_parent())
    path = up->get_name() + " " + path;
  return path;
}

UserError unknown_option(const CLI::App& command, const std::string& word) {
  const std::string path = command_path(command);
  const std::string help = "run 'vperf help " + path + "' for the options vperf has";
  // Whose option it would be: perf kvm passes its subcommand's options on to that perf command;
  // ftrace's subcommands are trace-cmd's (record, report), not perf's.
  std::string perf_command = path.starts_with("kvm ") ? path.substr(4) : path;
  if (path.starts_with("ftrace ")) perf_command.clear();
  if (is_perf_option(perf_command, word))
    return usage_error("perf " + perf_command + "'s option " + word + " is not supported by vperf yet", help);
  return usage_error("unknown option " + word, help);
}

std::vector<std::string> command_words(const CLI::App& sub, const Invocation& inv) {
  std::vector<std::string> words = sub.remaining();
  // CLI11's prefix_command ends parsing at the first word it does not know, an unknown option
  // too, and "vperf stat -M IPC -- true" would then run "-M". A command never starts with '-'.
  if (!words.empty() && words.front().size() > 1 && words.front().starts_with('-')) {
    throw unknown_option(sub, words.front());
  }
  if (!inv.has_separator) return words;
  // "vperf stat CMD x -- y": the "--" is the command's own.
  if (!words.empty()) words.push_back("--");
  words.insert(words.end(), inv.command_after_separator.begin(), inv.command_after_separator.end());
  if (words.empty())
    throw usage_error("'--' is not followed by a command", "vperf " + sub.get_name() + " -- COMMAND ARGS");
  return words;
}

}  // namespace vperf::cli
