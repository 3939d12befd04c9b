#include "symbols/process_namespace.h"

#include <cstdint>
#include <system_error>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::symbols {

namespace {

constexpr size_t kMaxStatusBytes = 64 * 1024;  // a status file is a few KB

std::string link_of(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path target = std::filesystem::read_symlink(path, ec);
  return ec ? std::string() : target.string();
}

}  // namespace

std::string own_mount_namespace(const std::filesystem::path& proc) { return link_of(proc / "self" / "ns" / "mnt"); }

std::optional<pid_t> innermost_pid(std::string_view status) {
  for (std::string_view line : split(status, '\n')) {
    if (!line.starts_with("NSpid:")) continue;
    std::optional<pid_t> last;
    for (std::string_view field : split(line.substr(6), '\t')) {
      field = trim(field);
      if (field.empty()) continue;
      std::optional<uint64_t> value = parse_u64(field);
      if (!value || *value == 0 || *value > INT32_MAX) return std::nullopt;
      last = static_cast<pid_t>(*value);
    }
    return last;
  }
  return std::nullopt;
}

std::optional<MountNamespace> foreign_mount_namespace(const std::filesystem::path& proc, pid_t pid, const std::string& own_id) {
  if (own_id.empty() || pid <= 0) return std::nullopt;
  const std::filesystem::path dir = proc / std::to_string(pid);
  MountNamespace ns{link_of(dir / "ns" / "mnt"), dir / "root", pid};
  if (ns.id.empty() || ns.id == own_id) return std::nullopt;
  if (Result<std::string> status = read_file(dir / "status", kMaxStatusBytes); status)
    if (std::optional<pid_t> inside = innermost_pid(*status)) ns.pid_inside = *inside;
  return ns;
}

const MountNamespace* MountNamespaces::of(pid_t pid) {
  if (proc_.empty()) return nullptr;
  if (!own_) own_ = own_mount_namespace(proc_);
  auto [it, added] = known_.try_emplace(pid);
  if (added) it->second = foreign_mount_namespace(proc_, pid, *own_);
  return it->second ? &*it->second : nullptr;
}

}  // namespace vperf::symbols
