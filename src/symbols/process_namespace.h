#pragma once
// perf's nsinfo: a process in a container sees its own files. When a recorded process still
// runs in another mount namespace than vperf's, the files its MMAP records name are that
// namespace's, reached from here through PROC/PID/root; its JIT map perf-PID.map is in that
// namespace's /tmp, named by the pid the process has inside its pid namespace (the last NSpid
// of PROC/PID/status), as the JIT wrote it.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace vperf::symbols {

struct MountNamespace {
  std::string id;               // "mnt:[4026532290]", as PROC/PID/ns/mnt links to it
  std::filesystem::path root;   // PROC/PID/root
  pid_t pid_inside = -1;        // the process's pid in its own pid namespace
};

// The mount namespace of live process `pid` when it is not `own_id`'s (vperf's, read from
// PROC/self/ns/mnt by the caller once); nullopt when it is the same, or the process is gone or
// unreadable (its files are then looked for here, as recorded).
std::optional<MountNamespace> foreign_mount_namespace(const std::filesystem::path& proc, pid_t pid, const std::string& own_id);

// What PROC/self/ns/mnt links to ("" when unreadable: no namespace is then foreign).
std::string own_mount_namespace(const std::filesystem::path& proc);

// The last NSpid field of a PROC/PID/status text (the innermost namespace's pid), else nullopt.
std::optional<pid_t> innermost_pid(std::string_view status);

// Processes' foreign mount namespaces, each process looked up once (and PROC/self/ns/mnt once,
// when the first is asked for). An empty `proc` (guests, tests, a recording read elsewhere)
// knows none.
class MountNamespaces {
 public:
  explicit MountNamespaces(std::filesystem::path proc) : proc_(std::move(proc)) {}
  // nullptr when `pid` runs in vperf's own namespace, is gone, or `proc` is empty.
  const MountNamespace* of(pid_t pid);

 private:
  std::filesystem::path proc_;
  std::optional<std::string> own_;
  std::unordered_map<pid_t, std::optional<MountNamespace>> known_;
};

}  // namespace vperf::symbols
