#pragma once
// Renders a SymbolListing the way `perf annotate --stdio` (perf 6.1) prints one symbol:
//
//  Percent |	Source code & Disassembly of DSO for EVENT (N samples, percent: local period)
// ------------------------------------------------------------------------------------------
//          :
//          :      0000000000002d60 <spin_leaf_hash>:
//          : 27   h ^= (seed >> (8 * b)) & 0xff;
//     4.76 :   2da1:   movzbl %dl,%edx
//
// The header line has perf's tab after "|"; the dashes are as long as the header plus five.
// An instruction row: the percentage (" %7.2f", 0.00 included, as perf), " : ", the address in
// the DSO (objdump's, as hex as wide as the symbol's last address), then the mnemonic padded to
// six and the operands. Other rows leave the percentage blank: a source row shows its line
// number in the address column then the text; a label (section, symbol, source file) shows text.
// A source row whose file cannot be read shows "FILE:LINE" instead of the text.
//
// JSON: one object per symbol (event, dso, symbol, address, samples, period, instructions with
// address, offset, samples, period, percent, mnemonic, operands and source file/line).
#include <boost/json.hpp>
#include <ostream>
#include <string>

#include "report/annotate_listing.h"

namespace vperf::report {

void print_listing_text(const SymbolListing& listing, std::ostream& out);

// The percentage as perf prints it in an instruction row: " %7.2f".
std::string format_percent(double percent);

boost::json::object listing_json(const SymbolListing& listing);

}  // namespace vperf::report
