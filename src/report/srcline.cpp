#include "report/srcline.h"

#include <charconv>

#include "symbols/dso.h"

namespace vperf::report {

std::optional<std::string> script_srcline(const symbols::ResolvedAddress& at) {
  const symbols::Dso* dso = at.dso();
  if (dso == nullptr) return std::nullopt;
  if (std::optional<symbols::SourceLocation> line = dso->source_line(at.symbol_address)) {
    const size_t slash = line->file.rfind('/');
    return (slash == std::string::npos ? line->file : line->file.substr(slash + 1)) + ":" + std::to_string(line->line);
  }
  // binutils' addr2line (perf's) names no file and line 0 (":?") for an address in a compile
  // unit without a line for it, the assembly of ld.so's _start: perf prints ":0".
  if (dso->has_compile_unit_at(at.symbol_address)) return ":0";
  // It prints "??:?" for a file's address after a symbol in its section (the nearest one
  // before it, whatever its size) but without a line, which perf does not print; and "??:0"
  // otherwise, where perf falls back to the address (as it does for what addr2line cannot open: the
  // kernel from kallsyms, JIT maps).
  if (dso->kind() == symbols::DsoKind::User && dso->file_symbol_before(at.symbol_address)) return std::nullopt;
  char digits[17];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, at.symbol_address, 16);
  return dso->short_name() + "[" + std::string(digits, end) + "]";
}

}  // namespace vperf::report
