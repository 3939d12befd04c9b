#pragma once
// perf daemon: recording sessions kept running in the background, as configured in a perf
// config file, and driven from the command line:
//
//   [daemon]
//   base=/opt/perfdata
//   [session-cycles]
//   run = -m 10M -e cycles --overwrite --switch-output -a
//
// `vperf daemon start` forks a daemon that owns BASE (BASE/lock holds its pid under an
// exclusive flock: a second daemon over the same base fails with perf's "failed: another ...
// owns BASE"), logs to BASE/output and answers commands on the unix socket BASE/control. Each
// session runs `vperf record --control=fifo:control,ack RUN...` in BASE/session-NAME (its
// perf.data, its messages in output there). The daemon follows the config file: a session
// whose run line changed is ended and started again, a removed one ended, a new one started.
// A session that ends (its command finished) is not restarted, as perf's are not.
//
// Clients (`vperf daemon`, `ping`, `signal`, `stop`) send one line over the socket and print
// what the daemon answers: the list (perf's layout, or SEP-separated fields with -x), "OK"
// or "FAIL" per session for ping (the daemon writes "ping" into the session's control fifo
// and waits for its ack), the SIGUSR2 sent per session for signal (--switch-output's next
// file), and stop ends every session, then the daemon.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::session {

struct DaemonSessionConfig {
  std::string name;  // from [session-NAME]
  std::string run;   // record's arguments, split at blanks
  bool operator==(const DaemonSessionConfig&) const = default;
};

struct DaemonConfig {
  std::string base;  // [daemon] base=
  std::vector<DaemonSessionConfig> sessions;
};

// The daemon's part of a perf config file (other sections are other commands' and are
// skipped). Errors name the line.
Result<DaemonConfig> parse_daemon_config(std::string_view text);

// Reads and parses `path`; `base_override` (--base) replaces the file's base.
Result<DaemonConfig> load_daemon_config(const std::string& path, const std::string& base_override);

struct DaemonStart {
  std::string config_path;      // absolute: the daemon follows this file
  std::string base_override;    // --base
  std::string vperf;            // the executable sessions run (this one)
  bool foreground = false;      // -f: stay attached (logs still go to BASE/output)
};

// Starts the daemon (in the background unless `foreground`): returns once it owns BASE and
// listens, or with why it cannot. "failed: another vperf daemon (pid N) owns BASE" when one
// already does.
Result<void> start_daemon(const DaemonStart& start);

// Client commands: the daemon's answer, to print as it is.
struct DaemonQuery {
  std::string base;
  enum class Command { list, ping, signal, stop } command = Command::list;
  std::string session;     // ping/signal: one session, empty for all
  std::string separator;   // list: -x SEP; empty for perf's layout
  bool verbose = false;    // list: -v
};
Result<std::string> query_daemon(const DaemonQuery& query);

}  // namespace vperf::session
