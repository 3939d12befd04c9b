#include "session/system_tasks.h"

#include "core/files.h"
#include "core/strings.h"

namespace vperf::session {

namespace {

// The numeric entries of `dir`, or nullopt when it cannot be listed (gone).
std::optional<std::vector<pid_t>> numeric_entries(const std::string& dir) {
  Result<std::vector<std::string>> entries = list_directory(dir);
  if (!entries) return std::nullopt;
  std::vector<pid_t> ids;
  for (const std::string& name : *entries)
    if (auto id = parse_u64(name)) ids.push_back(static_cast<pid_t>(*id));
  return ids;
}

}  // namespace

std::vector<pid_t> all_processes() { return numeric_entries("/proc").value_or(std::vector<pid_t>{}); }

std::optional<std::vector<pid_t>> threads_of_process(pid_t pid) {
  return numeric_entries("/proc/" + std::to_string(pid) + "/task");
}

std::vector<pid_t> all_threads() {
  std::vector<pid_t> threads;
  for (pid_t pid : all_processes())
    if (std::optional<std::vector<pid_t>> of_process = threads_of_process(pid))
      threads.insert(threads.end(), of_process->begin(), of_process->end());
  return threads;
}

std::string task_comm(pid_t tid) {
  Result<std::string> comm = read_first_line("/proc/" + std::to_string(tid) + "/comm");
  return comm ? *comm : std::string();
}

}  // namespace vperf::session
