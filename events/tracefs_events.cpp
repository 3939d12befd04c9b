#include "events/tracefs_events.h"

#include <algorithm>
#include <sstream>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::events {

namespace {

// /proc/mounts escapes space, tab, newline and backslash as three octal digits.
std::string unescape_mount_path(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      auto code = parse_u64_base(text.substr(i + 1, 3), 8);
      if (code && *code < 256) {
        out += static_cast<char>(*code);
        i += 3;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

bool has_events_dir(const std::filesystem::path& root) {
  std::error_code ec;
  return std::filesystem::is_directory(root / "events", ec);
}

}  // namespace

Result<std::filesystem::path> find_tracefs_root(const std::filesystem::path& proc_mounts) {
  if (auto mounts = read_file(proc_mounts)) {
    std::istringstream lines(*mounts);
    std::string device, mount_point, type;
    std::string rest;
    while (lines >> device >> mount_point >> type) {
      std::getline(lines, rest);
      if (type == "tracefs") return std::filesystem::path(unescape_mount_path(mount_point));
    }
  }
  for (const char* candidate : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (has_events_dir(candidate)) return std::filesystem::path(candidate);
  }
  return Error{"tracefs is not mounted (not in " + proc_mounts.string() +
               ", no /sys/kernel/tracing/events or /sys/kernel/debug/tracing/events)"};
}

TracepointCatalog::TracepointCatalog(std::vector<Tracepoint> tracepoints) : tracepoints_(std::move(tracepoints)) {
  std::sort(tracepoints_.begin(), tracepoints_.end(), [](const Tracepoint& a, const Tracepoint& b) {
    return a.subsystem != b.subsystem ? a.subsystem < b.subsystem : a.event < b.event;
  });
}

Result<TracepointCatalog> TracepointCatalog::load(const std::filesystem::path& root) {
  const std::filesystem::path events_dir = root / "events";
  auto subsystems = list_directory(events_dir);
  if (!subsystems) return subsystems.error();
  std::vector<Tracepoint> tracepoints;
  for (const std::string& subsystem : *subsystems) {
    auto events = list_directory(events_dir / subsystem);
    if (!events) continue;  // a plain file such as events/enable
    for (const std::string& event : *events) {
      const std::filesystem::path dir = events_dir / subsystem / event;
      auto id_text = read_first_line(dir / "id");
      if (!id_text) continue;
      auto id = parse_u64(trim(*id_text));
      if (!id) continue;
      tracepoints.push_back(Tracepoint{subsystem, event, *id, dir / "format"});
    }
  }
  return TracepointCatalog(std::move(tracepoints));
}

const Tracepoint* TracepointCatalog::find(std::string_view name) const {
  size_t colon = name.find(':');
  if (colon == std::string_view::npos) return nullptr;
  std::string_view subsystem = name.substr(0, colon), event = name.substr(colon + 1);
  auto it = std::lower_bound(tracepoints_.begin(), tracepoints_.end(), std::pair{subsystem, event},
                             [](const Tracepoint& t, const std::pair<std::string_view, std::string_view>& key) {
                               return t.subsystem != key.first ? t.subsystem < key.first : t.event < key.second;
                             });
  if (it == tracepoints_.end() || it->subsystem != subsystem || it->event != event) return nullptr;
  return &*it;
}

std::vector<const Tracepoint*> TracepointCatalog::match(std::string_view pattern) const {
  std::vector<const Tracepoint*> out;
  for (const Tracepoint& tp : tracepoints_)
    if (glob_match(pattern, tp.name())) out.push_back(&tp);
  return out;
}

}  // namespace vperf::events
