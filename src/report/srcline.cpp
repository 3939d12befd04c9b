#include "report/srcline.h"

#include <charconv>

#include "symbols/dso.h"

namespace vperf::report {

namespace {

// binutils' addr2line's answer for an address.
enum class Answer {
  Line,            // FILE:LINE from the DWARF line table
  UnitWithoutLine, // ":?": a compile unit covers it, no line does (the assembly of ld.so's _start)
  SymbolOnly,      // "??:?": after an ELF symbol in its section, no line
  Nothing,         // "??:0": no file perf can read has it (the kernel from kallsyms, JIT maps)
};

Answer ask_addr2line(const symbols::Dso& dso, uint64_t address, std::string& line_text) {
  if (std::optional<symbols::SourceLocation> line = dso.source_line(address)) {
    const size_t slash = line->file.rfind('/');
    line_text = (slash == std::string::npos ? line->file : line->file.substr(slash + 1)) + ":" + std::to_string(line->line);
    return Answer::Line;
  }
  if (dso.has_compile_unit_at(address)) return Answer::UnitWithoutLine;
  // The nearest symbol before it in its section, whatever its size.
  if (dso.kind() == symbols::DsoKind::User && dso.file_symbol_before(address)) return Answer::SymbolOnly;
  return Answer::Nothing;
}

std::string address_fallback(const symbols::Dso& dso, uint64_t address) {
  char digits[17];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, address, 16);
  return dso.short_name() + "[" + std::string(digits, end) + "]";
}

}  // namespace

std::optional<std::string> script_srcline(const symbols::ResolvedAddress& at) {
  const symbols::Dso* dso = at.dso();
  if (dso == nullptr) return std::nullopt;
  std::string line;
  switch (ask_addr2line(*dso, at.symbol_address, line)) {
    case Answer::Line: return line;
    case Answer::UnitWithoutLine: return ":0";  // addr2line names no file and line 0
    case Answer::SymbolOnly: return std::nullopt;  // perf prints nothing for "??:?"
    case Answer::Nothing: break;
  }
  return address_fallback(*dso, at.symbol_address);
}

std::string report_srcline(const symbols::ResolvedAddress& at) {
  const symbols::Dso* dso = at.dso();
  if (dso == nullptr) return "??:0";  // perf's SRCLINE_UNKNOWN
  std::string line;
  switch (ask_addr2line(*dso, at.symbol_address, line)) {
    case Answer::Line: return line;
    case Answer::UnitWithoutLine: return ":0";
    case Answer::SymbolOnly: return "??:0";
    case Answer::Nothing: break;
  }
  if (at.symbol) return std::string(at.symbol->name) + "+" + std::to_string(at.symbol_offset);
  return address_fallback(*dso, at.symbol_address);
}

}  // namespace vperf::report
