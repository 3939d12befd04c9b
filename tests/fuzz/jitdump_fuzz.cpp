// libFuzzer target for perf's jitdump files (symbols/jitdump.h), written by whatever JIT runs in
// a profiled process and read by vperf inject --jit: any bytes must parse or be an Error; a
// parsed dump's code loads hold no more code than the input had, and a marker check of the
// input as a path never crashes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "symbols/jitdump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vperf::Result<vperf::symbols::Jitdump> dump = vperf::symbols::parse_jitdump({data, size});
  if (dump) {
    size_t code = 0;
    for (const vperf::symbols::Jitdump::Entry& entry : dump->entries) code += entry.load.code.size() + entry.load.name.size();
    if (code > size) __builtin_trap();
  }
  (void)vperf::symbols::is_jitdump_marker(std::string_view(reinterpret_cast<const char*>(data), size), 0);
  return 0;
}
