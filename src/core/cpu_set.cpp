#include "core/cpu_set.h"

#include <algorithm>

#include "core/files.h"
#include "core/strings.h"

namespace vperf {

namespace {
// Far above any real machine; stops "0-4000000000" from allocating billions of entries.
constexpr uint64_t kMaxCpu = 65535;
}  // namespace

Result<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  text = trim(text);
  if (text.empty()) return Error{"empty CPU list"};
  for (std::string_view part : split(text, ',')) {
    part = trim(part);
    size_t dash = part.find('-');
    std::optional<uint64_t> first = parse_u64_base(part.substr(0, dash), 10);
    std::optional<uint64_t> last = dash == std::string_view::npos ? first : parse_u64_base(part.substr(dash + 1), 10);
    if (!first || !last || *first > *last || *last > kMaxCpu)
      return Error{"bad CPU number or range '" + std::string(part) + "' (write e.g. 0-3,8)"};
    for (uint64_t cpu = *first; cpu <= *last; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
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

}  // namespace vperf
