#include "support/capability.h"

#include <linux/perf_event.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace vperf::test {

bool running_as_root() { return geteuid() == 0; }

// Asked of the kernel directly, not through vperf's opener: a broken opener must fail the tests
// that need a PMU, not make them skip.
bool has_hardware_pmu() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
}

bool has_tracefs() {
  namespace fs = std::filesystem;
  if (fs::exists("/sys/kernel/tracing/events")) return true;
  if (!running_as_root()) return false;
  // Tests that need tracefs may mount it, as the README tells users to do.
  ::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr);
  return fs::exists("/sys/kernel/tracing/events");
}

bool has_kprobes() { return has_tracefs() && std::filesystem::exists("/sys/kernel/tracing/kprobe_events"); }
bool has_uprobes() { return has_tracefs() && std::filesystem::exists("/sys/kernel/tracing/uprobe_events"); }

bool maps_vdso() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.ends_with(" [vdso]")) return true;
  return false;
}

bool kallsyms_shows_addresses() {
  std::ifstream kallsyms("/proc/kallsyms");
  std::string address;
  if (!(kallsyms >> address)) return false;
  return address.find_first_not_of('0') != std::string::npos;
}

std::string flamegraph_dir() {
  const char* chosen = std::getenv("FLAMEGRAPH_DIR");
  // Unset or empty: the pinned copy beside the project.
  const std::filesystem::path dir = chosen && *chosen ? chosen : VPERF_PINNED_FLAMEGRAPH_DIR;
  return std::filesystem::exists(dir / "flamegraph.pl") ? dir.string() : "";
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

}  // namespace vperf::test
