#include "symbols/function_probe_points.h"

#include <algorithm>

#include "core/strings.h"
#include "symbols/elf_file.h"

namespace vperf::symbols {

Result<std::vector<FunctionProbePoint>> function_probe_points(const std::filesystem::path& file, std::string_view function,
                                                               uint64_t offset) {
  VPERF_TRY(ElfFile elf, ElfFile::open(file));
  const std::vector<LoadSegment> segments = elf.load_segments();
  std::vector<FunctionProbePoint> points;
  for (const SymbolSource& symbol : elf.function_symbols()) {
    if (symbol.name != function || symbol.start == 0) continue;
    if (symbol.size != 0 && offset >= symbol.size)
      return Error{"offset " + std::to_string(offset) + " is past the end of " + std::string(function) + " (" +
                       std::to_string(symbol.size) + " bytes) in " + file.string(),
                   0, "give an offset inside the function"};
    const uint64_t address = symbol.start + offset;
    if (std::any_of(points.begin(), points.end(), [&](const FunctionProbePoint& p) { return p.address == address; })) continue;
    std::optional<uint64_t> file_offset = vaddr_to_file_offset(segments, address);
    if (!file_offset) return Error{std::string(function) + " in " + file.string() + " is in no loaded segment"};
    points.push_back(FunctionProbePoint{address, *file_offset});
  }
  if (points.empty())
    return Error{"no function " + std::string(function) + " in " + file.string(), 0,
                 "list the functions vperf can probe with: nm -D --defined-only " + file.string() + " (or nm for a file with .symtab)"};
  std::sort(points.begin(), points.end(), [](const FunctionProbePoint& a, const FunctionProbePoint& b) { return a.address < b.address; });
  return points;
}

}  // namespace vperf::symbols
