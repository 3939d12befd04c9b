// libFuzzer target for the reader of Linux perf's arm64 event tables and of arm64 CPU
// identification: any bytes (xz-compressed as the bundle keeps them, or plain) must give events,
// mapfile rows and MIDRs, or an Error, never a crash; every event accepted must encode.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/arm_midr.h"
#include "pmc/perf_arm64_events.h"
#include "pmc/perfmon_encoding.h"
#include "pmc/xz_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (vperf::events::has_xz_magic(text)) {
    vperf::Result<std::string> plain = vperf::events::decompress_xz(text, 1 << 20, "fuzz.json.xz");
    if (!plain) return 0;
    text = std::move(plain).value();
  }
  using vperf::events::Arm64StandardEvents;
  using vperf::events::PerfmonEvent;
  using vperf::events::PerfmonFile;
  size_t skipped = 0;
  // As a standard events file, then as a core's file resolved against those standard events.
  Arm64StandardEvents standard;
  vperf::Result<PerfmonFile> root = vperf::events::parse_perf_arm64_json(text, "fuzz.json", nullptr, skipped);
  if (root)
    for (const PerfmonEvent& e : root->events) standard.emplace(e.name, e);
  vperf::Result<PerfmonFile> core = vperf::events::parse_perf_arm64_json(text, "fuzz.json", &standard, skipped);
  if (core)
    for (const PerfmonEvent& e : core->events) vperf::events::encode_perfmon_event(e, vperf::events::CoreLayout::Arm);
  // The same bytes as a mapfile.csv and as /proc/cpuinfo.
  auto rows = vperf::events::parse_arm64_mapfile(text, "fuzz.csv");
  if (rows) vperf::events::arm64_row_for_midr(*rows, 0x413fd0c1);
  vperf::parse_cpuinfo_midrs(text);
  return 0;
}
