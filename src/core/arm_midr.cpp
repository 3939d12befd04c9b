#include "core/arm_midr.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/files.h"
#include "core/strings.h"

namespace vperf {

namespace {

std::vector<std::pair<unsigned, Midr>> read_sysfs_midrs(const std::filesystem::path& cpu_root) {
  std::vector<std::pair<unsigned, Midr>> out;
  auto entries = list_directory(cpu_root);
  if (!entries) return out;
  for (const std::string& name : *entries) {
    if (!name.starts_with("cpu")) continue;
    auto number = parse_u64_base(std::string_view(name).substr(3), 10);
    if (!number) continue;
    auto text = read_first_line(cpu_root / name / "regs/identification/midr_el1");
    if (!text) continue;
    auto value = parse_u64(trim(*text));
    if (!value || *value > 0xffffffffu) continue;
    out.emplace_back(static_cast<unsigned>(*number), Midr{static_cast<uint32_t>(*value)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace

std::vector<std::pair<unsigned, Midr>> parse_cpuinfo_midrs(std::string_view cpuinfo) {
  // One block per processor: "processor : N", then "CPU implementer : 0x41", "CPU variant : 0x3",
  // "CPU architecture: 8", "CPU part : 0xd0c", "CPU revision : 1" (arch/arm64/kernel/cpuinfo.c).
  struct Fields {
    std::optional<uint64_t> implementer, variant, part, revision;
  };
  std::map<unsigned, Fields> blocks;
  std::optional<unsigned> current;
  for (std::string_view line : split(cpuinfo, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (key == "processor") {
      auto n = parse_u64_base(value, 10);
      current = n && *n < (1u << 20) ? std::optional<unsigned>(static_cast<unsigned>(*n)) : std::nullopt;
      continue;
    }
    if (!current) continue;
    Fields& f = blocks[*current];
    if (key == "CPU implementer") f.implementer = parse_u64(value);
    else if (key == "CPU variant") f.variant = parse_u64(value);
    else if (key == "CPU part") f.part = parse_u64(value);
    else if (key == "CPU revision") f.revision = parse_u64(value);
  }
  std::vector<std::pair<unsigned, Midr>> out;
  for (const auto& [cpu, f] : blocks) {
    if (!f.implementer || !f.variant || !f.part || !f.revision) continue;
    if (*f.implementer > 0xff || *f.variant > 0xf || *f.part > 0xfff || *f.revision > 0xf) continue;
    // Every arm64 core reports architecture 0xf ("see the ID registers"); cpuinfo prints 8.
    const uint32_t value = static_cast<uint32_t>(*f.implementer << 24 | *f.variant << 20 | 0xfu << 16 |
                                                 *f.part << 4 | *f.revision);
    out.emplace_back(cpu, Midr{value});
  }
  return out;
}

MidrReading read_midrs(const std::filesystem::path& sys, const std::filesystem::path& proc) {
  const std::filesystem::path cpu_root = sys / "devices/system/cpu";
  MidrReading reading;
  reading.cpus = read_sysfs_midrs(cpu_root);
  if (!reading.cpus.empty()) {
    reading.source = (cpu_root / "cpu*/regs/identification/midr_el1").string();
    return reading;
  }
  if (Result<std::string> cpuinfo = read_file(proc / "cpuinfo", 4 << 20)) {
    reading.cpus = parse_cpuinfo_midrs(*cpuinfo);
    if (!reading.cpus.empty()) {
      reading.source = (proc / "cpuinfo").string();
      return reading;
    }
  }
  reading.source = "neither " + (cpu_root / "cpu*/regs/identification/midr_el1").string() + " nor " +
                   (proc / "cpuinfo").string() + " gives a MIDR";
  return reading;
}

}  // namespace vperf
