#include "cli/target_options.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/cpu_set.h"
#include "core/error.h"
#include "core/files.h"
#include "core/strings.h"
#include "session/run_loop.h"
#include "session/system_tasks.h"

namespace vperf::cli {

namespace {

// -p follows every thread of each process (perf counts them all and sums them).
std::vector<pid_t> threads_of(const std::vector<pid_t>& pids) {
  std::vector<pid_t> threads;
  for (pid_t pid : pids) {
    std::optional<std::vector<pid_t>> of_process = session::threads_of_process(pid);
    if (!of_process) throw UserError("no process with PID " + std::to_string(pid), "check the PID with ps; it may have ended");
    threads.insert(threads.end(), of_process->begin(), of_process->end());
  }
  return threads;
}

}  // namespace

std::vector<pid_t> parse_pid_list(const std::string& text, const char* option) {
  Result<std::vector<pid_t>> pids = parse_task_ids(text, option);
  if (!pids) throw usage_error(pids.error().message, "give process or thread IDs: 1234,5678");
  return *pids;
}

TaskTargets resolve_targets(bool system_wide, const std::string& cpus, const std::string& pids, const std::string& tids) {
  TaskTargets targets;
  if (!cpus.empty()) {
    Result<std::vector<int>> listed = parse_cpu_list(cpus);
    if (!listed) throw usage_error("bad -C value '" + cpus + "': " + listed.error().message, "give CPUs as 0-3,8");
    Result<std::vector<int>> online = online_cpus();
    for (int cpu : *listed)
      if (online && std::find(online->begin(), online->end(), cpu) == online->end())
        throw usage_error("CPU " + std::to_string(cpu) + " is not online", "online CPUs: " + format_cpu_list(*online));
    targets.cpus = *listed;
  } else if (system_wide) {
    Result<std::vector<int>> online = online_cpus();
    if (!online) throw UserError("cannot list the online CPUs: " + online.error().describe(), "is /sys mounted?");
    targets.cpus = *online;
  }
  if (!pids.empty()) targets.threads = threads_of(parse_pid_list(pids, "-p"));
  if (!tids.empty()) {
    targets.threads = parse_pid_list(tids, "-t");
    for (pid_t tid : targets.threads)
      if (!session::task_alive(tid)) throw UserError("no thread with TID " + std::to_string(tid), "check the TID with ps -L");
  }
  return targets;
}

}  // namespace vperf::cli
