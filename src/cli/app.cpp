#include "cli/app.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/cmd_kvm.h"
#include "cli/command.h"
#include "cli/perf_options.h"
#include "core/error.h"
#include "core/strings.h"

namespace vperf::cli {

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailure = 1;
constexpr const char* kDescription = "vperf: a profiler and PMC workbench for Linux that understands virtual machines";

// An error is one line even when it quotes a word with a newline or another control character
// in it (vperf stat -e $'x\ny'): those are shown escaped, as \n or \xNN.
std::string one_line(const std::string& text) {
  std::string shown;
  for (unsigned char c : text) {
    if (c == '\n') {
      shown += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      shown += "\\x";
      shown += kHex[c >> 4];
      shown += kHex[c & 0xf];
    } else {
      shown += static_cast<char>(c);
    }
  }
  return shown;
}

void print_error(std::ostream& err, const std::string& what, const std::string& hint) {
  if (!printed_as_perf_prints(what)) err << "vperf: error: ";
  err << one_line(what);
  if (!hint.empty()) err << " (hint: " << one_line(hint) << ")";
  err << '\n';
}

// The first subcommand named on the command line, to point parse errors at its help.
std::string subcommand_of(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return sub->get_name();
  return "";
}

// The subcommand that was parsed last ("report" in "vperf kvm report").
const CLI::App& innermost_subcommand(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return *at;
}

// The first word that looks like an option among those the innermost subcommand left over.
std::optional<std::string> first_unknown_option(const CLI::App& app) {
  for (const std::string& word : innermost_subcommand(app).remaining())
    if (word.size() > 1 && word[0] == '-') return word;
  return std::nullopt;
}

void add_help_command(CLI::App& app, Invocation& inv) {
  auto topic = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("help", "Show help for vperf or for one command");
  sub->add_option("command", *topic, "Command to describe, with its subcommands (vperf help ftrace record)");
  sub->callback([&app, &inv, topic] {
    inv.action = [&app, &inv, topic]() -> int {
      if (topic->empty()) {
        *inv.out << app.help();
        return 0;
      }
      // Down the named subcommands: "ftrace record" is record under ftrace.
      const CLI::App* target = &app;
      for (const std::string& word : *topic) {
        const CLI::App* next = nullptr;
        for (const CLI::App* candidate : target->get_subcommands([](const CLI::App*) { return true; }))
          if (candidate->get_name() == word) next = candidate;
        if (next == nullptr) {
          const std::string above = target == &app ? "" : command_path(*target) + " ";
          throw usage_error("no command named '" + above + word + "'",
                            target == &app ? "run 'vperf --help' for the list of commands"
                                           : "run 'vperf help " + command_path(*target) + "' for its subcommands");
        }
        target = next;
      }
      const CLI::App* parent = target->get_parent();
      *inv.out << target->help(parent == &app ? app.get_name() : app.get_name() + " " + command_path(*parent));
      return 0;
    };
  });
}

// perf records /proc/self/exe's target first, then its arguments as given.
std::vector<std::string> whole_command_line(int argc, const char* const* argv) {
  std::error_code error;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  std::vector<std::string> words{error || argc < 1 ? (argc > 0 ? argv[0] : "vperf") : exe.string()};
  words.insert(words.end(), argv + std::min(argc, 1), argv + argc);
  return words;
}

// Every command in the order --help lists them. Building all of them is a tenth of a quick
// command's start (thousands of options), so a command line that names one builds that one.
struct CommandAdder {
  std::string_view name;
  void (*add)(CLI::App&, Invocation&);
};
constexpr CommandAdder kCommands[] = {
    {"list", add_list_command},
    {"encode", add_encode_command},
    {"decode", add_decode_command},
    {"check", add_check_command},
    {"stat", add_stat_command},
    {"record", [](CLI::App& app, Invocation& inv) { add_record_command(app, inv); }},
    {"flamegraph", [](CLI::App& app, Invocation& inv) { add_flamegraph_command(app, inv); }},
    {"report", [](CLI::App& app, Invocation& inv) { add_report_command(app, inv); }},
    {"script", [](CLI::App& app, Invocation& inv) { add_script_command(app, inv); }},
    {"annotate", [](CLI::App& app, Invocation& inv) { add_annotate_command(app, inv); }},
    {"probe", add_probe_command},
    {"ftrace", add_ftrace_command},
    {"msr", add_msr_command},
    {"turbo", add_turbo_command},
    {"kvm", add_kvm_command},
    {"buildid-cache", add_buildid_cache_command},
    {"buildid-list", add_buildid_list_command},
    {"inject", add_inject_command},
    {"evlist", add_evlist_command},
    {"daemon", add_daemon_command},
    {"data", add_data_command},
    {"version", add_version_command},
    {"help", add_help_command},  // lists the others: named, it builds them all
};

void add_commands(CLI::App& app, Invocation& inv, int argc, const char* const* argv) {
  const std::string_view named = argc > 1 ? argv[1] : "";
  if (named == "--version") return;  // answered before any command is looked for
  for (const CommandAdder& command : kCommands)
    if (command.name == named && named != "help") return command.add(app, inv);
  for (const CommandAdder& command : kCommands) command.add(app, inv);
}

// CLI11 would only say "A subcommand is required" for "vperf frobnicate"; name the word.
void reject_unknown_command(CLI::App& app, int argc, const char* const* argv) {
  if (argc <= 1 || argv[1][0] == '-') return;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), argv[1]) != names.end()) return;
  if (is_perf_command(argv[1]))
    throw usage_error(std::string("perf's command '") + argv[1] + "' is not in vperf yet", "run 'vperf --help' for the list of commands");
  std::vector<std::string> close = closest_names(argv[1], names);
  throw usage_error(std::string("unknown command '") + argv[1] + "'",
                    (close.empty() ? std::string() : "did you mean " + join_alternatives(close) + "? ") +
                        "run 'vperf --help' for the list of commands");
}

// "vperf stat [options] -- CMD ARGS": everything after the first "--" is the command, untouched
// by CLI11 (which would read the command's own options and "--" as its own). Returns how many
// words CLI11 parses.
int split_off_command(int argc, const char* const* argv, Invocation& inv) {
  bool runs_a_command = argc > 1 && (std::string_view(argv[1]) == "stat" || std::string_view(argv[1]) == "record" ||
                                     std::string_view(argv[1]) == "kvm" ||  // kvm stat record -- VMM
                                     std::string_view(argv[1]) == "ftrace");
  for (int i = 2; runs_a_command && i < argc; ++i)
    if (std::string_view(argv[i]) == "--") {
      inv.command_after_separator.assign(argv + i + 1, argv + argc);
      inv.has_separator = true;
      return i;
    }
  return argc;
}

// Parses the command line into `inv`. Returns the exit status when parsing alone answers it
// (help, version, a usage error); nullopt when inv.action is to run.
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& v) {
    out << v.what() << '\n';
    return 0;
  } catch (const CLI::ParseError& e) {
    // A subcommand's own --help arrives here too.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      out << (app.get_subcommands().empty() ? app.help() : app.get_subcommands().front()->help());
      return 0;
    }
    std::string sub = subcommand_of(app);
    // An option the command does not have: say whether it is one of perf's.
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      if (std::optional<std::string> option = first_unknown_option(app)) {
        UserError error = unknown_option(innermost_subcommand(app), *option);
        print_error(err, error.what(), error.hint());
        return kExitUsage;
      }
    print_error(err, e.what(), sub.empty() ? "run 'vperf --help'" : "run 'vperf help " + sub + "'");
    return kExitUsage;
  }
  return std::nullopt;
}

// perf's convention in every command: a list option takes one value per occurrence (-e A -e B,
// or -e A,B where it splits). CLI11's default for a list lets one occurrence take every word
// after it, which swallowed the command ("vperf ftrace -e EV sleep 1": no event matches 'sleep').
void one_value_per_occurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->nonpositional() && option->get_expected_max() > 1) option->allow_extra_args(false);
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) one_value_per_occurrence(*sub);
}

// Options named in help as perf names them, "-z, --compression-level" (scripts, perf's own
// tests among them, grep perf's help for an option before they use it).
class PerfStyleFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool positional) const override {
    if (positional) return CLI::Formatter::make_option_name(option, positional);
    std::string names;
    for (const std::string& name : option->get_snames()) names += (names.empty() ? "-" : ", -") + name;
    for (const std::string& name : option->get_lnames()) names += (names.empty() ? "--" : ", --") + name;
    return names;
  }
};

// The app every command line is parsed by; `inv` receives what it chose.
void build_app(CLI::App& app, Invocation& inv, int argc, const char* const* argv) {
  app.formatter(std::make_shared<PerfStyleFormatter>());  // before the commands: they inherit it
  app.set_version_flag("--version", std::string("vperf ") + VPERF_VERSION);
  app.footer("Before the command, as perf takes it: --buildid-dir DIR, the build-id cache (default ~/.debug).\n");
  app.require_subcommand(1);
  app.fallthrough(false);
  add_commands(app, inv, argc, argv);
  one_value_per_occurrence(app);
}

// perf's options before the command: --buildid-dir DIR (or =DIR) is taken out of the command
// line here, so the command is argv[1] for everything below, and so is "record" after
// "stat". Returns the words left.
std::vector<const char*> take_global_options(int argc, const char* const* argv, Invocation& inv) {
  std::vector<const char*> words(argv, argv + argc);
  while (words.size() > 1) {
    const std::string_view word = words[1];
    if (word == "--buildid-dir" && words.size() > 2) {
      inv.buildid_dir = words[2];
      words.erase(words.begin() + 1, words.begin() + 3);
    } else if (word.starts_with("--buildid-dir=")) {
      inv.buildid_dir = std::string(word.substr(std::string_view("--buildid-dir=").size()));
      words.erase(words.begin() + 1);
    } else {
      break;
    }
  }
  // perf stat record takes all of stat's options: "stat record" is stat, recording.
  if (words.size() > 2 && std::string_view(words[1]) == "stat" && std::string_view(words[2]) == "record") {
    inv.stat_record = true;
    words.erase(words.begin() + 2);
  }
  return words;
}

}  // namespace

int run(int argc_given, const char* const* argv_given, std::ostream& out, std::ostream& err) {
  CLI::App app{kDescription, "vperf"};
  Invocation inv;
  inv.out = &out;
  inv.err = &err;
  inv.cmdline = whole_command_line(argc_given, argv_given);
  const std::vector<const char*> words = take_global_options(argc_given, argv_given, inv);
  const int argc = static_cast<int>(words.size());
  const char* const* argv = words.data();
  if (argc_given > 1 && std::string_view(argv_given[1]).starts_with("--buildid-dir") && inv.buildid_dir.empty()) {
    print_error(err, "--buildid-dir needs a directory", "vperf --buildid-dir DIR buildid-cache -l");
    return kExitUsage;
  }
  build_app(app, inv, argc, argv);
  try {
    reject_unknown_command(app, argc, argv);
    if (std::optional<int> answered = parse(app, split_off_command(argc, argv, inv), argv, out, err)) return *answered;
    int status = inv.action ? inv.action() : 0;
    // A full disk or a closed pipe must not pass for success.
    out.flush();
    if (!out) {
      print_error(err, "could not write the output", "check the file system or the pipe that stdout goes to");
      return kExitFailure;
    }
    return status;
  } catch (const UserError& e) {
    print_error(err, e.what(), e.hint());
    return e.exit_code();
  } catch (const std::exception& e) {
    print_error(err, e.what(), "this is a bug in vperf; please report it with the command line");
    return kExitFailure;
  }
}

std::optional<int> parse_only(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{kDescription, "vperf"};
  Invocation inv;
  inv.out = &out;
  inv.err = &err;
  inv.cmdline.assign(argv, argv + argc);  // run() reads /proc/self/exe for the first word
  build_app(app, inv, argc, argv);
  try {
    reject_unknown_command(app, argc, argv);
    return parse(app, split_off_command(argc, argv, inv), argv, out, err);
  } catch (const UserError& e) {
    print_error(err, e.what(), e.hint());
    return e.exit_code();
  }
}

}  // namespace vperf::cli
