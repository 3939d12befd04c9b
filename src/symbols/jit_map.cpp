#include "symbols/jit_map.h"

#include <vector>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::symbols {
namespace {

std::optional<uint64_t> parse_hex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return parse_u64_base(s, 16);
}

}  // namespace

SymbolTable parse_jit_map(std::string_view text) {
  auto names = std::make_shared<SymbolNames>();
  std::vector<SymbolSource> sources;
  for (std::string_view line : split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos) continue;
    size_t sp2 = line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos) continue;
    auto start = parse_hex(line.substr(0, sp1));
    auto size = parse_hex(line.substr(sp1 + 1, sp2 - sp1 - 1));
    std::string_view name = line.substr(sp2 + 1);
    if (!start || !size || name.empty()) continue;
    sources.push_back(SymbolSource{*start, *size, names->keep(name), SymbolBinding::Global});
  }
  return SymbolTable::build(std::move(sources), SizeInference::Elf, std::move(names));
}

Result<SymbolTable> load_jit_map(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_jit_map(text.value());
}

std::filesystem::path jit_map_path(const std::filesystem::path& dir, int pid) {
  return dir / ("perf-" + std::to_string(pid) + ".map");
}

}  // namespace vperf::symbols
