#include "report/annotate_printer.h"

#include <cinttypes>
#include <cstdio>

namespace vperf::report {
namespace {

constexpr int kPercentWidth = 8;  // perf's " %7.2f" without its leading space

std::string hex(uint64_t value, int width = 0) {
  char text[32];
  std::snprintf(text, sizeof text, "%*" PRIx64, width, value);
  return text;
}

int hex_digits(uint64_t value) {
  int digits = 1;
  while (value >>= 4) ++digits;
  return digits;
}

std::string file_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string padded(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string assembly(const Instruction& i) {
  if (i.operands.empty()) return i.mnemonic;
  return padded(i.mnemonic, 6) + " " + i.operands;
}

}  // namespace

std::string format_percent(double percent) {
  char text[32];
  std::snprintf(text, sizeof text, " %7.2f", percent);
  return text;
}

void print_listing_text(const SymbolListing& listing, std::ostream& out) {
  std::string header = " Percent |\tSource code & Disassembly of " + listing.dso_short + " for " + listing.event + " (" +
                       std::to_string(listing.samples) + " samples, percent: local period)";
  out << header << '\n' << std::string(header.size() + 5, '-') << '\n';

  uint64_t last_address = listing.start;
  for (const ListingLine& line : listing.lines)
    if (line.kind == ListingLine::Kind::Instruction) last_address = line.instruction.address;
  const int width = hex_digits(last_address);
  const std::string blank_percent(1 + kPercentWidth, ' ');

  for (const ListingLine& line : listing.lines) {
    switch (line.kind) {
      case ListingLine::Kind::Instruction:
        out << format_percent(line.percent) << " :   " << hex(line.instruction.address, width) << ":   "
            << assembly(line.instruction) << '\n';
        break;
      case ListingLine::Kind::Source: {
        std::string number = padded(std::to_string(line.location.line), static_cast<size_t>(width));
        std::string text = line.text ? *line.text : file_name(line.location.file) + ":" + std::to_string(line.location.line);
        out << blank_percent << ": " << number << " " << text << '\n';
        break;
      }
      case ListingLine::Kind::Label:
        out << blank_percent << ": " << std::string(static_cast<size_t>(width), ' ') << " " << line.text.value_or("") << '\n';
        break;
      case ListingLine::Kind::Blank:
        out << blank_percent << ":\n";
        break;
    }
  }
  if (listing.unplaced_samples > 0)
    out << blank_percent << ": " << listing.unplaced_samples << " samples past the " << listing.dso_short
        << " bytes read for this symbol\n";
}

boost::json::object listing_json(const SymbolListing& listing) {
  boost::json::object o;
  o["event"] = listing.event;
  o["dso"] = listing.dso_name;
  o["symbol"] = listing.symbol;
  o["address"] = "0x" + hex(listing.start);
  o["samples"] = listing.samples;
  o["period"] = listing.period;
  o["code_file"] = listing.code_file;
  if (!listing.section.empty()) o["section"] = listing.section;
  boost::json::array instructions;
  for (const ListingLine& line : listing.lines) {
    if (line.kind != ListingLine::Kind::Instruction) continue;
    boost::json::object i;
    i["address"] = "0x" + hex(line.instruction.address);
    i["offset"] = line.instruction.address - listing.start;
    i["samples"] = line.hits.samples;
    i["period"] = line.hits.period;
    i["percent"] = line.percent;
    i["mnemonic"] = line.instruction.mnemonic;
    i["operands"] = line.instruction.operands;
    if (line.has_location)
      i["source"] = boost::json::object{{"file", line.location.file}, {"line", line.location.line}};
    instructions.push_back(std::move(i));
  }
  o["instructions"] = std::move(instructions);
  if (listing.unplaced_samples > 0) o["unplaced_samples"] = listing.unplaced_samples;
  return o;
}

}  // namespace vperf::report
