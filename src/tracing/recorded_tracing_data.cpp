#include "tracing/recorded_tracing_data.h"

#include <variant>

#include "data/perf_data_format.h"

namespace vperf::tracing {

bool RecordedTracingData::load_file(const data::PerfDataReader& reader) {
  bool loaded = false;
  for (const data::RawFeature& feature : reader.features().other)
    if (feature.feature == data::kFeatTracingData) loaded = load(feature.bytes) || loaded;
  return loaded;
}

bool RecordedTracingData::load_record(const data::Record& record) {
  const auto* tracing = std::get_if<data::TracingDataRecord>(&record.body);
  return tracing && load(tracing->data);
}

void RecordedTracingData::set_kernel_symbol_resolver(KernelSymbolResolver resolver) {
  resolver_ = std::move(resolver);
  if (decoder_) decoder_->set_kernel_symbol_resolver(resolver_);
}

bool RecordedTracingData::load(std::span<const uint8_t> bytes) {
  Result<TracepointDecoder> decoder = TracepointDecoder::parse(bytes);
  if (!decoder) {
    warnings_("tracing data ignored: " + decoder.error().describe());
    return false;
  }
  decoder_.emplace(std::move(decoder).value());
  if (resolver_) decoder_->set_kernel_symbol_resolver(resolver_);
  return true;
}

}  // namespace vperf::tracing
