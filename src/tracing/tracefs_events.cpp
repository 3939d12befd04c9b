#include "tracing/tracefs_events.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::tracing {

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

std::optional<std::filesystem::path> tracefs_mount_in(std::string_view proc_mounts) {
  std::optional<std::filesystem::path> debugfs_tracing;
  std::istringstream lines{std::string(proc_mounts)};
  std::string device, mount_point, type;
  std::string rest;
  while (lines >> device >> mount_point >> type) {
    std::getline(lines, rest);
    if (type == "tracefs") return std::filesystem::path(unescape_mount_path(mount_point));
    if (type == "debugfs" && !debugfs_tracing)
      debugfs_tracing = std::filesystem::path(unescape_mount_path(mount_point)) / "tracing";
  }
  if (debugfs_tracing && has_events_dir(*debugfs_tracing)) return debugfs_tracing;
  return std::nullopt;
}

Result<std::filesystem::path> find_tracefs_root(const std::filesystem::path& proc_mounts) {
  if (auto mounts = read_file(proc_mounts))
    if (auto mount = tracefs_mount_in(*mounts)) return *mount;
  for (const char* candidate : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (has_events_dir(candidate)) return std::filesystem::path(candidate);
  }
  return Error{"tracefs is not mounted (not in " + proc_mounts.string() +
               ", no /sys/kernel/tracing/events or /sys/kernel/debug/tracing/events)"};
}

TracepointCatalog::TracepointCatalog(std::vector<Tracepoint> tracepoints) {
  for (Tracepoint& tp : tracepoints) loaded_[tp.subsystem].push_back(std::move(tp));
  for (auto& [name, events] : loaded_) {
    subsystems_.push_back(name);
    std::sort(events.begin(), events.end(), [](const Tracepoint& x, const Tracepoint& y) { return x.event < y.event; });
  }
}

Result<uint64_t> Tracepoint::id() const {
  if (preset_id) return *preset_id;
  auto text = read_first_line(std::filesystem::path(dir) / "id");
  if (!text) return text.error();
  auto id = parse_u64(trim(*text));
  if (!id) return Error{"tracepoint " + name() + ": id file holds '" + *text + "', not a number"};
  return *id;
}

namespace {

// Names of the subdirectories of `dir`, from the directory entries' own type (no stat per entry).
std::vector<std::string> subdirectories(const std::string& dir, std::error_code& ec) {
  std::vector<std::string> names;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) names.push_back(it->path().filename().string());
  return names;
}

}  // namespace

Result<TracepointCatalog> TracepointCatalog::load(const std::filesystem::path& root) {
  TracepointCatalog catalog;
  catalog.events_dir_ = (root / "events").string();
  std::error_code ec;
  catalog.subsystems_ = subdirectories(*catalog.events_dir_, ec);
  if (ec) return Error{"list " + *catalog.events_dir_, ec.value()};
  std::sort(catalog.subsystems_.begin(), catalog.subsystems_.end());
  return catalog;
}

const std::vector<Tracepoint>& TracepointCatalog::events_of(const std::string& subsystem) const {
  auto it = loaded_.find(subsystem);
  if (it != loaded_.end()) return it->second;
  std::vector<Tracepoint> events;
  if (events_dir_) {
    const std::string subsystem_dir = *events_dir_ + "/" + subsystem;
    std::error_code ec;  // an unreadable subsystem has no events, as perf skips it
    for (std::string& event : subdirectories(subsystem_dir, ec)) {
      std::string dir = subsystem_dir + "/" + event;
      if (::access((dir + "/id").c_str(), F_OK) != 0) continue;
      events.push_back(Tracepoint{subsystem, std::move(event), std::move(dir), std::nullopt});
    }
    std::sort(events.begin(), events.end(), [](const Tracepoint& x, const Tracepoint& y) { return x.event < y.event; });
  }
  return loaded_.emplace(subsystem, std::move(events)).first->second;
}

const std::vector<Tracepoint>& TracepointCatalog::all() const {
  if (!all_) {
    all_.emplace();
    for (const std::string& subsystem : subsystems_) {
      const std::vector<Tracepoint>& events = events_of(subsystem);
      all_->insert(all_->end(), events.begin(), events.end());
    }
    // perf sorts whole names: "fib6:x" before "fib:x", since '6' < ':'.
    std::sort(all_->begin(), all_->end(), [](const Tracepoint& x, const Tracepoint& y) { return x.name() < y.name(); });
  }
  return *all_;
}

const Tracepoint* TracepointCatalog::find(std::string_view name) const {
  size_t colon = name.find(':');
  if (colon == std::string_view::npos) return nullptr;
  std::string_view subsystem = name.substr(0, colon), event = name.substr(colon + 1);
  if (!std::binary_search(subsystems_.begin(), subsystems_.end(), subsystem)) return nullptr;
  const std::vector<Tracepoint>& events = events_of(std::string(subsystem));
  auto it = std::lower_bound(events.begin(), events.end(), event,
                             [](const Tracepoint& t, std::string_view key) { return t.event < key; });
  return it != events.end() && it->event == event ? &*it : nullptr;
}

std::vector<const Tracepoint*> TracepointCatalog::match(std::string_view pattern) const {
  // "sub*:evt" can only match subsystems matching "sub*"; a pattern without ':' may span it.
  size_t colon = pattern.find(':');
  std::vector<const Tracepoint*> out;
  for (const std::string& subsystem : subsystems_) {
    if (colon != std::string_view::npos && !glob_match(pattern.substr(0, colon), subsystem)) continue;
    for (const Tracepoint& tp : events_of(subsystem))
      if (glob_match(pattern, tp.name())) out.push_back(&tp);
  }
  std::sort(out.begin(), out.end(), [](const Tracepoint* x, const Tracepoint* y) { return x->name() < y->name(); });
  return out;
}

}  // namespace vperf::tracing
