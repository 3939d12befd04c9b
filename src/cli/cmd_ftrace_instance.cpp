// vperf ftrace start [-t TRACER] [-e EVENT]... [-T FUNC]... [-m SIZE] [--instance NAME] [--dump-on-oops [orig_cpu]]
// vperf ftrace stop|show [--snapshot]|pipe|snapshot|reset [--instance NAME]
// vperf ftrace marker [--instance NAME] TEXT...
// vperf ftrace list -t|-e|-o|-f [FILTER]
// Live tracing in a named instance (default "vperf"; '' the top-level buffer) that stays
// between commands until reset. Wiring only: session/ftrace_session.h does the work.
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/ftrace_options.h"
#include "core/strings.h"
#include "session/ftrace_session.h"

namespace vperf::cli {

namespace {

constexpr const char* kDefaultInstance = "vperf";

void add_instance_option(CLI::App* sub, std::string& instance) {
  sub->add_option("--instance", instance, "The instance's name (default vperf; '': the top level)");
}

void add_start_command(CLI::App* ftrace, Invocation& inv) {
  auto o = std::make_shared<FtraceOptions>();
  auto instance = std::make_shared<std::string>(kDefaultInstance);
  auto dump_on_oops = std::make_shared<std::string>("all");
  tracing::FtraceSettings& s = o->run.settings;
  CLI::App* sub = ftrace->add_subcommand("start", "Start tracing in a named instance that stays until reset (show, pipe, stop)");
  sub->add_option("-t,--tracer", s.tracer, "The tracer");
  add_event_options(sub, s);
  sub->add_option("-T,--trace-funcs", s.function_filters, "Trace only functions matching")->take_all();
  sub->add_option("-m,--buffer-size", o->buffer_size, "Ring buffer size per CPU");
  sub->add_option("--instance", *instance, "The instance's name; '' (empty): the top-level buffer, given back by reset")
      ->check([](const std::string& name) { return name.find('/') == std::string::npos ? "" : "an instance name has no '/'"; });
  sub->add_option("--dump-on-oops", *dump_on_oops,
                  "Also dump this buffer to the console on an oops or panic (kernel.ftrace_dump_on_oops): all CPUs, or orig_cpu")
      ->expected(0, 1)
      ->check(CLI::IsMember({"all", "orig_cpu"}));
  sub->callback([&inv, o, instance, dump_on_oops, sub] {
    inv.action = [&inv, o, instance, dump_on_oops, sub] {
      tracing::FtraceSettings settings = o->settings(false);
      if (settings.tracer.empty() && settings.events.empty())
        throw usage_error("nothing to start", "give a tracer (-t function) or events (-e SYSTEM:EVENT)");
      std::optional<tracing::OopsDump> dump;
      if (sub->count("--dump-on-oops") > 0) dump = *dump_on_oops == "orig_cpu" ? tracing::OopsDump::oops_cpu : tracing::OopsDump::all_cpus;
      checked(session::ftrace_start(*instance, settings, dump, *inv.err));
      return 0;
    };
  });
}

// A command over an instance that takes nothing but its name: `act` runs it.
void add_instance_command(CLI::App* ftrace, Invocation& inv, const char* name, const char* help,
                          std::function<void(const std::string& instance, std::ostream& out)> act,
                          std::function<void(CLI::App*)> more_options = {}) {
  auto instance = std::make_shared<std::string>(kDefaultInstance);
  CLI::App* sub = ftrace->add_subcommand(name, help);
  add_instance_option(sub, *instance);
  if (more_options) more_options(sub);
  sub->callback([&inv, instance, act] {
    inv.action = [&inv, instance, act] {
      act(*instance, *inv.out);
      return 0;
    };
  });
}

void add_show_command(CLI::App* ftrace, Invocation& inv) {
  auto snapshot = std::make_shared<bool>(false);
  add_instance_command(
      ftrace, inv, "show", "Print the instance's trace (or --snapshot)",
      [snapshot](const std::string& instance, std::ostream& out) { out << checked(session::ftrace_show(instance, *snapshot)); },
      [snapshot](CLI::App* sub) { sub->add_flag("--snapshot", *snapshot, "Print the snapshot buffer instead"); });
}

void add_marker_command(CLI::App* ftrace, Invocation& inv) {
  auto instance = std::make_shared<std::string>(kDefaultInstance);
  auto text = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = ftrace->add_subcommand("marker", "Write TEXT into the trace (trace_marker)");
  sub->add_option("--instance", *instance, "The instance (default vperf; empty: the top level)");
  sub->add_option("text", *text, "The text")->required();
  sub->callback([&inv, instance, text] {
    inv.action = [instance, text] {
      checked(session::ftrace_marker(*instance, join(*text, " ")));
      return 0;
    };
  });
}

void add_list_command(CLI::App* ftrace, Invocation& inv) {
  auto listing = std::make_shared<std::optional<session::FtraceListing>>();
  auto filter = std::make_shared<std::string>();
  CLI::App* sub = ftrace->add_subcommand("list", "List tracers (-t), events (-e), trace options (-o) or traceable functions (-f)");
  sub->add_flag_callback("-t", [listing] { *listing = session::FtraceListing::tracers; }, "Tracers");
  sub->add_flag_callback("-e", [listing] { *listing = session::FtraceListing::events; }, "Events");
  sub->add_flag_callback("-o", [listing] { *listing = session::FtraceListing::options; }, "Trace options (noNAME: off)");
  sub->add_flag_callback("-f", [listing] { *listing = session::FtraceListing::functions; }, "Traceable functions");
  sub->add_option("filter", *filter, "A glob the names must match");
  sub->callback([&inv, listing, filter] {
    inv.action = [&inv, listing, filter] {
      if (!*listing) throw usage_error("list what?", "give -t (tracers), -e (events), -o (options) or -f (functions)");
      for (const std::string& line : checked(session::ftrace_list(**listing, *filter))) *inv.out << line << "\n";
      return 0;
    };
  });
}

}  // namespace

void add_ftrace_instance_commands(CLI::App* ftrace, Invocation& inv) {
  add_start_command(ftrace, inv);
  add_instance_command(ftrace, inv, "stop", "Stop tracing in the instance (its buffer stays readable)",
                       [](const std::string& instance, std::ostream&) { checked(session::ftrace_stop(instance)); });
  add_show_command(ftrace, inv);
  add_instance_command(ftrace, inv, "pipe", "Stream the instance's trace_pipe until ^C",
                       [](const std::string& instance, std::ostream& out) {
                         checked(session::ftrace_pipe(instance, [&out](std::string_view line) { out << line << '\n' << std::flush; }));
                       });
  add_instance_command(ftrace, inv, "snapshot", "Take a snapshot of the instance's buffer and print it",
                       [](const std::string& instance, std::ostream& out) {
                         checked(session::ftrace_take_snapshot(instance));
                         out << checked(session::ftrace_show(instance, true));
                       });
  add_instance_command(ftrace, inv, "reset",
                       "Remove the instance (or give the top level back what start changed) and instances left by killed vperf runs",
                       [](const std::string& instance, std::ostream& out) {
                         for (const std::string& removed : checked(session::ftrace_reset(instance)))
                           out << "removed instance " << removed << "\n";
                       });
  add_marker_command(ftrace, inv);
  add_list_command(ftrace, inv);
}

}  // namespace vperf::cli
