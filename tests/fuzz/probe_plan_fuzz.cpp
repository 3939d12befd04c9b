// libFuzzer target for the path from a PROBEDEF with an offset to the uprobe_events line
// (tracing/probe_definition.h, symbols/function_probe_points.h, tracing/dynamic_events.h), on a
// synthetic file described by the input. The input is text:
//   line 1            the PROBEDEF, as a user types it ("vperftest:e=f+4 %di:u64"); or, when the
//                     input holds a NUL byte, all before it (newlines included, which the
//                     grammar must keep out of the line: a newline there starts another command)
//   each next line    a function symbol: "NAME START SIZE [OFFSET,OFFSET,...]" (numbers decimal
//                     or 0x hex; the offsets are where its instructions start, from its entry;
//                     the first symbol at an address gives them for every symbol there, aliases
//                     naming one piece of code)
// The file has two PT_LOAD segments: [0x1000, 0x11000) at file offset 0x1000 and [0x20000,
// 0x30000) at 0x11000. What is planned must hold: every point is FUNC's entry plus the offset
// of one of FUNC's symbols, inside its size (a size of 0 ends at the next symbol or its
// segment) and at one of its instruction starts (or the entry); its file offset is the one the
// segment maps; the line holds no newline and reads back as the same event, group, offset and
// kind. Anything else must be a refusal (an Error), never a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "symbols/function_probe_points.h"
#include "tracing/dynamic_events.h"
#include "tracing/probe_definition.h"

namespace {

struct SyntheticFunction {
  std::string name;
  uint64_t start = 0, size = 0;
  std::vector<uint64_t> starts;
};

const std::vector<vperf::symbols::LoadSegment> kSegments = {{0x1000, 0x1000, 0x10000, 0x10000, true},
                                                            {0x20000, 0x11000, 0x10000, 0x10000, false}};

std::vector<SyntheticFunction> read_functions(const std::vector<std::string_view>& lines) {
  std::vector<SyntheticFunction> out;
  for (size_t i = 1; i < lines.size() && out.size() < 32; ++i) {
    std::vector<std::string_view> fields = vperf::split(lines[i], ' ');
    if (fields.size() < 3) continue;
    SyntheticFunction f;
    f.name = std::string(fields[0]);
    std::optional<uint64_t> start = vperf::parse_u64(fields[1]), size = vperf::parse_u64(fields[2]);
    if (!start || !size) continue;
    f.start = *start;
    f.size = *size;
    if (fields.size() > 3)
      for (std::string_view offset : vperf::split(fields[3], ','))
        if (std::optional<uint64_t> value = vperf::parse_u64(offset); value && f.starts.size() < 4096) f.starts.push_back(*value);
    std::sort(f.starts.begin(), f.starts.end());
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t nul = text.find('\0');
  const std::vector<std::string_view> lines = vperf::split(nul == std::string_view::npos ? text : text.substr(nul), '\n');
  if (lines.empty()) return 0;
  auto def = vperf::tracing::parse_probe_definition(nul == std::string_view::npos ? lines.front() : text.substr(0, nul));
  if (!def || def->function.empty() || def->address || def->line || !def->lazy_pattern.empty()) return 0;
  const std::vector<SyntheticFunction> functions = read_functions(lines);
  vperf::symbols::SymbolNames names;
  std::vector<vperf::symbols::SymbolSource> symbols;
  for (const SyntheticFunction& f : functions) symbols.push_back({f.start, f.size, names.keep(f.name)});
  std::map<uint64_t, std::vector<uint64_t>> starts_at;  // the first function at each entry gives its starts
  for (const SyntheticFunction& f : functions) starts_at.emplace(f.start, f.starts);
  uint64_t decoded_size = 0;
  auto instruction_starts = [&](uint64_t entry, uint64_t function_size) -> vperf::Result<std::vector<uint64_t>> {
    decoded_size = function_size;
    if (entry % 7 == 3) return vperf::Error{"no decoder"};  // some functions cannot be decoded
    return starts_at[entry];
  };
  const uint64_t offset = def->offset.value_or(0);
  auto points = vperf::symbols::function_probe_points(symbols, kSegments, "/usr/lib/fuzz.so", def->function, offset, instruction_starts);
  if (!points) {
    if (points.error().message.find('\n') != std::string::npos) __builtin_trap();  // one line
    return 0;
  }
  for (const vperf::symbols::FunctionProbePoint& point : *points) {
    // Some symbol of this name has its entry `offset` bytes before the point, with room for it.
    bool placed = false;
    for (const SyntheticFunction& f : functions) {
      if (f.name != def->function || f.start == 0 || point.address - offset != f.start || point.address < f.start) continue;
      const std::vector<uint64_t>& code = starts_at[f.start];  // the code at an address is one, whichever symbol names it
      if (offset == 0 || std::binary_search(code.begin(), code.end(), offset)) placed = true;
    }
    if (!placed) __builtin_trap();
    if (offset != 0 && offset >= decoded_size && decoded_size != 0) __builtin_trap();
    const auto segment = std::find_if(kSegments.begin(), kSegments.end(), [&](const vperf::symbols::LoadSegment& s) {
      return point.address >= s.vaddr && point.address - s.vaddr < s.memsz;
    });
    if (segment == kSegments.end() || point.file_offset != point.address - segment->vaddr + segment->offset) __builtin_trap();

    vperf::tracing::UprobeEvent event;
    event.group = def->group.empty() ? vperf::tracing::default_uprobe_group("/usr/lib/fuzz.so") : def->group;
    event.event = def->event.empty() ? def->function + (def->return_probe ? "__return" : "") : def->event;
    if (!vperf::tracing::is_probe_event_name(event.event)) continue;  // planning refuses it
    event.file = "/usr/lib/fuzz.so";
    event.file_offset = point.file_offset;
    event.is_return = def->return_probe;
    for (const vperf::tracing::ProbeArgument& arg : def->arguments)
      event.arguments.push_back((arg.name.empty() ? "" : arg.name + "=") + arg.expression + (arg.type.empty() ? "" : ":" + arg.type));
    const std::string line = vperf::tracing::uprobe_definition(event);
    if (line.find('\n') != std::string::npos || line.find('\0') != std::string::npos) __builtin_trap();
    auto read_back = vperf::tracing::parse_uprobe_definition(line);
    if (!read_back || read_back->group != event.group || read_back->event != event.event || read_back->file_offset != event.file_offset ||
        read_back->is_return != event.is_return || read_back->arguments.size() != event.arguments.size())
      __builtin_trap();
  }
  return 0;
}
