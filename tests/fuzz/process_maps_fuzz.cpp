// libFuzzer target for what a process says about its own mappings: /proc/PID/maps lines (read
// when record synthesizes MMAP2 records for -p and -a) and JIT symbol maps, /tmp/perf-PID.map
// (written by whatever JIT runs in the profiled process). Every maps line must parse or be
// rejected, and a parsed one must become an MMAP2 record as long as its header says; a JIT map must give a SymbolTable
// that keeps its invariants (sorted, start < end, one symbol per start).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/strings.h"
#include "data/synthesize.h"
#include "symbols/jit_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::string_view line : vperf::split(text, '\n')) {
    std::optional<vperf::data::MappingLine> mapping = vperf::data::parse_maps_line(line);
    if (!mapping) continue;
    if (mapping->end < mapping->start) __builtin_trap();
    const vperf::data::SampleFormat tid_trailer{.sample_type = PERF_SAMPLE_TID, .sample_id_all = true};  // 8 bytes
    vperf::data::RecordBytes record = vperf::data::mmap2_record(1, 1, *mapping, 0, tid_trailer);
    uint16_t record_size = 0;
    std::memcpy(&record_size, record.data() + 6, sizeof record_size);  // perf_event_header.size
    if (record_size != record.size()) __builtin_trap();
  }

  vperf::symbols::SymbolTable jit = vperf::symbols::parse_jit_map(text);
  const vperf::symbols::Symbol* previous = nullptr;
  for (const vperf::symbols::Symbol& symbol : jit.symbols()) {
    if (symbol.end <= symbol.start || (previous && previous->start >= symbol.start)) __builtin_trap();
    if (jit.find(symbol.start) == nullptr) __builtin_trap();
    previous = &symbol;
  }
  return 0;
}
