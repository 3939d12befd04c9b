#include "host/kernel_settings.h"

#include <fstream>

#include "core/files.h"
#include "core/strings.h"
#include "tracing/tracefs_events.h"

namespace vperf::host {

namespace fs = std::filesystem;

namespace {

constexpr int kKallsymsLinesToCheck = 200;

void read_int_setting(const fs::path& path, std::optional<int>& value, std::string& error) {
  auto line = read_first_line(path);
  if (!line) {
    error = line.error().describe();
    return;
  }
  std::string_view text = trim(*line);
  bool negative = text.starts_with('-');  // perf_event_paranoid may be -1
  auto magnitude = parse_u64_base(negative ? text.substr(1) : text, 10);
  if (!magnitude) {
    error = path.string() + ": not a number: '" + std::string(text) + "'";
    return;
  }
  value = negative ? -static_cast<int>(*magnitude) : static_cast<int>(*magnitude);
}

// kptr_restrict and perf_event_paranoid decide together whether %pK prints zeros; reading the
// file is the only way to know what this process gets.
void probe_kallsyms(const fs::path& path, KernelSettings& settings) {
  std::ifstream in(path);
  if (!in) {
    settings.kallsyms_error = Error::from_errno("open " + path.string()).describe();
    return;
  }
  std::string line;
  int lines = 0;
  bool nonzero = false;
  while (lines < kKallsymsLinesToCheck && std::getline(in, line)) {
    ++lines;
    std::string_view addr = std::string_view(line).substr(0, line.find(' '));
    auto v = parse_u64_base(addr, 16);
    if (v && *v != 0) {
      nonzero = true;
      break;
    }
  }
  if (lines == 0) {
    settings.kallsyms_error = path.string() + " is empty";
    return;
  }
  settings.kallsyms_addresses_visible = nonzero;
}

bool filesystem_supported(const fs::path& proc_filesystems, std::string_view name) {
  auto text = read_file(proc_filesystems);
  if (!text) return false;
  for (std::string_view line : split(*text, '\n')) {
    auto fields = split(trim(line), '\t');
    if (!fields.empty() && trim(fields.back()) == name) return true;
  }
  return false;
}

}  // namespace

KernelSettings probe_kernel_settings(const HostPaths& paths) {
  KernelSettings s;
  read_int_setting(paths.proc / "sys/kernel/perf_event_paranoid", s.perf_event_paranoid, s.perf_event_paranoid_error);
  read_int_setting(paths.proc / "sys/kernel/kptr_restrict", s.kptr_restrict, s.kptr_restrict_error);
  probe_kallsyms(paths.proc / "kallsyms", s);

  TracefsState& t = s.tracefs;
  if (auto mounts = read_file(paths.proc / "mounts")) t.mount_point = tracing::tracefs_mount_in(*mounts);
  if (t.mount_point) {
    const fs::path& m = *t.mount_point;
    std::error_code ec;
    t.events_dir = fs::is_directory(m / "events", ec);
    t.uprobe_events = fs::exists(m / "uprobe_events", ec);
    t.kprobe_events = fs::exists(m / "kprobe_events", ec);
    if (auto tracers = read_first_line(m / "available_tracers")) {
      for (std::string_view name : split(trim(*tracers), ' '))
        if (!name.empty()) t.available_tracers.emplace_back(name);
    }
  } else {
    std::error_code ec;
    t.mountable = fs::is_directory(paths.tracefs_default, ec) && filesystem_supported(paths.proc / "filesystems", "tracefs");
  }
  return s;
}

}  // namespace vperf::host
