// libFuzzer target for the CPUID dump parser and the decoders behind it: any text must either
// parse or fail with an Error, and whatever parses must decode without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/cpuid_decode.h"
#include "host/cpuid_dump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto dump = vperf::host::parse_cpuid_dump(text, "fuzz");
  if (!dump) return 0;
  for (size_t i = 0; i < dump->cpus.size(); ++i) {
    vperf::host::DumpCpuidSource source(*dump, i);
    vperf::host::CpuidReport report = vperf::host::decode_cpuid(source);
    (void)report;
  }
  return 0;
}
