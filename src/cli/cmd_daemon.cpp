// vperf daemon: perf daemon's background recording sessions (session/daemon.h).
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/command.h"
#include "session/daemon.h"

namespace vperf::cli {

namespace {

struct DaemonOptions {
  std::string action;  // start, stop, signal, ping; empty: list
  std::string config;
  std::string base;
  std::string separator;
  std::string session;
  bool verbose = false;
  bool foreground = false;
};

// perf's default config file: ~/.perfconfig.
std::string default_config() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.perfconfig";
}

}  // namespace

void add_daemon_command(CLI::App& app, Invocation& inv) {
  auto o = std::make_shared<DaemonOptions>();
  CLI::App* sub = app.add_subcommand("daemon", "Recording sessions kept running in the background from a config file, as perf daemon");
  sub->add_option("action", o->action, "start, stop, signal or ping; none lists the daemon and its sessions")
      ->check(CLI::IsMember({"start", "stop", "signal", "ping"}));
  sub->add_option("--config", o->config, "The config file ([daemon] base=DIR, [session-NAME] run=RECORD ARGS); default ~/.perfconfig")
      ->check(non_empty());
  sub->add_option("--base", o->base, "The daemon's directory, instead of the config's base")->check(non_empty());
  sub->add_option("-x,--field-separator", o->separator, "List with fields separated by this text")->check(non_empty());
  sub->add_option("--session", o->session, "ping, signal: only this session")->check(non_empty());
  sub->add_flag("-v,--verbose", o->verbose, "List each one's files and how long it has been up");
  sub->add_flag("-f,--foreground", o->foreground, "start: stay in the foreground");
  sub->callback([o, &inv] {
    inv.action = [o, &inv] {
      std::error_code ec;
      const std::string config = std::filesystem::absolute(o->config.empty() ? default_config() : o->config, ec).string();
      if (o->action == "start") {
        session::DaemonStart start{config, o->base, std::filesystem::read_symlink("/proc/self/exe", ec).string(), o->foreground};
        if (start.vperf.empty()) throw UserError("cannot find vperf's own executable (/proc/self/exe)", "is /proc mounted?");
        checked(session::start_daemon(start));
        return 0;
      }
      Result<session::DaemonConfig> loaded = session::load_daemon_config(config, o->base);
      if (!loaded) throw UserError(loaded.error().message, "give the daemon's config with --config FILE (or its directory with --base)");
      session::DaemonQuery query;
      query.base = loaded->base;
      query.command = o->action == "stop"     ? session::DaemonQuery::Command::stop
                      : o->action == "signal" ? session::DaemonQuery::Command::signal
                      : o->action == "ping"   ? session::DaemonQuery::Command::ping
                                              : session::DaemonQuery::Command::list;
      query.session = o->session;
      query.separator = o->separator;
      query.verbose = o->verbose;
      *inv.out << checked(session::query_daemon(query));
      return 0;
    };
  });
}

}  // namespace vperf::cli
