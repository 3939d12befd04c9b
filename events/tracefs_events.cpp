#include "events/tracefs_events.h"

#include <unistd.h>

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
  const std::string events_dir = (root / "events").string();
  std::error_code ec;
  std::vector<std::string> subsystems = subdirectories(events_dir, ec);
  if (ec) return Error{"list " + events_dir, ec.value()};
  std::vector<Tracepoint> tracepoints;
  for (const std::string& subsystem : subsystems) {
    const std::string subsystem_dir = events_dir + "/" + subsystem;
    for (std::string& event : subdirectories(subsystem_dir, ec)) {
      std::string dir = subsystem_dir + "/" + event;
      tracepoints.push_back(Tracepoint{subsystem, std::move(event), std::move(dir), std::nullopt});
    }
    ec.clear();  // an unreadable subsystem is skipped, as perf skips it
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
