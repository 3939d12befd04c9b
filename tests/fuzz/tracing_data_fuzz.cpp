// libFuzzer target for perf's tracing data (HEADER_TRACING_DATA: tracefs formats, printk
// formats, saved cmdlines) loaded into libtraceevent, and tracepoint samples printed through
// it. Input: a 16-bit little-endian length N, N bytes of one sample's raw data
// (PERF_SAMPLE_RAW), then the tracing data. The tracing data must load or fail with an Error;
// for every event id its formats declare ("ID: N"), the raw data must print (perf script's
// trace field) and each field must read or be refused, never reading past the raw data.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "tracing/tracepoint_decoder.h"

// libtraceevent's tep_parse_event loses a few bytes on some malformed formats (on its error
// path; nothing comes back to free). vperf parses each format once per file, so that leak is
// left to libtraceevent and suppressed here, only under that call.
extern "C" const char* __lsan_default_suppressions() { return "leak:tep_parse_event\n"; }

namespace {

// The ids the formats in the tracing data declare, as "\nID: 316\n" lines.
std::vector<uint64_t> declared_ids(std::string_view text) {
  std::vector<uint64_t> ids;
  constexpr std::string_view kTag = "\nID: ";
  for (size_t at = text.find(kTag); at != std::string_view::npos; at = text.find(kTag, at + 1)) {
    std::string_view rest = text.substr(at + kTag.size());
    if (auto id = vperf::parse_u64(rest.substr(0, rest.find('\n')))) ids.push_back(*id);
  }
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using vperf::tracing::TracepointDecoder;
  if (size < 2) return 0;
  size_t raw_size = std::min<size_t>(data[0] | (data[1] << 8), size - 2);
  // A buffer of its own, so that a read past the raw data is an ASan report.
  const std::vector<uint8_t> raw(data + 2, data + 2 + raw_size);
  std::span<const uint8_t> tracing(data + 2 + raw_size, size - 2 - raw_size);
  vperf::Result<TracepointDecoder> decoder = TracepointDecoder::parse(tracing);
  if (!decoder) return 0;
  decoder->set_kernel_symbol_resolver([](uint64_t address) -> std::optional<vperf::tracing::KernelSymbol> {
    if (address & 1) return std::nullopt;
    return vperf::tracing::KernelSymbol{"fuzz_symbol", address & ~uint64_t{0xff}, address & 2 ? "[fuzz]" : ""};
  });
  std::string_view text(reinterpret_cast<const char*>(tracing.data()), tracing.size());
  std::string out;
  for (uint64_t id : declared_ids(text)) {
    (void)decoder->event_name(id);
    decoder->format(id, raw, 0, out);
    for (const std::string& name : decoder->field_names(id))
      if (std::optional<vperf::tracing::TracepointField> field = decoder->numeric_field(id, name)) (void)field->read(raw);
  }
  return 0;
}
