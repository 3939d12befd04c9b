// libFuzzer target for vperf's kernel image cache file (symbols/kernel_image_cache.h): a file
// on disk that anything may have damaged. Any bytes must decode or fail with an Error. A table
// that decodes lists its symbols in order; a lookup returns a symbol containing the address or
// nothing; where no entry is damaged (every entry listed) every symbol is found at its own
// start; and the listed symbols encode back to a file that decodes to the same symbols.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "symbols/kernel_image_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string boot;
  auto image = vperf::symbols::decode_kernel_image(std::span(data, size), boot);
  if (!image) return 0;
  const vperf::symbols::SymbolTable& table = image->kernel();
  const auto symbols = table.symbols();
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (i > 0 && symbols[i - 1].start >= symbols[i].start) __builtin_trap();
    for (uint64_t addr : {symbols[i].start, symbols[i].end - 1, symbols[i].end}) {
      const vperf::symbols::Symbol* found = table.find(addr);
      if (found != nullptr && (addr < found->start || addr >= found->end)) __builtin_trap();
    }
    if (symbols.size() == table.size() && table.find(symbols[i].start) == nullptr) __builtin_trap();
  }
  std::string again_boot;
  auto again = vperf::symbols::decode_kernel_image(vperf::symbols::encode_kernel_image(*image, boot), again_boot);
  if (!again || again->kernel().size() != symbols.size() || again->markers() != image->markers()) __builtin_trap();
  const auto again_symbols = again->kernel().symbols();
  for (size_t i = 0; i < symbols.size(); ++i)
    if (again_symbols[i].start != symbols[i].start || again_symbols[i].end != symbols[i].end ||
        again_symbols[i].name != symbols[i].name || again_symbols[i].binding != symbols[i].binding)
      __builtin_trap();
  return 0;
}
