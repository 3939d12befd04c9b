// libFuzzer target for PerfDataReader over arbitrary bytes (file or pipe format): opening either
// fails with an Error or yields attrs and features; reading delivers records and stops at the
// first that does not fit, never reading out of bounds. Every record delivered is also rebuilt
// (build_record), which must not crash either.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/perf_data_reader.h"
#include "data/perf_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reader = vperf::data::PerfDataReader::from_bytes(std::vector<uint8_t>(data, data + size));
  if (!reader) return 0;
  (void)reader->skipped_features();
  for (bool ordered : {true, false}) {
    auto stats = reader.value().read(
        [](const vperf::data::RecordView& v) {
          vperf::data::SampleFormat format;
          if (v.attr) format = vperf::data::SampleFormat::from_attr(v.attr->attr);
          auto rebuilt = vperf::data::build_record(v.record, v.attr ? &format : nullptr);
          (void)rebuilt;
          return true;
        },
        vperf::data::ReadOptions{.ordered = ordered});
    (void)stats;
  }
  return 0;
}
