#include "perf/permission_fallback.h"

#include <cerrno>
#include <charconv>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::perf {

Result<int> read_perf_event_paranoid(const std::filesystem::path& path) {
  Result<std::string> line = read_first_line(path);
  if (!line) return line.error();
  std::string_view text = trim(*line);
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return Error{path.string() + ": '" + std::string(text) + "' is not a number", EINVAL};
  return value;
}

std::string user_space_event_name(std::string_view name) {
  bool has_modifier_syntax = name.find('/') != std::string_view::npos || name.find(':') != std::string_view::npos;
  return std::string(name) + (has_modifier_syntax ? "u" : ":u");
}

std::string user_space_fallback_message(int paranoid) {
  return "kernel.perf_event_paranoid=" + std::to_string(paranoid) +
         ", trying to fall back to excluding kernel and hypervisor samples";
}

std::optional<std::string> fall_back_to_user_space(perf_event_attr& attr, std::string& name, int errno_value,
                                                   const std::function<Result<int>()>& paranoid) {
  if (errno_value != EACCES || attr.exclude_kernel || attr.exclude_user) return std::nullopt;
  Result<int> level = paranoid();
  // Below 2 the refusal is not about kernel samples (another user's task, an LSM): no retry.
  if (!level || *level <= 1) return std::nullopt;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  name = user_space_event_name(name);
  return user_space_fallback_message(*level);
}

}  // namespace vperf::perf
