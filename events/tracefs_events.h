#pragma once
// The tracepoint catalog, read from a tracefs root:
//   <root>/events/<subsystem>/<event>/id       the perf_event_attr.config for PERF_TYPE_TRACEPOINT
//   <root>/events/<subsystem>/<event>/format   field layout of the event's raw record
// Only event directories that have an id file are tracepoints (perf skips the rest, such as
// events/<subsystem>/enable). The root is a parameter so that tests can use a fake tree;
// find_tracefs_root() finds the real one.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::events {

struct Tracepoint {
  std::string subsystem;       // "sched"
  std::string event;           // "sched_switch"
  std::string dir;             // <root>/events/<subsystem>/<event> (a string: cheaper to build 2,000 times than a path)
  std::optional<uint64_t> preset_id;  // set for catalogs built in memory; else id() reads the file

  std::string name() const { return subsystem + ":" + event; }  // "sched:sched_switch"
  // The perf_event_attr.config: contents of <dir>/id. Read on demand, because a catalog of
  // 2,000+ tracepoints is loaded by every command but only the used ones need their ids.
  Result<uint64_t> id() const;
  std::filesystem::path format_path() const { return std::filesystem::path(dir) / "format"; }
};

// Where tracefs is: the first tracefs mount listed in `proc_mounts` (format of /proc/mounts:
// "DEVICE MOUNTPOINT TYPE OPTIONS 0 0", spaces in paths written as \040), else
// /sys/kernel/tracing, else /sys/kernel/debug/tracing, whichever has an events/ directory.
// The error's hint-worthy message says tracefs is not mounted.
Result<std::filesystem::path> find_tracefs_root(const std::filesystem::path& proc_mounts = "/proc/mounts");

class TracepointCatalog {
 public:
  TracepointCatalog() = default;
  // Sorted by subsystem, then event, in byte order (perf list's order).
  explicit TracepointCatalog(std::vector<Tracepoint> tracepoints);

  // Walks <root>/events/*/*: every event directory (the plain files beside them, such as
  // "enable" and "filter", are not events). An error if <root>/events cannot be listed.
  // Ids are read later, by Tracepoint::id(); the walk itself stats nothing.
  static Result<TracepointCatalog> load(const std::filesystem::path& root);

  const std::vector<Tracepoint>& all() const { return tracepoints_; }
  // "sched:sched_switch" exactly, or nullptr.
  const Tracepoint* find(std::string_view name) const;
  // Every tracepoint whose "subsystem:event" matches the glob ("sched:*", "syscalls:sys_enter_*").
  std::vector<const Tracepoint*> match(std::string_view pattern) const;

 private:
  std::vector<Tracepoint> tracepoints_;
};

}  // namespace vperf::events
