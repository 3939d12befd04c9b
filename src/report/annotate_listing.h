#pragma once
// One symbol's annotated disassembly: its instructions, each with the share of the symbol's
// samples that hit it, and the source lines (from the DSO's DWARF line table) the instructions
// were compiled from, in address order. What annotate_printer.h renders.
//
// Percentages are perf annotate's default "local period": the period of the samples at an
// instruction over the period of all the symbol's samples. A sample whose address is not the
// start of a decoded instruction (the decoding went out of step, or the code changed) counts
// for the instruction that covers its address; one past the bytes read counts in no row.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/annotate_code.h"
#include "report/annotate_disassembler.h"
#include "report/annotate_hits.h"
#include "report/annotate_source.h"
#include "symbols/source_lines.h"

namespace vperf::report {

struct ListingLine {
  enum class Kind : uint8_t {
    Instruction,  // `instruction`, `hits`, `percent`
    Source,       // `location` and its `text` (nullopt: the source file is not readable)
    Label,        // `text`: "Disassembly of section .text:", "0000000000002d60 <name>:", a file name
    Blank,
  };
  Kind kind = Kind::Blank;
  Instruction instruction;
  AddressHits hits;
  double percent = 0;
  // Source: the line shown; Instruction: the line it was compiled from, if has_location.
  symbols::SourceLocation location;
  bool has_location = false;
  std::optional<std::string> text;
};

struct SymbolListing {
  std::string event;
  std::string dso_name;   // as recorded ("/usr/bin/x", "[kernel.kallsyms]")
  std::string dso_short;  // perf annotate's header name (basename)
  std::string symbol;
  uint64_t start = 0;  // the symbol's address in its DSO
  uint64_t samples = 0;
  uint64_t period = 0;
  uint64_t unplaced_samples = 0;  // samples beyond the bytes read (see the top of this file)
  std::string code_file;  // where the bytes came from
  std::string section;
  std::vector<ListingLine> lines;
};

// `hits.by_address` keys are in the same address space as `code.address`.
SymbolListing build_listing(const SymbolHits& hits, const SymbolCode& code, const Disassembler& disassembler,
                            SourceFiles& sources);

// 100 * part / whole, 0 when whole is 0.
double percent_of(uint64_t part, uint64_t whole);

}  // namespace vperf::report
