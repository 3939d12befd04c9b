#pragma once
// vperf stat [-e EVENTS]... [-d[d[d]]] [-a | -C CPUS | -p PIDS | -t TIDS] [-G CGROUP]
//            [-A | --per-core | --per-die | --per-socket] [-r N] [-I MS [--interval-count N]]
//            [-x SEP | --json] [-o FILE] [--timeout MS] [--] [COMMAND [ARGS...]]
//
// Counts events the way perf stat 6.1 does and prints what it prints (src/stat/stat_printer.h),
// on stderr like perf (the workload keeps stdout), or into -o FILE.
//
// Run loop, per run (-r N):
//   a COMMAND is forked, its counters opened on it with enable_on_exec (system-wide counters
//   are enabled just before it execs), and counting ends when it exits; SIGINT/SIGTERM/SIGHUP
//   sent to vperf are forwarded to it, and the counts are still printed;
//   without a COMMAND (-a, -C, -p, -t) counting ends on SIGINT/SIGTERM/SIGHUP, --timeout,
//   --interval-count, or when every -p/-t task has ended.
//   --timeout MS and --interval-count N end a COMMAND with SIGTERM (perf 6.1 waits for the
//   command after --interval-count; vperf stops it, as the user asked for N intervals).
// Exit status: the command's (128 + signal when a signal ended it), else 0.
#include <ostream>
#include <string>
#include <vector>

#include "session/stat_run.h"

namespace vperf::cli {

// The options bind straight onto the request the session runs.
using StatOptions = session::StatRequest;

int run_stat(const StatOptions& options, std::ostream& err);

}  // namespace vperf::cli
