// libFuzzer target for the xz-compressed perfmon tables (pmc/xz_text.h, as load_perfmon_file
// reads a FILE.json.xz): any bytes must give text or an Error, within the output bound, never a
// crash; text that comes out goes on to the perfmon JSON parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pmc/perfmon_json.h"
#include "pmc/xz_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxText = 4 << 20;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  vperf::Result<std::string> text = vperf::events::decompress_xz(bytes, kMaxText, "fuzz.json.xz");
  if (!text) return 0;
  if (text->size() > kMaxText) __builtin_trap();  // the bound is the decoder's promise
  (void)vperf::events::parse_perfmon_json(*text, "fuzz.json.xz");
  return 0;
}
