// libFuzzer target for vperf's kernel image cache file (symbols/kernel_image_cache.h): a file
// on disk that anything may have damaged. Any bytes must decode or fail with an Error; a table
// that decodes must find every symbol at its own start, and encode back to a file that decodes
// to the same table.
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
  for (const vperf::symbols::Symbol& symbol : table.symbols())
    if (table.find(symbol.start) == nullptr) __builtin_trap();
  std::string again_boot;
  auto again = vperf::symbols::decode_kernel_image(vperf::symbols::encode_kernel_image(*image, boot), again_boot);
  if (!again || again->kernel().size() != table.size() || again->markers() != image->markers()) __builtin_trap();
  return 0;
}
