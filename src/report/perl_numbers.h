#pragma once
// Numbers as flamegraph.pl prints them: printf's "%.Nf" for coordinates and percentages, and
// perl's own stringification ("%.15g") for the rest, byte for byte. Appended to the document
// being built: a graph has thousands of boxes with seven numbers each, and a string per
// number was a third of drawing one.

#include <cstddef>
#include <string>
#include <string_view>

namespace vperf::report {

struct PrintedNumber {
  char text[64];
  size_t size = 0;
  std::string_view view() const { return {text, size}; }
};

// printf("%.{precision}f", value), for values of magnitude below 1e40 (an SVG's coordinates
// and percentages; printf's 300 digits of 1e300 do not fit).
PrintedNumber fixed_number(double value, int precision);
inline void append_fixed(std::string& out, double value, int precision) { out += fixed_number(value, precision).view(); }

// perl's "$value": printf("%.15g", value).
void append_perl_number(std::string& out, double value);

}  // namespace vperf::report
