#include "report/perl_numbers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>

namespace vperf::report {

namespace {

// Digits of `scaled` with a decimal point `precision` digits from the right ("1234", 2 ->
// "12.34"; "5", 2 -> "0.05").
PrintedNumber decimal_of(uint64_t scaled, int precision) {
  char digits[24];
  const auto count = static_cast<int>(std::to_chars(digits, digits + sizeof digits, scaled).ptr - digits);
  const int zeros = std::max(0, precision + 1 - count);  // at least one digit before the point
  const int integer_digits = zeros + count - precision;
  PrintedNumber n{};
  int written = 0;
  auto put = [&](char c) {
    if (precision > 0 && written == integer_digits) n.text[n.size++] = '.';
    n.text[n.size++] = c;
    ++written;
  };
  for (int i = 0; i < zeros; ++i) put('0');
  for (int i = 0; i < count; ++i) put(digits[i]);
  return n;
}

// The coordinates and percentages are non-negative (not even -0) and far below 2^40: their product with
// 10^precision is rounded to an integer as printf would round the exact value, unless it lies
// so near a half that the product's own rounding could have moved it across (then to_chars
// decides). Scaling is one multiplication by an exact power of ten, off by at most half an ulp
// (below 1e-7 for products under 2^48).
std::optional<uint64_t> scaled_exactly(double value, int precision) {
  static constexpr double kPowers[] = {1, 10, 100, 1000};
  if (!(value >= 0) || std::signbit(value) || precision < 0 || precision > 3) return std::nullopt;
  const double scaled = value * kPowers[precision];
  if (!(scaled < 0x1p48)) return std::nullopt;
  const double floor = std::floor(scaled), fraction = scaled - floor;
  if (std::abs(fraction - 0.5) < 1e-6) return std::nullopt;
  return static_cast<uint64_t>(floor) + (fraction > 0.5 ? 1 : 0);
}

}  // namespace

// std::to_chars rounds exactly as glibc's printf does, where the fast path cannot be sure.
PrintedNumber fixed_number(double value, int precision) {
  if (std::optional<uint64_t> scaled = scaled_exactly(value, precision)) return decimal_of(*scaled, precision);
  PrintedNumber n;
  auto [end, ec] = std::to_chars(n.text, n.text + sizeof n.text, value, std::chars_format::fixed, precision);
  n.size = ec == std::errc() ? static_cast<size_t>(end - n.text) : 0;
  if (n.size == 0) n.text[n.size++] = '0';
  return n;
}
// A value whose tenfold is a
// whole number below 10^15 prints as that number over ten (the y coordinates: multiples of the
// frame height, and halves of them): its exact value is within 1e-16 of it, far inside what
// fifteen digits show.
void append_perl_number(std::string& out, double value) {
  const double tenfold = value * 10;
  if (value >= 0 && tenfold < 1e15 && tenfold == std::floor(tenfold) && !(value == 0 && std::signbit(value))) {
    const auto tenths = static_cast<uint64_t>(tenfold);
    out += (tenths % 10 == 0 ? decimal_of(tenths / 10, 0) : decimal_of(tenths, 1)).view();
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, 15);
  if (ec == std::errc()) {
    out.append(buf, end);
  } else {
    out += '0';
  }
}

}  // namespace vperf::report
