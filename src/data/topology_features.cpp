#include "data/topology_features.h"

#include <algorithm>
#include <vector>

#include "core/byte_writer.h"
#include "core/cpu_set.h"
#include "core/cpu_topology.h"
#include "core/files.h"
#include "core/strings.h"
#include "data/feature_sections.h"
#include "data/perf_data_format.h"

namespace vperf::data {
namespace {

std::optional<std::string> line_of(const std::filesystem::path& path) {
  Result<std::string> line = read_first_line(path);
  if (!line) return std::nullopt;
  return std::string(trim(*line));
}

// The first file of `names` under `dir` that can be read (perf's fallbacks for older kernels).
std::optional<std::string> first_line_of(const std::filesystem::path& dir, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (std::optional<std::string> line = line_of(dir / name)) return line;
  return std::nullopt;
}

void add_unique(std::vector<std::string>& lists, std::optional<std::string> list) {
  if (list && std::find(lists.begin(), lists.end(), *list) == lists.end()) lists.push_back(std::move(*list));
}

void put_lists(ByteWriter& w, const std::vector<std::string>& lists) {
  w.u32(static_cast<uint32_t>(lists.size()));
  for (const std::string& list : lists) put_perf_string(w, list);
}

// A value of a node's meminfo line "Node 0 MemTotal:  9529120 kB".
uint64_t node_meminfo_kb(const std::string& meminfo, std::string_view key) {
  for (std::string_view line : split(meminfo, '\n')) {
    const size_t at = line.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view rest = trim(line.substr(at + key.size()));
    return parse_u64(rest.substr(0, rest.find(' '))).value_or(0);
  }
  return 0;
}

}  // namespace

std::optional<RawFeature> cpu_topology_feature(const std::filesystem::path& sysfs_system, uint32_t nr_cpus_available,
                                               const std::string& arch) {
  const std::filesystem::path cpu_root = sysfs_system / "cpu";
  // The online CPUs' ids (core, package, die); the sibling lists are read here.
  Result<CpuTopology> topology = load_cpu_topology(cpu_root);
  if (!topology || topology->empty()) return std::nullopt;
  auto topology_dir = [&](int cpu) { return cpu_root / ("cpu" + std::to_string(cpu)) / "topology"; };
  const bool dies = (arch == "x86_64" || arch == "s390x") &&
                    std::filesystem::exists(topology_dir(topology->places().front().cpu) / "die_cpus_list");
  std::vector<std::string> packages, die_lists, cores;
  for (const CpuPlace& place : topology->places()) {
    const std::filesystem::path dir = topology_dir(place.cpu);
    add_unique(packages, first_line_of(dir, {"package_cpus_list", "core_siblings_list"}));
    if (dies) add_unique(die_lists, line_of(dir / "die_cpus_list"));
    add_unique(cores, first_line_of(dir, {"core_cpus_list", "thread_siblings_list"}));
  }
  if (packages.empty() || cores.empty()) return std::nullopt;
  // Every CPU up to the available count: -1 for one that is not online, as perf writes it.
  auto id = [](int value) { return static_cast<uint32_t>(value); };
  ByteWriter w;
  put_lists(w, packages);
  put_lists(w, cores);
  for (uint32_t cpu = 0; cpu < nr_cpus_available; ++cpu) {
    const CpuPlace place = topology->place_of(static_cast<int>(cpu));
    w.u32(id(place.core));
    w.u32(id(place.socket));
  }
  if (dies && !die_lists.empty()) {
    put_lists(w, die_lists);
    for (uint32_t cpu = 0; cpu < nr_cpus_available; ++cpu) w.u32(id(topology->place_of(static_cast<int>(cpu)).die));
  }
  return RawFeature{kFeatCpuTopology, w.take()};
}

std::optional<RawFeature> numa_topology_feature(const std::filesystem::path& sysfs_system) {
  const std::filesystem::path node_root = sysfs_system / "node";
  std::optional<std::string> online_text = line_of(node_root / "online");
  if (!online_text) return std::nullopt;
  Result<std::vector<int>> nodes = parse_cpu_list(*online_text);
  if (!nodes || nodes->empty()) return std::nullopt;
  ByteWriter w;
  w.u32(static_cast<uint32_t>(nodes->size()));
  for (int node : *nodes) {
    const std::filesystem::path dir = node_root / ("node" + std::to_string(node));
    Result<std::string> meminfo = read_file(dir / "meminfo");
    w.u32(static_cast<uint32_t>(node));
    w.u64(meminfo ? node_meminfo_kb(*meminfo, "MemTotal:") : 0);
    w.u64(meminfo ? node_meminfo_kb(*meminfo, "MemFree:") : 0);
    put_perf_string(w, line_of(dir / "cpulist").value_or(""));
  }
  return RawFeature{kFeatNumaTopology, w.take()};
}

}  // namespace vperf::data
