// libFuzzer target for USDT notes (symbols/sdt_markers.h): a binary's .note.stapsdt descriptor
// and its argument words come from whoever built the binary. The first byte picks the width
// (64- or 32-bit file); the rest is one descriptor. Any bytes must parse or fail with an Error,
// and so must the arguments of whatever parses.
#include <cstddef>
#include <cstdint>
#include <span>

#include "symbols/sdt_markers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto marker = vperf::symbols::parse_sdt_descriptor(std::span(data + 1, size - 1), (data[0] & 1) != 0);
  if (!marker) return 0;
  auto arguments = vperf::symbols::parse_sdt_arguments(marker->arguments);
  if (arguments)
    for (const vperf::symbols::SdtArgument& a : *arguments)
      if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8) __builtin_trap();
  (void)vperf::symbols::sdt_event_name(*marker);
  return 0;
}
