#include "core/cpu_set.h"

#include <algorithm>

#include "core/files.h"
#include "core/strings.h"

namespace vperf {

namespace {
// Far above any real machine; stops "0-4000000000" from allocating billions of entries.
constexpr uint64_t kMaxCpu = 65535;
// The kernel's PID_MAX_LIMIT is 4M; a task ID above 2^30 cannot exist.
constexpr uint64_t kMaxTaskId = 0x3fffffff;
}  // namespace

Result<std::vector<int>> parse_cpu_list(std::string_view text) {
  text = trim(text);
  if (text.empty()) return Error{"empty CPU list"};
  // Ranges first, merged after sorting: expanding each as it comes made "0-65535" written
  // 8,000 times (64 KB of text) half a billion entries before duplicates went.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (std::string_view part : split(text, ',')) {
    part = trim(part);
    size_t dash = part.find('-');
    std::optional<uint64_t> first = parse_u64_base(part.substr(0, dash), 10);
    std::optional<uint64_t> last = dash == std::string_view::npos ? first : parse_u64_base(part.substr(dash + 1), 10);
    if (!first || !last || *first > *last || *last > kMaxCpu)
      return Error{"bad CPU number or range '" + std::string(part) + "' (write e.g. 0-3,8)"};
    ranges.emplace_back(*first, *last);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<int> cpus;
  for (auto [first, last] : ranges) {
    uint64_t from = cpus.empty() ? first : std::max<uint64_t>(first, static_cast<uint64_t>(cpus.back()) + 1);
    for (uint64_t cpu = from; cpu <= last; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

Result<std::vector<int>> online_cpus(const std::filesystem::path& sysfs) {
  auto text = read_first_line(sysfs / "devices/system/cpu/online");
  if (!text) return text.error();
  return parse_cpu_list(*text);
}

Result<std::vector<pid_t>> parse_task_ids(std::string_view text, std::string_view option) {
  std::vector<pid_t> ids;
  for (std::string_view part : split(text, ',')) {
    std::optional<uint64_t> value = parse_u64(trim(part));
    if (!value || *value == 0 || *value > kMaxTaskId)
      return Error{"bad " + std::string(option) + " value '" + std::string(part) + "'"};
    ids.push_back(static_cast<pid_t>(*value));
  }
  return ids;
}

}  // namespace vperf
