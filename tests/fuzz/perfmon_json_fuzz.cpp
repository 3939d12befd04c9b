// libFuzzer target for the perfmon JSON importer: any bytes must give an event list or an
// Error, never a crash; every event it accepts must encode.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pmc/perfmon_encoding.h"
#include "pmc/perfmon_json.h"
#include "pmc/perfmon_mapfile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  vperf::Result<vperf::events::PerfmonFile> file = vperf::events::parse_perfmon_json(text, "fuzz.json");
  if (file)
    for (const vperf::events::PerfmonEvent& e : file->events) {
      vperf::events::encode_perfmon_event(e, vperf::events::CoreLayout::Intel);
      vperf::events::encode_perfmon_event(e, vperf::events::CoreLayout::Amd);
    }
  // The same bytes as a mapfile.csv.
  vperf::Result<std::vector<vperf::events::MapfileEntry>> map = vperf::events::parse_mapfile(text, "fuzz.csv");
  if (map)
    for (const vperf::events::MapfileEntry& m : *map)
      vperf::events::mapfile_key_matches(m.family_model, vperf::events::CpuSignature{"GenuineIntel", 6, 0x55, 4});
  return 0;
}
