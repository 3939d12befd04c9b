#include "core/cpu_topology.h"

#include <algorithm>
#include <string>

#include "core/cpu_set.h"
#include "core/files.h"
#include "core/strings.h"

namespace vperf {

CpuTopology::CpuTopology(std::vector<CpuPlace> places) {
  // stable_sort keeps input order among equal CPUs, so the last one of each wins below.
  std::stable_sort(places.begin(), places.end(), [](const CpuPlace& a, const CpuPlace& b) { return a.cpu < b.cpu; });
  for (const CpuPlace& p : places) {
    if (!places_.empty() && places_.back().cpu == p.cpu)
      places_.back() = p;
    else
      places_.push_back(p);
  }
}

const CpuPlace* CpuTopology::find(int cpu) const {
  auto it = std::lower_bound(places_.begin(), places_.end(), cpu,
                             [](const CpuPlace& p, int c) { return p.cpu < c; });
  return it != places_.end() && it->cpu == cpu ? &*it : nullptr;
}

CpuPlace CpuTopology::place_of(int cpu) const {
  if (const CpuPlace* p = find(cpu)) return *p;
  CpuPlace unknown;
  unknown.cpu = cpu;
  return unknown;
}

namespace {

// A topology id file holds one decimal integer (-1 is possible for an unknown package).
Result<int> read_id(const std::filesystem::path& path) {
  Result<std::string> line = read_first_line(path);
  if (!line) return line.error();
  std::string_view text = trim(*line);
  bool negative = !text.empty() && text.front() == '-';
  std::optional<uint64_t> v = parse_u64_base(negative ? text.substr(1) : text, 10);
  if (!v || *v > 1'000'000) return Error{path.string() + ": not a topology id: '" + std::string(text) + "'"};
  return negative ? -static_cast<int>(*v) : static_cast<int>(*v);
}

}  // namespace

Result<CpuTopology> load_cpu_topology(const std::filesystem::path& sysfs_cpu_root) {
  const std::filesystem::path online_path = sysfs_cpu_root / "online";
  Result<std::string> online = read_first_line(online_path);
  if (!online) return online.error();
  Result<std::vector<int>> cpus = parse_cpu_list(*online);
  if (!cpus) return Error{online_path.string() + ": " + cpus.error().message};

  std::vector<CpuPlace> places;
  for (int cpu : *cpus) {
    const std::filesystem::path dir = sysfs_cpu_root / ("cpu" + std::to_string(cpu)) / "topology";
    CpuPlace place;
    place.cpu = cpu;
    Result<int> socket = read_id(dir / "physical_package_id");
    if (!socket) return socket.error();
    Result<int> core = read_id(dir / "core_id");
    if (!core) return core.error();
    place.socket = *socket;
    place.core = *core;
    // No die_id before Linux 5.2: one die per package, numbered 0, as perf assumes.
    std::error_code ec;
    if (std::filesystem::exists(dir / "die_id", ec)) {
      Result<int> die = read_id(dir / "die_id");
      if (!die) return die.error();
      place.die = *die;
    } else {
      place.die = 0;
    }
    // The node: the one "nodeM" link in the CPU's own directory.
    for (const std::filesystem::directory_entry& entry :
         std::filesystem::directory_iterator(sysfs_cpu_root / ("cpu" + std::to_string(cpu)), ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with("node")) continue;
      if (std::optional<uint64_t> node = parse_u64_base(std::string_view(name).substr(4), 10); node && *node <= 1'000'000)
        place.node = static_cast<int>(*node);
    }
    places.push_back(place);
  }
  return CpuTopology(std::move(places));
}

}  // namespace vperf
