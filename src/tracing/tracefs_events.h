#pragma once
// The tracepoint catalog, read from a tracefs root:
//   <root>/events/<subsystem>/<event>/id       the perf_event_attr.config for PERF_TYPE_TRACEPOINT
//   <root>/events/<subsystem>/<event>/format   field layout of the event's raw record
// Only event directories that have an id file are tracepoints (perf skips the rest, such as
// events/<subsystem>/enable). The root is a parameter so that tests can use a fake tree;
// find_tracefs_root() finds the real one.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::tracing {

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
// The tracefs mount point in a /proc/mounts text: a tracefs mount, else <debugfs mount>/tracing
// when it has events/ (kernels before 4.1). Mount paths are unescaped ("\040" is a space).
std::optional<std::filesystem::path> tracefs_mount_in(std::string_view proc_mounts);

Result<std::filesystem::path> find_tracefs_root(const std::filesystem::path& proc_mounts = "/proc/mounts");

// Subsystems are listed when the catalog loads; a subsystem's events are read the first time
// something asks for them (find, match, all). On tracefs every directory lookup costs, and a
// command that uses "sched:sched_switch" should not walk 2,000 events to find it.
// The caches make const methods write: a catalog is not for concurrent use.
class TracepointCatalog {
 public:
  TracepointCatalog() = default;
  // A catalog held in memory (tests, fuzzing): every subsystem already loaded.
  explicit TracepointCatalog(std::vector<Tracepoint> tracepoints);

  // Lists <root>/events/*: an error if that cannot be listed. A subsystem's events are the
  // directories under it that have an id file (perf's rule: ftrace's internal events such as
  // ftrace:function have none and cannot be opened); plain files such as "enable" are not events.
  static Result<TracepointCatalog> load(const std::filesystem::path& root);

  // Every tracepoint, sorted by whole name in byte order (perf list's order).
  const std::vector<Tracepoint>& all() const;
  // "sched:sched_switch" exactly, or nullptr.
  const Tracepoint* find(std::string_view name) const;
  // Every tracepoint whose "subsystem:event" matches the glob ("sched:*", "syscalls:sys_enter_*").
  // Only the subsystems the part before ':' can match are read.
  std::vector<const Tracepoint*> match(std::string_view pattern) const;

 private:
  const std::vector<Tracepoint>& events_of(const std::string& subsystem) const;

  std::optional<std::string> events_dir_;  // <root>/events; unset for in-memory catalogs
  std::vector<std::string> subsystems_;     // sorted
  mutable std::map<std::string, std::vector<Tracepoint>, std::less<>> loaded_;  // subsystem -> sorted events
  mutable std::optional<std::vector<Tracepoint>> all_;
};

}  // namespace vperf::tracing
