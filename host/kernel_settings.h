#pragma once
// The kernel knobs and tracing facilities that decide what a profiler may do, read without
// changing anything: vperf check says how to mount tracefs or lower a sysctl, it never does.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "host/host_paths.h"

namespace vperf::host {

struct TracefsState {
  std::optional<std::filesystem::path> mount_point;  // from /proc/mounts (tracefs, or debugfs/tracing)
  bool mountable = false;      // not mounted, but the kernel has tracefs and its directory exists
  bool events_dir = false;     // <mount>/events: tracepoints
  bool uprobe_events = false;  // <mount>/uprobe_events: CONFIG_UPROBE_EVENTS
  bool kprobe_events = false;  // <mount>/kprobe_events: CONFIG_KPROBE_EVENTS
  std::vector<std::string> available_tracers;
};

struct KernelSettings {
  std::optional<int> perf_event_paranoid;  // nullopt: unreadable (see *_error)
  std::string perf_event_paranoid_error;
  std::optional<int> kptr_restrict;
  std::string kptr_restrict_error;
  // Whether /proc/kallsyms shows this process real (non-zero) addresses.
  std::optional<bool> kallsyms_addresses_visible;
  std::string kallsyms_error;
  TracefsState tracefs;
};

KernelSettings probe_kernel_settings(const HostPaths& paths);

}  // namespace vperf::host
