#pragma once
// The one loader of a recording's tracing data, which report, script and kvm stat share: the
// HEADER_TRACING_DATA feature section of a file, then (a pipe) every HEADER_TRACING_DATA record
// as the reader reaches it, each parsed into a TracepointDecoder that replaces the one before.
// Tracing data that does not parse is a warning and leaves the previous decoder in place.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "data/perf_data_reader.h"
#include "data/perf_record.h"
#include "tracing/tracepoint_decoder.h"

namespace vperf::tracing {

class RecordedTracingData {
 public:
  // Receives "tracing data ignored: WHY" when tracing data does not parse, when it happens.
  using WarningSink = std::function<void(const std::string& warning)>;
  explicit RecordedTracingData(WarningSink warnings) : warnings_(std::move(warnings)) {}

  // The file's tracing data (its feature section; a pipe has none). True when it was loaded.
  bool load_file(const data::PerfDataReader& reader);
  // The tracing data of `record` when it is a HEADER_TRACING_DATA record. True when it was
  // loaded: what callers derived from the previous decoder (event names, fields) is stale.
  bool load_record(const data::Record& record);

  // Kept for every decoder loaded from now on: addresses the print fmts show as symbols.
  void set_kernel_symbol_resolver(KernelSymbolResolver resolver);

  // The decoder of the tracing data loaded last, or nullptr when none was.
  const TracepointDecoder* decoder() const { return decoder_ ? &*decoder_ : nullptr; }

 private:
  bool load(std::span<const uint8_t> bytes);

  WarningSink warnings_;
  KernelSymbolResolver resolver_;
  std::optional<TracepointDecoder> decoder_;
};

}  // namespace vperf::tracing
