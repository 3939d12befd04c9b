#include "report/annotate_listing.h"

#include <cinttypes>
#include <cstdio>

namespace vperf::report {
namespace {

std::string symbol_label(uint64_t start, const std::string& name) {
  char address[24];
  std::snprintf(address, sizeof address, "%016" PRIx64, start);
  return std::string(address) + " <" + name + ">:";
}

ListingLine label(std::string text) {
  ListingLine line;
  line.kind = ListingLine::Kind::Label;
  line.text = std::move(text);
  return line;
}

}  // namespace

double percent_of(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

SymbolListing build_listing(const SymbolHits& hits, const SymbolCode& code, const Disassembler& disassembler,
                            SourceFiles& sources) {
  const symbols::Dso& dso = hits.dso();
  SymbolListing listing;
  listing.event = hits.event;
  listing.dso_name = dso.name();
  listing.dso_short = dso.short_name();
  listing.symbol = hits.symbol->name;
  listing.start = hits.symbol->start;
  listing.samples = hits.samples;
  listing.period = hits.period;
  listing.code_file = code.file;
  listing.section = code.section;

  AddressNamer namer = [&dso](uint64_t address) -> std::optional<std::string> {
    const symbols::Symbol* s = dso.symbols().find(address);
    if (s == nullptr) return std::nullopt;
    if (address == s->start) return std::string(s->name);
    char offset[24];
    std::snprintf(offset, sizeof offset, "+0x%" PRIx64, address - s->start);
    return std::string(s->name) + offset;
  };
  std::vector<Instruction> instructions = disassembler.disassemble(code.bytes, code.address, namer);

  listing.lines.push_back(ListingLine{});
  if (!code.section.empty()) {
    listing.lines.push_back(label("Disassembly of section " + code.section + ":"));
    listing.lines.push_back(ListingLine{});
  }
  listing.lines.push_back(label(symbol_label(hits.symbol->start, std::string(hits.symbol->name))));

  auto hit = hits.by_address.begin();
  std::optional<symbols::SourceLocation> shown;
  for (const Instruction& instruction : instructions) {
    std::optional<symbols::SourceLocation> location = dso.source_line(instruction.address);
    if (location) {
      if (!shown || shown->file != location->file) listing.lines.push_back(label(location->file));
      if (!shown || shown->file != location->file || shown->line != location->line) {
        ListingLine source;
        source.kind = ListingLine::Kind::Source;
        source.location = *location;
        source.has_location = true;
        source.text = sources.line(location->file, location->line);
        listing.lines.push_back(std::move(source));
      }
      shown = location;
    }
    ListingLine line;
    line.kind = ListingLine::Kind::Instruction;
    line.instruction = instruction;
    if (location) {
      line.location = *location;
      line.has_location = true;
    }
    // Hits before this instruction's end belong to it (those before the first instruction
    // cannot exist: the code starts at the symbol).
    while (hit != hits.by_address.end() && hit->first < instruction.address + instruction.size) {
      line.hits.samples += hit->second.samples;
      line.hits.period += hit->second.period;
      ++hit;
    }
    line.percent = percent_of(line.hits.period, hits.period);
    listing.lines.push_back(std::move(line));
  }
  for (; hit != hits.by_address.end(); ++hit) listing.unplaced_samples += hit->second.samples;
  return listing;
}

}  // namespace vperf::report
